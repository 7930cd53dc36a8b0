"""VTG (generate/vtg.py and its steps) with a scripted model and the keyword judge: the memory's updates, both
verifiers, the simplifier, the evidence finder's T rounds, the ablations, what goes wrong (counted), the trace."""

from __future__ import annotations

import pytest

from vericite.errors import VericiteError
from vericite.fakes.judges import KeywordJudge
from vericite.generate import vtg_steps as S
from vericite.generate.vtg import VtgMethod, build, with_citations
from vericite.generate.vtg_memory import Memory
from vericite.registry import BuildContext
from vericite.types import Judgement, Passage, Sample

from tests.support.vtg import DOCS, QUESTION, scripted

PARIS = "Paris is the capital of France."
ROME = "Rome is the capital of Italy."


def method(backend, judge=None, **opts) -> VtgMethod:
    opts.setdefault("k", 2)
    opts.setdefault("docs_per_query", 1)
    return build("", ctx=BuildContext(), backend=backend, judge=judge or KeywordJudge(), **opts)


def sample(docs=DOCS) -> Sample:
    return Sample("q1", QUESTION, passages=list(docs))


# --------------------------------------------------------------------------- memory


def test_memory_long_short_and_one_catalogue():
    m = Memory(DOCS[:2])
    assert m.view() == [0, 1] and m.short == []
    assert m.replace_short([DOCS[2], DOCS[0]]) == [2, 0]
    assert m.view() == [0, 1, 2]  # D_L, then what of D_S is not in it
    assert m.from_view([3, 1, 9]) == [2, 0]  # out of range left out
    m.remember([2])
    assert m.long == [0, 1, 2]
    m.replace_short([DOCS[3]])
    assert m.short == [3] and m.view() == [0, 1, 2, 3]
    m.replace_short([])
    assert m.view() == [0, 1, 2] and [d.id for d in m.catalogue()] == ["d1", "d2", "d3", "d4"]
    assert Memory([DOCS[0], Passage("other-id", DOCS[0].text, DOCS[0].title)]).view() == [0]  # same title and text: one


# --------------------------------------------------------------------------- reading completions


def test_read_sentence():
    assert S.read_sentence(" Paris is big. Rome too.", []) == ("Paris is big.", "")
    assert S.read_sentence("Paris is big [1]. Rome too.", []) == ("Paris is big.", "")
    assert S.read_sentence("Paris is big. Rome is old.", ["Paris is big."]) == ("Rome is old.", "")  # restarted answer
    assert S.read_sentence("Paris is big.", ["Paris is big."]) == (None, "repeated")
    assert S.read_sentence("End.", ["x"]) == (None, "end-marker")
    assert S.read_sentence("  ", ["x"]) == (None, "empty")
    assert S.read_sentence("Answer: Paris.", []) == ("Paris.", "")
    assert S.read_sentence("The answer so far already answers the question completely. End.", ["x"]) == (None, "prompt-echo")
    assert S.read_sentence("Paris is big. Rome is old.", []) == ("Paris is big.", "")  # no echo: kept


def test_read_citations_and_queries():
    assert S.read_citations("s [2][2][7][1][3][4]", 5, 3) == ([2, 1, 3], 1)
    assert S.read_citations("no citation", 5, 3) == ([], 0)
    assert S.read_queries("1. What is A?\n2) Where is B?\n- Who is C?\n\nx", 2) == ["What is A?", "Where is B?"]
    assert S.read_queries("Q1: When was it built?\nQuestion 2: Who built it?", 3) == ["When was it built?", "Who built it?"]
    assert S.read_queries("", 2) == []


def test_with_citations():
    assert with_citations("It is.", [1, 3]) == "It is [1][3]."
    assert with_citations("It is", [2]) == "It is [2]"
    assert with_citations("It is.", []) == "It is."


# --------------------------------------------------------------------------- Algorithm 1


def test_memory_verifier_simplifier_and_evidence_finder():
    # Paris: cited wrongly ([2]); the memory (d1, d2) entails it; the simplifier keeps d1 only.
    # Rome: in neither D_L document; the evidence finder brings d3 into D_S, the sentence is written again and cites it.
    backend = scripted([PARIS, ROME], cites={"Paris": "[2]", "Rome": "title:Rome"})
    r = method(backend).answer(sample())
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    assert [p["id"] for p in r["passages"]] == ["d1", "d2", "d3", "d4"]  # every document that entered the memory
    s1, s2, end = r["vtg"]["sentences"]
    (t,) = s1["trials"]
    assert t["outcome"] == "verified-memory" and t["generation_verifier"]["entailed"] is False
    assert t["memory_verifier"]["mode"] == "concatenated" and t["memory_verifier"]["probability"] == 0.9
    assert t["simplifier"]["removed"] == [2] and t["citations"] == [1]
    assert t["generated_citations"] == [2]  # what the generation verifier rejected, kept in the trace
    assert [x["outcome"] for x in s2["trials"]] == ["retry", "verified-citations"]
    assert s2["trials"][0]["queries"] == ["What is the capital of Italy?", "Where is Rome?"]
    assert s2["trials"][0]["retrieved"] == {"What is the capital of Italy?": [3], "Where is Rome?": [4]}
    assert s2["trials"][1]["memory"]["short"] == 2 and s2["verified"]
    assert end["trials"][0]["outcome"] == "end" and r["vtg"]["end"] == "end-marker"
    assert r["vtg"]["evidence_rounds"] == 1
    assert r["answer"]["sentences"][1]["citations"][0]["status"] == "ok"
    assert r["vtg"]["components"]["sentence"]["calls"] == 4 and r["vtg"]["components"]["queries"]["calls"] == 1
    assert r["vtg"]["judge"]["calls"] >= 4


def test_cited_documents_join_long_term_memory():
    backend = scripted([ROME, "The capital of Italy is Rome."], cites={"Rome": "title:Rome", "The": "title:Rome"})
    m = method(backend, repeat_overlap=1.0)  # the second restates the first: kept only by the exact repeat rule
    r = m.answer(sample())
    second = r["vtg"]["sentences"][1]["trials"][0]
    assert second["memory"]["long"] == 3  # d3, cited by the first sentence, is in D_L now
    assert second["outcome"] == "verified-citations" and second["queries"] == []


def test_t_rounds_then_kept_unverified():
    backend = scripted(["Mars is red."], cites={"Mars": "[1]"})
    r = method(backend, trials=2).answer(sample())
    s = r["vtg"]["sentences"][0]
    assert [t["outcome"] for t in s["trials"]] == ["retry", "retry", "unverified"]
    assert not s["verified"] and s["kept"] == "Mars is red [1]."
    assert r["vtg"]["problems"]["unverified_sentences"] == 1
    assert r["vtg"]["evidence_rounds"] == 2
    r0 = method(scripted(["Mars is red."]), trials=0).answer(sample())
    assert [t["outcome"] for t in r0["vtg"]["sentences"][0]["trials"]] == ["unverified"]


def test_ablations():
    backend = scripted([PARIS, ROME], cites={"Paris": "[2]", "Rome": "title:Rome"})
    no_verifier = method(backend, verifier=False).answer(sample())
    assert no_verifier["output"] == "Paris is the capital of France [2]. Rome is the capital of Italy."  # no Rome document: none cited
    assert no_verifier["vtg"]["judge"]["calls"] == 0
    no_simplifier = method(backend, simplifier=False).answer(sample())
    assert no_simplifier["output"].startswith("Paris is the capital of France [1][2].")
    no_qg = method(backend, query_generation=False).answer(sample())
    assert no_qg["vtg"]["sentences"][1]["trials"][0]["queries"] == [ROME]
    assert no_qg["vtg"]["components"].get("queries", {}).get("calls", 0) == 0


def test_memory_verifier_per_document_above_the_word_budget():
    backend = scripted([PARIS], cites={"Paris": "[2]"})
    r = method(backend, memory_words=5).answer(sample())
    mv = r["vtg"]["sentences"][0]["trials"][0]["memory_verifier"]
    assert mv["mode"] == "per-document" and mv["entailed"] and mv["entailing"] == 1
    assert r["output"].startswith("Paris is the capital of France [1].")


class Unreadable:
    id = "unreadable@1"
    labels = ("supported", "not_supported")

    def judge(self, pairs):
        return [Judgement(self.id, p.claim, p.evidence, None, None, status="unparseable") for p in pairs]


def test_unreadable_judgements_are_counted_never_a_pass():
    r = method(scripted([PARIS]), judge=Unreadable(), trials=1).answer(sample())
    s = r["vtg"]["sentences"][0]
    assert not s["verified"] and s["trials"][-1]["outcome"] == "unverified"
    assert r["vtg"]["problems"]["unreadable_judgements"] >= 2


def test_bounded_a_model_that_never_ends_never_cites_or_cites_out_of_range():
    n = iter(range(1000))
    from vericite.models.fake import FakeBackend, last_user_message

    def reply(messages, params):
        p = last_user_message(messages)
        if "Sentence with citation:" in p:
            return "nothing [9]"
        if "Generated questions:" in p:
            return "?"
        return f"Paris is the capital of France number {next(n)}."

    # each sentence differs from the last in one word of five: a near repeat at 0.8, so the exact rule alone here
    r = method(FakeBackend("loop", replies=reply), max_sentences=3, trials=1, repeat_overlap=1.0).answer(sample())
    assert len([s for s in r["vtg"]["sentences"] if s["kept"]]) == 3
    p = r["vtg"]["problems"]
    assert p["sentence_cap"] == 1 and p["citations_out_of_range"] >= 3 and p["no_citation"] >= 3 and p["queries_unreadable"] >= 3
    assert r["vtg"]["end"] == "sentence-cap"


def test_retrieval_that_finds_nothing_is_counted():
    r = method(scripted(["Mars is red."]), trials=1).answer(sample(DOCS[:2]))  # the pool is D_L itself
    assert r["vtg"]["problems"]["retrieval_empty"] == 1


def test_empty_answer_and_options():
    r = method(scripted([])).answer(sample())
    assert r["output"] == "" and r["vtg"]["end"] == "end-marker"
    with pytest.raises(VericiteError, match="method vtg: invalid"):
        method(scripted([]), trials=-1)
    with pytest.raises(VericiteError, match="must carry documents"):
        method(scripted([])).check_samples([Sample("x", "q?")], "d")


def test_manifest_and_summary():
    m = method(scripted([PARIS], cites={"Paris": "[1]"}))
    rec = m.answer(sample())
    man = m.manifest()
    assert man["method"] == "vtg@1" and man["prompts"] == {"sentence": "vtg-sentence@2", "cite": "vtg-cite@1", "queries": "vtg-queries@1"}
    assert man["trials"] == 3 and man["judge"] == "fake@1" and "1500 words" in man["memory_rule"]
    s = m.summarise([rec])
    assert s["vtg"]["sentences"] == 1 and s["vtg"]["verified_sentences"] == 1
    assert set(rec["vtg"]["seconds"]) == {"sentence", "cite", "queries", "verify", "retrieval"}


# --------------------------------------------------------------------------- a memory of triples

from vericite.types import Triple  # noqa: E402

TRIPLES = [
    Triple("Q1", "capital of", "France", "Paris"),
    Triple("Q2", "capital of", "Germany", "Berlin"),
]
ITALY = Triple("Q3", "capital of", "Italy", "Rome")


class TripleRetriever:
    """Every triple whose entity label is in the query (KaLMA's retrieval, in miniature)."""

    def __init__(self, triples):
        self.triples = triples

    def retrieve(self, query):
        class R:
            pass

        r = R()
        r.triples = [t for t in self.triples if t.subject_label.lower() in query.lower()]
        r.to_dict = lambda: {"n_evidence": len(r.triples)}
        r.mentions = []
        return r


def test_memory_of_triples_cites_as_kalma_and_na_when_unverified():
    # the keyword judge reads a triple as "Title: Paris\ncapital of: France": the sentences use its words
    backend = scripted(["Paris, capital of France.", "Rome, capital of Italy.", "Mars is red."],
                       cites={"Paris": "[1]", "Rome": "title:Rome", "Mars": "[1]"},
                       queries="1. What is Rome the capital of?\n2. Is Mars red?")  # fmt: skip
    m = VtgMethod(backend, method(backend).opts.model_copy(update={"trials": 1}), judge=KeywordJudge(), kg_retriever=TripleRetriever([*TRIPLES, ITALY]))
    s = Sample("k1", "Paris and Berlin?", knowledge=TRIPLES)
    r = m.answer(s)
    assert r["output"] == "Paris, capital of France [Q1, capital of: France]. Rome, capital of Italy [Q3, capital of: Italy]. Mars is red [NA]."
    assert [t["subject"] for t in r["knowledge"]] == ["Q1", "Q2", "Q3"] and r["na_count"] == 1
    assert r["citation_status"] == {"ok": 2}
    assert r["vtg"]["sentences"][1]["trials"][0]["retrieved"] == {"What is Rome the capital of?": [3], "Is Mars red?": []}
    given = method(backend, trials=0).answer(s)  # no store: the question's own triples, searched in place
    assert given["output"].startswith("Paris, capital of France [Q1, capital of: France].") and "[NA]" in given["output"]


def test_kg_k_keeps_the_top_triples_in_long_term_memory_and_leaves_the_rest_to_the_evidence_finder():
    """``kg_k`` (audit12 GAP 2): D_L = the top kg_k of KaLMA's retrieval; the rest is searched by the evidence
    finder before the store. Without it (the default), D_L is the whole retrieval, as the recorded runs had it."""
    backend = scripted(["Berlin, capital of Germany."], cites={"Berlin": "title:Berlin"}, queries="1. What is the capital of Germany?")
    s = Sample("k1", "Paris and Berlin?", knowledge=TRIPLES)

    def vtg(**opts):
        return VtgMethod(backend, method(backend).opts.model_copy(update={"trials": 1, **opts}), judge=KeywordJudge(), kg_retriever=TripleRetriever(TRIPLES))

    whole = vtg().answer(s)
    assert whole["output"] == "Berlin, capital of Germany [Q2, capital of: Germany]."
    assert whole["vtg"]["sentences"][0]["trials"][0]["memory"]["long"] == 2 and len(whole["vtg"]["sentences"][0]["trials"]) == 1
    top = vtg(kg_k=1).answer(s)  # D_L = Paris only: Berlin's triple comes from the rest, by the evidence finder
    trials = top["vtg"]["sentences"][0]["trials"]
    assert trials[0]["memory"]["long"] == 1 and trials[0]["outcome"] == "retry"
    assert trials[0]["retrieved"] == {"What is the capital of Germany?": [2]}  # the store alone finds nothing for it
    assert top["output"] == "Berlin, capital of Germany [Q2, capital of: Germany]."
    assert vtg(kg_k=1).manifest()["kg_k"] == 1 and "kg_k" not in vtg().manifest()
    assert "top 1" in vtg(kg_k=1).manifest()["memory"] and vtg().manifest()["memory"] == "triples (KaLMA's retrieval over the store)"
    with pytest.raises(VericiteError, match="kg_k"):
        method(backend, kg_k=0)


def test_kg_k_is_recorded_only_when_set():
    from vericite.runs.config import GenerateConfig

    plain = GenerateConfig(dataset="d", method="vtg", method_args={"store": "kg", "k": 3})
    assert "kg_k" not in plain.record() and plain.record()["k"] == 3  # the records of the runs before it, unchanged
    assert plain.record_defaults()["kg_k"] is None  # a resumed run without it is the same run
    assert GenerateConfig(dataset="d", method="vtg", method_args={"store": "kg", "kg_k": 4}).record()["kg_k"] == 4


def test_the_first_sentence_is_asked_without_the_end_marker():
    from vericite.generate.prompts import vtg as P

    first = P.sentence_messages("Q?", DOCS[:1], "")[-1]["content"]
    later = P.sentence_messages("Q?", DOCS[:1], "It is.")[-1]["content"]
    assert "End." not in first and "first sentence" in first and first.endswith("Answer:")
    assert "End." in later and later.endswith("Answer: It is.")


def test_sentence_prompt_3_continues_the_answer_and_end_is_offered_only_when_asked():
    from vericite.generate.prompts import vtg as P

    first = P.sentence_messages("Q?", DOCS[:1], "", prompt=P.CONTINUE_ID)[-1]["content"]
    later = P.sentence_messages("Q?", DOCS[:1], "It is.", prompt=P.CONTINUE_ID)[-1]["content"]
    closed = P.sentence_messages("Q?", DOCS[:1], "It is.", prompt=P.CONTINUE_ID, offer_end=False)[-1]["content"]
    assert first.endswith("Write the answer (no citations).\n\nAnswer:") and "End." not in first
    assert "\nAnswer so far: It is.\n" in later and "Continue the answer" in later and later.endswith('write only "End."')
    assert "End." not in closed and "Continue the answer" in closed
    at_2 = P.sentence_messages("Q?", DOCS[:1], "It is.", offer_end=False)[-1]["content"]
    assert "End." not in at_2 and at_2.endswith("Answer: It is.")
    assert P.sentence_messages("Q?", DOCS[:1], "It is.", prompt=P.SENTENCE_ID) == P.sentence_messages("Q?", DOCS[:1], "It is.")
    with pytest.raises(ValueError, match="unknown sentence prompt"):
        P.sentence_messages("Q?", DOCS[:1], "", prompt="vtg-sentence@9")


THREE = [PARIS, ROME, "Berlin is the capital of Germany."]


def test_a_model_that_ends_when_it_may_writes_min_sentences():
    """A model that takes ``End.`` whenever it is offered (the embedded Qwen on ELI5) writes one sentence; with
    ``min_sentences=3`` End. is not offered before the third, and the answer has three."""
    eager = scripted(THREE, cites={"Rome": "title:Rome", "Berlin": "title:Berlin"}, eager_end=True)
    one = method(eager, trials=0).answer(sample())
    assert one["output"] == f"{PARIS[:-1]} [1]." and one["vtg"]["end"] == "end-marker"
    three = method(eager, trials=0, min_sentences=3, k=4).answer(sample())
    assert [s["kept"].split(" [")[0] for s in three["vtg"]["sentences"][:3]] == [s[:-1] for s in THREE]


def test_sentence_prompt_3_keeps_the_first_new_sentence_of_the_rest_and_records_its_id():
    rest = scripted(THREE, cites={"Rome": "title:Rome", "Berlin": "title:Berlin"}, rest=True)
    m = method(rest, trials=0, k=4, sentence_prompt="vtg-sentence@3")
    r = m.answer(sample())
    assert [s["trials"][0]["sentence"] for s in r["vtg"]["sentences"][:3]] == THREE
    assert r["vtg"]["sentences"][0]["trials"][0]["raw"] == " ".join(THREE)  # the whole rest, one sentence kept
    assert r["prompt"] == "vtg-sentence@3" and r["prompts"]["sentence"] == "vtg-sentence@3"
    assert m.manifest()["prompt"] == "vtg-sentence@3" and m.manifest()["min_sentences"] == 1
    with pytest.raises(VericiteError, match="sentence_prompt"):
        method(rest, sentence_prompt="vtg-sentence@1")


def test_the_verifiers_judge_tokens_count_in_the_verify_component_and_the_answers_usage(tmp_path):
    """An LLM judge's next-token calls report their tokens (the fake's: its prompt's words and one completion
    token): the trace's ``verify`` component has them, and the run loop's usage of the answer is the sum of the
    components, nothing left uncounted."""
    import json

    from vericite.judges.llm import LLMJudge
    from vericite.models.fake import FakeBackend
    from vericite.models.usage import UsageMeter, metered
    from vericite.runs.loop import run_method

    meter = UsageMeter()
    judge_model = FakeBackend("judge", default="Yes")
    m = method(metered(scripted([PARIS], cites={"Paris": "[1]"}), meter), judge=LLMJudge(metered(judge_model, meter)))
    run_method(m, [sample()], tmp_path / "o", config={}, meter=meter, progress=False)
    r = json.loads((tmp_path / "o" / "samples.jsonl").read_text().splitlines()[0])
    n = judge_model.calls["next_token_logprobs"]
    words = sum(len(str(x["content"]).split()) for p in judge_model.prompts for x in p)
    assert n >= 1 and r["vtg"]["components"]["verify"] == {"prompt_tokens": words, "completion_tokens": n, "calls": n}
    total = {k: sum(c.get(k, 0) for c in r["vtg"]["components"].values()) for k in ("prompt_tokens", "completion_tokens", "calls")}
    assert r["usage"] == total and "uncounted_calls" not in r["usage"]
    summary = json.loads((tmp_path / "o" / "manifest.json").read_text())["summary"]
    assert summary["vtg"]["components"]["verify"] == r["vtg"]["components"]["verify"]
    assert summary["tokens"] == {"prompt": total["prompt_tokens"], "completion": total["completion_tokens"]}


def test_a_memory_of_the_questions_triples_goes_whole_to_the_simplifier_one_judge_call_per_triple():
    """What runs/vtg-kg-removal showed (kgsimp12): with no store, D_L is every triple the question carries (k is not
    applied to triples); short triples keep it under memory_words, so the memory verifier judges it as one premise
    and hands all n triples to the simplifier as the sentence's citations (the paper's rule, not the citation
    generator's at most three), which drops them one judge call each: n calls, sequential. Batched, the same
    removals in n - 1 calls but about n²/2 pairs judged, each a model call for an LLM judge."""
    n = 30
    triples = [Triple("Q1", "capital of", "France", "Paris")] + [Triple(f"Q{i}", "population", str(1000 + i), f"Town{i}") for i in range(2, n + 1)]
    backend = scripted(["Paris, capital of France."], cites={"Paris,": "[7]"})  # a wrong citation: the memory verifies
    for batch in (False, True):
        r = method(backend, k=5, simplifier_batch=batch).answer(Sample("k1", "Paris?", knowledge=triples))
        (t,) = r["vtg"]["sentences"][0]["trials"]
        assert t["generated_citations"] == [7] and t["outcome"] == "verified-memory"
        assert t["memory_verifier"]["mode"] == "concatenated" and t["memory_verifier"]["docs"] == n
        assert len(t["simplifier"]["checked"]) == n and len(t["simplifier"]["removed"]) == n - 1
        assert t["citations"] == [1] and r["output"] == "Paris, capital of France [Q1, capital of: France]."
        assert t["simplifier"]["calls"] == (n - 1 if batch else n)
        assert r["vtg"]["judge"]["calls"] == 2 + (n + sum(range(n - 1)) if batch else n)  # pairs judged in the answer


def test_knowledge_retrieve_without_a_store_is_refused_before_a_model_or_judge_is_built():
    def no_load(name):
        raise AssertionError(f"loaded {name}")

    with pytest.raises(VericiteError, match="knowledge=retrieve needs a graph"):
        build("", ctx=BuildContext(load_model=no_load), knowledge="retrieve")
