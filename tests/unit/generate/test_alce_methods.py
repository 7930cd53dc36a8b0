"""ALCE's baselines as methods, on the fake backend: what each sends the model, which answer it keeps, and what
its record holds."""

from __future__ import annotations

import json

import pytest

from vericite import registry
from vericite.errors import VericiteError
from vericite.models.cache import CachedBackend
from vericite.models.fake import FakeBackend, last_user_message
from vericite.protocols import Method, SampleChecking
from vericite.registry import BuildContext, create
from vericite.types import Passage, RetrievalResult, Sample

from .test_alce_prompts import TINY

CTX = BuildContext(cache=False, threads=1)
PARIS = Passage("d1", "Paris is the capital of France.", "France")
BERLIN = Passage("d2", "Berlin is the capital of Germany.", "Germany")
ROME = Passage("d3", "Rome is the capital of Italy.", "Italy")


def sample(passages=(PARIS, BERLIN, ROME), **kw) -> Sample:
    return Sample(kw.pop("id", "s1"), kw.pop("question", "Which cities are capitals?"), passages=list(passages), claims=["c"], **kw)


@pytest.fixture(autouse=True)
def prompt_files(tmp_path_factory, monkeypatch):
    """ALCE's prompt files stand in by the tiny one, each saying which it is: no test here reads the shared data."""
    root = tmp_path_factory.mktemp("data")
    folder = root / "alce" / "prompts"
    folder.mkdir(parents=True)
    for task in ("asqa", "qampari", "eli5"):
        for kind in ("default", "sum_or_ext", "closedbook"):
            (folder / f"{task}_{kind}.json").write_text(json.dumps({**TINY, "instruction": f"{task}_{kind}"}), encoding="utf-8")
    monkeypatch.setenv("VERICITE_DATA", str(root))


@pytest.fixture
def tiny_prompt(tmp_path):
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return str(path)


def method(name: str, backend, **options):
    return create("methods", f"{name}:fake", CTX, backend=backend, **options)


def test_every_baseline_is_a_registered_checking_method():
    for name in ("vanilla", "summ", "snippet", "rerank", "closedbook"):
        m = method(name, FakeBackend(default="x"))
        version = 2 if name in ("summ", "snippet") else 1  # @2: with retrieval they scan max(ndoc, shorter_pool)
        assert isinstance(m, Method) and isinstance(m, SampleChecking) and m.id == f"{name}@{version}"


def test_vanilla_sends_alces_prompt_and_records_the_documents_used(tiny_prompt):
    fake = FakeBackend(default="Paris is a capital [1].<|im_end|>  \n")
    m = method("vanilla", fake, prompt=tiny_prompt, shot=2, ndoc=2, seed=0)
    docs = [Passage("a", "ta", "Ta"), Passage("b", "tb", "Tb"), Passage("c", "tc", "Tc")]
    record = m.answer(sample(docs, question="Who?"))
    system, user = fake.prompts[0]
    assert system["role"] == "system" and "proper citations" in system["content"]
    assert user["content"] == (  # the text ALCE builds (see test_alce_prompts: demos 2 then 1 for seed 0)
        "Instruction: Answer with citations.\n\nQuestion: Q2?\n\n"
        "Document [1](Title: T2a): t2a\nDocument [2](Title: T2b): t2b\n\nAnswer:A2 [2]."
        "\n\n\n"
        "Instruction: Answer with citations.\n\nQuestion: Q1?\n\n"
        "Document [1](Title: T1a): t1a\n\nAnswer:\nCheck: [1]\nOutput: A1 [1]."
        "\n\n\n"
        "Instruction: Answer with citations.\n\nQuestion: Who?\n\n"
        "Document [1](Title: Ta): ta\nDocument [2](Title: Tb): tb\n\nAnswer:"
    )
    assert record["output"] == "Paris is a capital [1]."  # <|im_end|> removed, right-stripped
    assert [p["text"] for p in record["passages"]] == ["ta", "tb"]
    assert record["answer"]["sentences"][0]["citations"][0]["passage"] == 1
    assert record["citation_status"] == {"ok": 1} and record["method"] == "vanilla@1" and record["prompt"] == "alce-prompt@1"
    man = m.manifest()
    assert man["shot"] == 2 and man["ndoc"] == 2 and man["seed"] == 0 and man["params"]["temperature"] == 0.5
    assert man["prompt_files"]["file"]["demos"] == [2, 1] and len(man["prompt_files"]["file"]["sha256"]) == 64


def test_a_final_end_is_cut_like_alce():
    m = method("vanilla", FakeBackend(default=" Paris [1]. End."), ndoc=1, shot=0, prompt=None, subtask="eli5")
    assert m.answer(sample())["output"] == " Paris [1]. "


def summarising_model(messages, params):
    text = last_user_message(messages)
    if text.startswith("Summarize"):
        return "irrelevant" if "Germany" in text else "Summary: " + text.split("Text: ")[1].split("\n")[0]
    if text.startswith("Given the follow passage"):
        return "Extract: " + text.split("Text: ")[1].split("\n")[0]
    return "Paris [1]."


def test_summ_writes_missing_summaries_skips_irrelevant_documents_and_shows_summaries(tiny_prompt, tmp_path):
    docs = [Passage("a", "text a", "A", {"summary": "own summary a"}), BERLIN, PARIS, ROME]
    fake = FakeBackend(replies=summarising_model)
    cached = CachedBackend(fake, tmp_path / "calls.sqlite")
    m = method("summ", cached, prompt=tiny_prompt, shot=0, ndoc=2)
    record = m.answer(sample(docs))
    asked = [last_user_message(p) for p in fake.prompts]
    assert sum(a.startswith("Summarize") for a in asked) == 2  # Berlin (irrelevant) and Paris; "a" has its own
    prompt = asked[-1]
    assert "Document [1](Title: A): own summary a\nDocument [2](Title: France): Summary: Paris is the capital of France.\n" in prompt
    assert "Germany" not in prompt and "Italy" not in prompt  # two kept: Rome is never reached
    assert [p["title"] for p in record["passages"]] == ["A", "France"]
    assert record["passages"][1]["text"] == PARIS.text and record["passages"][1]["summary"].startswith("Summary:")
    assert record["shorter"] == {"use_shorter": "summary", "written": [2, 3], "skipped_irrelevant": 1}
    n = fake.n_calls
    m.answer(sample(docs))  # the summaries (and the answer) come from the call cache
    assert fake.n_calls == n


def test_summ_writes_only_within_its_pool_then_stops_like_alce(tiny_prompt):
    fake = FakeBackend(replies=summarising_model)
    m = method("summ", fake, prompt=tiny_prompt, shot=0, ndoc=3, shorter_pool=1)
    record = m.answer(sample([PARIS, ROME]))
    # Paris is summarised (pool 1); Rome has no summary and is past the pool: the scan ends with Paris alone
    assert [p["title"] for p in record["passages"]] == ["France"]


def test_snippet_uses_extractions(tiny_prompt):
    fake = FakeBackend(replies=summarising_model)
    m = method("snippet", fake, prompt=tiny_prompt, shot=0, ndoc=1)
    m.answer(sample([Passage("x", "long text", "X", {"extraction": "the span"}), PARIS]))
    assert "Document [1](Title: X): the span\n" in last_user_message(fake.prompts[-1]) and fake.n_calls == 1


def test_rerank_keeps_the_sample_with_the_best_citation_recall():
    replies = {
        0: "Paris is the capital of France [2].",  # cites the wrong document: 0
        1: "Paris is the capital of France [1]. Rome is the capital of Italy [1].",  # 1 of 2
        2: "Paris is the capital of France [1]. Berlin is the capital of Germany [2].",  # 2 of 2
        3: "Paris is the capital of France [1]. Rome is the capital of Italy [3].",  # 2 of 2 too, later: not kept
    }
    fake = FakeBackend(replies=lambda messages, params: replies[params.seed - 10])
    m = method("rerank", fake, ndoc=3, shot=0, subtask="eli5", seed=10, rerank_judge="fake")
    record = m.answer(sample())
    assert [c["citation_recall"] for c in record["rerank"]["candidates"]] == [0.0, 0.5, 1.0, 1.0]
    assert record["rerank"]["chosen"] == 2 and record["output"] == replies[2]
    assert record["rerank"]["judge"] == "fake@1" and m.manifest()["rerank"]["samples"] == 4
    assert [c["seed"] for c in record["rerank"]["candidates"]] == [10, 11, 12, 13] and fake.calls["generate"] == 4


def test_rerank_judges_each_distinct_pair_once_and_cites_at_most_three():
    class Counting:
        id, labels = "counting@1", ("supported", "not_supported")

        def __init__(self):
            self.pairs = []

        def judge(self, pairs):
            from vericite.types import Judgement

            self.pairs += list(pairs)
            return [Judgement(self.id, p.claim, p.evidence, 0.9, "supported") for p in pairs]

    judge = Counting()
    same = "Paris is the capital of France [1][2][3][4]."
    m = create("methods", "rerank:fake", CTX, backend=FakeBackend(default=same), judge=judge, ndoc=4, shot=0, subtask="eli5")
    record = m.answer(sample([PARIS, BERLIN, ROME, Passage("d4", "x", "X")]))
    assert len(judge.pairs) == 1  # four identical samples, one pair
    assert judge.pairs[0].evidence.count("Title: ") == 3 and judge.pairs[0].claim == "Paris is the capital of France."
    assert record["rerank"]["chosen"] == 0


def test_rerank_defaults_to_an_llm_judge_on_its_own_model():
    m = method("rerank", FakeBackend(default="x"), shot=0, subtask="eli5")
    assert m.judge.id == "llm:fake@2" and m.judge.backend is m.backend


def test_closedbook_answers_without_documents_then_cites_the_most_similar():
    fake = FakeBackend(default="Berlin is in Germany. Paris is French.\nMore text.")
    m = method("closedbook", fake, ndoc=3, shot=0, subtask="eli5")
    record = m.answer(sample())
    assert "Document [" not in last_user_message(fake.prompts[0])
    assert record["closedbook_output"] == "Berlin is in Germany. Paris is French.\nMore text."
    assert record["output"] == "[2] Berlin is in Germany. [1] Paris is French. [1] More text."
    assert record["posthoc"] == {"searcher": "tfidf@1", "cited_sentences": 3}
    assert len(record["passages"]) == 3 and m.manifest()["posthoc"]["searcher"] == "tfidf@1"


def test_closedbook_citations_parse_onto_the_sentence_they_open():
    """ALCE puts "[k] " before a sentence; the record's answer (the alce format) gives it to that sentence, as
    ALCE's metrics read it, not to the sentence before."""
    m = method("closedbook", FakeBackend(default="Berlin is in Germany. Paris is French. Rome is old."), ndoc=3, shot=0, subtask="eli5")
    record = m.answer(sample())
    assert record["output"] == "[2] Berlin is in Germany. [1] Paris is French. [3] Rome is old."
    sentences = record["answer"]["sentences"]
    assert [s["text"] for s in sentences] == ["[2] Berlin is in Germany.", "[1] Paris is French.", "[3] Rome is old."]
    assert [[c["passage"] for c in s["citations"]] for s in sentences] == [[2], [1], [3]]
    assert record["answer"]["parser"] == "alce-citation@1" and record["citation_status"] == {"ok": 3}


def test_closedbook_qampari_cites_each_item_with_the_question():
    fake = FakeBackend(default="Rome, Berlin.")
    m = method("closedbook", fake, ndoc=3, shot=0, subtask="qampari")
    # ALCE searches "<question> <item>", then takes the question out of "[k] <question> <item>": two spaces stay
    assert m.answer(sample(question="Which capitals?"))["output"] == "[3]  Rome, [2]  Berlin"


def test_closedbook_with_a_registered_embedder():
    m = method("closedbook", FakeBackend(default="Rome is in Italy."), ndoc=3, shot=0, subtask="eli5", posthoc="embedder:fake")
    record = m.answer(sample())
    assert record["posthoc"]["searcher"] == "embedder:fake-embedder@1" and record["output"].startswith("[3] ")
    with pytest.raises(VericiteError, match="posthoc must be tfidf or embedder"):
        method("closedbook", FakeBackend(), posthoc="gtr")


class ListRetriever:
    """A passage retriever over a list: the passages whose title is in the question, in list order."""

    id = "list-retriever@1"

    def __init__(self, passages):
        self.passages = passages
        self.asked = []

    def retrieve(self, question):
        self.asked.append(question)
        return RetrievalResult(question, [p for p in self.passages if p.title.lower() in question.lower()])


@pytest.fixture
def list_retriever():
    made = []

    def factory(arg, *, ctx, **options):
        made.append(arg)
        return ListRetriever([PARIS, BERLIN, ROME])

    registry.retrievers.register("test-list", factory)
    yield made
    registry.retrievers.unregister("test-list")


def test_documents_are_retrieved_for_questions_without_them(list_retriever):
    fake = FakeBackend(default="Rome [1].")
    m = method("vanilla", fake, ndoc=2, shot=0, subtask="asqa", index="runs/idx", retriever="test-list")
    assert list_retriever == ["runs/idx"]  # built as "<retriever>:<index>" through the registry
    bare = Sample("q", "Is Rome the capital of Italy?")
    m.check_samples([bare, sample()], "mixed")  # retrieval covers the bare one
    record = m.answer(bare)
    assert [p["text"] for p in record["passages"]] == [ROME.text]
    assert record["retrieval"]["retriever"] == "list-retriever@1" and record["retrieval"]["found"] == 1
    given = m.answer(sample([BERLIN]))  # documents: auto keeps a question's own
    assert [p["text"] for p in given["passages"]] == [BERLIN.text] and "retrieval" not in given
    forced = method("vanilla", fake, ndoc=2, shot=0, subtask="asqa", index="x", retriever="test-list", documents="retrieve")
    assert [p["text"] for p in forced.answer(sample([BERLIN], question="France or Italy?"))["passages"]] == [PARIS.text, ROME.text]
    assert m.summarise([record, given])["retrieved"] == {"questions": 1, "short_of_ndoc": 1, "none_found": 0}


class SearchingRetriever(ListRetriever):
    """An index-like retriever: ``search(query, k)`` gives the top k of its list, every one matching; the depth
    asked is recorded."""

    id = "searching@1"

    def __init__(self, passages):
        super().__init__(passages)
        self.depths = []

    def search(self, query, k=None):
        self.depths.append(k)
        return [(p, 1.0) for p in self.passages[:k]]


def test_retrieval_depth_is_ndoc_and_summ_snippet_scan_their_pool_like_alce():
    """vanilla retrieves ndoc documents (not the retriever's default k); summ and snippet retrieve
    max(ndoc, shorter_pool + 1), so that when the model calls the first ones irrelevant the scan goes on, as ALCE's
    get_shorter_text goes on through a question's 100 documents, and ends at the full-text fallback past the pool."""
    docs = [Passage(f"p{i}", f"Passage {i} text.", f"T{i}") for i in range(30)]
    r = SearchingRetriever(docs)
    v = create("methods", "vanilla:fake", CTX, backend=FakeBackend(default="x [1]."), retriever=r, shot=0, subtask="asqa", ndoc=3)
    rec = v.answer(Sample("q", "Which?"))
    assert r.depths == [3] and len(rec["passages"]) == 3 and rec["retrieval"]["depth"] == 3
    assert v.manifest()["retrieval_depth"] == 3
    # the model calls passages 0-3 irrelevant: snippet goes past them and keeps 2 relevant ones
    def extracting_model(messages, params):
        text = last_user_message(messages)
        if text.startswith("Given the follow passage"):
            return "Irrelevant" if any(f"Passage {i} text." in text for i in range(4)) else "An extraction."
        return "x [1]."

    r2 = SearchingRetriever(docs)
    fake = FakeBackend(replies=extracting_model)
    s = create("methods", "snippet:fake", CTX, backend=fake, retriever=r2, shot=0, subtask="asqa", ndoc=2, shorter_pool=6)
    rec = s.answer(Sample("q", "Which?"))
    assert r2.depths == [7] and rec["retrieval"]["depth"] == 7  # the pool and the full-text fallback after it
    assert [p["id"] for p in rec["passages"]] == ["p4", "p5"] and rec["shorter"]["skipped_irrelevant"] == 4
    assert s.manifest()["retrieval_depth"] == 7
    # every document of a pool of 3 called irrelevant: the 4th, past the pool, is shown with its full text (ALCE)
    r3 = SearchingRetriever(docs)
    s3 = create("methods", "snippet:fake", CTX, backend=fake, retriever=r3, shot=0, subtask="asqa", ndoc=2, shorter_pool=3)
    rec = s3.answer(Sample("q", "Which?"))
    assert r3.depths == [4] and [p["id"] for p in rec["passages"]] == ["p3"] and rec["passages"][0]["extraction"] == "Passage 3 text."
    assert rec["shorter"]["skipped_irrelevant"] == 3 and rec["shorter"]["written"] == [1, 2, 3]


def test_a_ready_retriever_object_is_used_as_it_is():
    r = ListRetriever([PARIS])
    m = create("methods", "vanilla:fake", CTX, backend=FakeBackend(default="x"), retriever=r, shot=0, subtask="asqa")
    m.answer(Sample("q", "France?"))
    assert r.asked == ["France?"] and m.manifest()["retriever"] == "list-retriever@1"


def test_questions_without_documents_are_refused_before_anything_runs():
    m = method("vanilla", FakeBackend(default="x"), shot=0, subtask="asqa")
    with pytest.raises(VericiteError, match="none of them do: pass --index DIR"):
        m.check_samples([Sample("a", "q?"), Sample("b", "r?")], "mine")
    with pytest.raises(VericiteError, match=r"1 of 2 \(first: b\)"):
        m.check_samples([sample(), Sample("b", "r?")], "mine")
    method("vanilla", FakeBackend(default="x"), shot=0, subtask="asqa", documents="given").check_samples([Sample("a", "q?")], "mine")
    with pytest.raises(VericiteError, match="documents=retrieve needs an index"):
        method("vanilla", FakeBackend(), documents="retrieve")


def test_bad_options_are_one_line(tiny_prompt):
    with pytest.raises(VericiteError, match="method vanilla: invalid"):
        method("vanilla", FakeBackend(), ndoc=-1)
    with pytest.raises(VericiteError, match="method vanilla: invalid"):
        method("vanilla", FakeBackend(), samples=4)  # rerank's option
    with pytest.raises(VericiteError, match="--shot 9 asks for more demos than the prompt file has"):
        method("vanilla", FakeBackend(), prompt=tiny_prompt, shot=9)


def test_the_subtask_picks_alces_prompt_file(monkeypatch, tmp_path):
    folder = tmp_path / "alce" / "prompts"
    folder.mkdir(parents=True)
    for task in ("asqa", "qampari", "eli5"):
        (folder / f"{task}_default.json").write_text(json.dumps({**TINY, "instruction": f"Instruction for {task}."}), encoding="utf-8")
    monkeypatch.setenv("VERICITE_DATA", str(tmp_path))
    fake = FakeBackend(default="x")
    m = method("vanilla", fake, shot=0)
    for s, task in [(sample(), "eli5"), (Sample("q", "q?", passages=[PARIS], qa_pairs=[]), "asqa"), (Sample("m", "m?", passages=[PARIS], answers=[["a"], ["b"]]), "qampari"), (Sample("n", "n?", passages=[PARIS], answers=[["a"]]), "asqa")]:
        record = m.answer(s)
        assert record["subtask"] == task and record["prompt_file"] == f"{task}_default.json"
        assert last_user_message(fake.prompts[-1]).startswith(f"Instruction for {task}.")
    m = method("closedbook", fake, shot=0)
    with pytest.raises(VericiteError, match="eli5_closedbook.json is not in the shared data"):
        m.check_samples([sample()], "x")


def test_rerank_counts_its_llm_judge_tokens_apart_and_in_the_answers_usage(tmp_path):
    """The judge's next-token calls report their tokens (the fake's: the prompt's words, one completion token):
    ``rerank.judge_usage`` holds them, and the run loop's usage of the answer has them with the samples'."""
    import json

    from vericite.models.usage import UsageMeter, metered
    from vericite.runs.loop import run_method

    meter = UsageMeter()
    fake = FakeBackend(default="Paris is the capital of France [1]. Rome is the capital of Italy [3].")
    m = method("rerank", metered(fake, meter), ndoc=3, shot=0, subtask="eli5")  # the default judge: llm on its own model
    run_method(m, [sample()], tmp_path / "o", config={}, meter=meter, progress=False)
    record = json.loads((tmp_path / "o" / "samples.jsonl").read_text().splitlines()[0])
    judged = fake.prompts[4:]  # after the four samples
    assert fake.calls["generate"] == 4 and fake.calls["next_token_logprobs"] == len(judged) > 0
    words = sum(len(str(x["content"]).split()) for p in judged for x in p)
    assert record["rerank"]["judge_usage"] == {"prompt_tokens": words, "completion_tokens": len(judged), "calls": len(judged)}
    sampled = sum(len(str(x["content"]).split()) for p in fake.prompts[:4] for x in p)
    assert record["usage"]["prompt_tokens"] == sampled + words and record["usage"]["calls"] == 4 + len(judged)
    assert "uncounted_calls" not in record["usage"]


def test_rerank_with_a_judge_without_a_model_has_no_judge_usage():
    m = method("rerank", FakeBackend(default="Paris is the capital of France [1]."), ndoc=3, shot=0, subtask="eli5", rerank_judge="fake")
    assert m.answer(sample())["rerank"]["judge_usage"] is None
