"""CONNER's measures with the fakes: values worked out from the fake judge's word overlap, the fake LM's hashed
log-probs and the fake scorer's Jaccard overlap; bad input is not computed with its reason, never a zero."""

from __future__ import annotations

import math

import pytest

from vericite.errors import VericiteError
from vericite.fakes.judges import ThreeWayJudge
from vericite.fakes.scoring import FakePairScorer
from vericite.metrics.conner import NAMES, ConnerMetric, sigmoid
from vericite.models.fake import FakeBackend
from vericite.types import AttributedAnswer, Passage, Sample


def item(i, knowledge, *, answer="Rome", passages=("Rome is the capital of Italy.",), topic="Italy"):
    s = Sample(id=f"q{i}", question="What is the capital of Italy?", answers=[[answer]] if answer else None,
               passages=[Passage(f"p{j}", t) for j, t in enumerate(passages)], meta={"topic": topic} if topic else {})
    return s, AttributedAnswer(raw=knowledge)


def run(items, **kw):
    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), scorer=FakePairScorer(), resamples=50, **kw)
    samples, answers = zip(*items)
    return m.score_answers(list(samples), list(answers))


def test_every_measure_is_computed_on_good_input_and_recorded():
    r = run([item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is not the capital of Italy."), item(2, "Milan has a cathedral. It is big.")])
    assert set(r.results) == set(NAMES)
    assert all(r.results[n].value is not None for n in NAMES), {n: r.results[n].reason for n in NAMES}
    per = [s["conner"] for s in r.scores]
    # factuality, min over sentences: "It is old." is not in the evidence -> not_enough_info for item 0
    assert per[0]["factuality_vector"] == {"supports": 0.1, "refutes": 0.1, "not_enough_info": 0.8}
    assert per[1]["factuality_label"] == "factual_inconsistent"  # a negation against shared words
    assert r.results["factual_inconsistent"].value == pytest.approx(1 / 3)
    assert r.results["factuality"].details["mean_probabilities"]["supports"] == pytest.approx(0.1)
    # relevance: the sigmoid of the fake scorer's Jaccard overlap
    q, k = "What is the capital of Italy?", "Rome is the capital of Italy. It is old."
    assert per[0]["relevance"] == pytest.approx(round(sigmoid(FakePairScorer().score([(q, k)])[0]), 6))
    # validity: the fake reader says "Rome", the gold answer is Rome: the premise holds every word
    assert per[0]["reader_answer"] == "Rome" and per[0]["validity"] == pytest.approx(0.8)
    for name in ("coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness"):
        assert 0.0 <= per[0][name] <= 1.0
    from vericite.metrics.conner import q_know

    assert per[0]["q_know"] == q_know(per[0]) and q_know({"factuality": 1.0}) is None
    st = r.settings["conner"]
    assert st["aggregation"] == "min" and st["judge"] == "fake-3way@1" and st["lm"] == "fake" and st["unrelated"] == 3
    assert r.counts["judge_calls"] > 0 and all(j["purpose"] in ("factuality", "validity") for j in r.judgements[0])


def test_informativeness_and_coherence_follow_their_equations():
    fake = FakeBackend()
    k = "Rome is old. Rome has seven hills."
    r = run([item(0, k), item(1, "Paris is big. Paris is in France.")])
    per = r.scores[0]["conner"]
    prefix = "Generate a Wikipedia to answer the given question. Topic: Italy Question: What is the capital of Italy? Wikipedia: "
    lps = fake.continuation_logprobs([(prefix, k)])[0]
    assert per["informativeness"] == pytest.approx(1 - math.exp(sum(lps) / len(lps)), abs=1e-6)
    rows = fake.continuation_token_spans([("", k)])[0]
    first, second = [lp for s, e, lp in rows if e <= 12], [lp for s, e, lp in rows if s >= 13]
    inv = [math.exp(sum(x) / len(x)) for x in (first, second)]
    assert per["coherence_sentence"] == pytest.approx(sum(inv) / 2, abs=1e-6)
    assert per["coherence_paragraph"] in (0.0, 0.5, 1.0) or 0 < per["coherence_paragraph"] < 1


def test_bad_input_is_not_computed_with_its_reason():
    items = [item(0, ""), item(1, "Rome"), item(2, "Rome is the capital. It is old.", answer=None, passages=()),
             item(3, "Paris is in France. It is big.", answer=None, passages=())]
    r = run(items)
    per = [s["conner"] for s in r.scores]
    assert per[0]["not_computed"]["relevance"] == "empty knowledge" and "relevance" not in per[0]
    assert per[1]["not_computed"]["factuality"] == "knowledge of one word"
    assert per[2]["not_computed"]["factuality"].startswith("no evidence")
    assert per[2]["not_computed"]["helpfulness"] == "no gold answer"
    assert per[2]["not_computed"]["validity"] == "no gold answer and no evidence"
    assert "relevance" in per[2] and "coherence_sentence" in per[2]  # the rest are computed
    assert r.results["factuality"].value is None and r.results["factuality"].n == 0
    assert r.results["relevance"].n == 2 and r.results["relevance"].details["left_out"] == {"empty knowledge": 1, "knowledge of one word": 1}


def test_without_models_the_measures_say_why():
    s, a = item(0, "Rome is the capital of Italy. It is old.")
    r = ConnerMetric(resamples=0).score_answers([s, s], [a, a])
    assert r.results["factuality"].reason.startswith("no judge")
    assert r.results["relevance"].reason == "no relevance model"
    assert r.results["informativeness"].reason == "no language model (--lm)"


def test_aggregation_max_is_recorded_and_options_are_checked():
    r = run([item(0, "Rome is the capital of Italy. It is old."), item(1, "Milan is big. It is old.")], aggregation="max")
    assert r.scores[0]["conner"]["factuality_label"] == "factual_consistent" and r.settings["conner"]["aggregation"] == "max"
    with pytest.raises(VericiteError, match="aggregation"):
        ConnerMetric(aggregation="median")
    with pytest.raises(VericiteError, match="not a CONNER measure"):
        ConnerMetric(metrics=["fluency"])


def test_evidence_comes_from_the_retriever_when_an_item_has_none():
    class Store:
        def search(self, query, k=10):
            return [(Passage("x", "Rome is the capital of Italy."), 1.0)]

    s, a = item(0, "Rome is the capital of Italy. It is old.", passages=())
    m = ConnerMetric(ThreeWayJudge(), retriever=Store(), evidence_index="idx", metrics=["factuality"], resamples=0)
    r = m.score_answers([s], [a])
    assert r.results["factuality"].value == pytest.approx(0.1) and r.settings["conner"]["evidence_index"] == "idx"


def test_answer_em_is_the_readers_answer_against_the_short_answers():
    # the fake reader answers "Rome" to every question
    r = run([item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is big. It has towers.", answer="Paris"),
             item(2, "Milan is big. It is in Italy.", answer=None, passages=())])
    per = [s["conner"] for s in r.scores]
    assert per[0]["n_sentences"] == 2
    assert per[0]["answer_em"] == 1.0 and per[1]["answer_em"] == 0.0 and per[1]["reader_answer"] == "Rome"
    assert per[2]["not_computed"]["answer_em"] == "no gold short answer" and "reader_answer" not in per[2]
    assert r.results["answer_em"].value == 0.5 and r.results["answer_em"].n == 2
    assert r.results["answer_em"].details["left_out"] == {"no gold short answer": 1}
    only = ConnerMetric(lm=FakeBackend(replies=lambda msgs, p: "the  ROME."), metrics=["answer_em"], resamples=0)
    s, a = item(0, "Rome is the capital of Italy. It is old.")
    res = only.score_answers([s], [a])
    assert res.results["answer_em"].value == 1.0 and set(res.results) == {"answer_em"}  # SQuAD normalisation; no judge needed
    assert ConnerMetric(resamples=0, metrics=["answer_em"]).score_answers([s], [a]).results["answer_em"].reason == "no language model (--lm)"


def test_statistics_from_records_give_what_score_answers_gave():
    from vericite.stats import point

    r = run([item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is big. It has towers.", answer="Paris"),
             item(2, ""), item(3, "Milan is big. It is in Italy.", answer=None, passages=())])
    records = [{"scores": s} for s in r.scores]
    cs = ConnerMetric.statistics_from_records(records)
    for name in NAMES:
        got = r.results[name]
        if got.value is None:
            assert name in cs.reasons
        else:
            assert point(cs.statistics[name], len(records)) == pytest.approx(got.value) and cs.ns[name] == got.n, name
    assert ConnerMetric.statistics_from_records([{"scores": {}}]).reasons["relevance"] == "no record has it"
    assert ConnerMetric.statistics_from_records(records[2:3]).reasons["relevance"] == "empty knowledge"


def test_open_answers_are_checked_against_the_index_when_the_item_has_no_evidence():
    class Store:
        def __init__(self, found):
            self.found, self.queries = found, []

        def search(self, query, k=10):
            self.queries.append(query)
            return [(Passage("x", t), 1.0) for t in self.found][:k]

    s, a = item(0, "Rome is the capital of Italy. It is old.", answer=None, passages=())  # WoW: no short answer
    store = Store(["Rome is a city.", "Rome is the capital of Italy."])
    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome is the capital"), retriever=store, metrics=["validity"], resamples=0)
    r = m.score_answers([s], [a])
    assert r.results["validity"].value == pytest.approx(0.8) and "Rome is the capital" in store.queries  # the best of the two
    r = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), retriever=Store([]), metrics=["validity"], resamples=0).score_answers([s], [a])
    assert r.results["validity"].reason == "no evidence for the answer (the item's passages, or --index)"


def test_a_judge_prompt_too_long_fails_its_pairs_only_counted_and_said():
    """A "sentence" too long for the judge's context (a whole table without full stops): its pairs are failed
    judgements, counted apart from unparseable ones; an item left with no judged sentence says why, the rest are
    computed (a real llama.cpp judge raised this and stopped a whole evaluation before)."""
    from vericite.errors import PromptTooLongError
    from vericite.judges.three_way import LLM3Judge

    def verdict(msgs, p):
        if "Milan" in msgs[-1]["content"]:
            raise PromptTooLongError("llama.cpp: Requested tokens (4780) exceed context window of 4096")
        return "Supports"

    judge = LLM3Judge(FakeBackend(replies=verdict), batch_size=4)
    m = ConnerMetric(judge, lm=FakeBackend(replies=lambda msgs, p: "Rome"), metrics=["factuality", "validity"], resamples=0)
    items = [item(0, "Rome is the capital of Italy. It is old."), item(1, "Milan is big and old."), item(2, "Milan is big. Rome is old.")]
    res = m.score_answers([s for s, _ in items], [a for _, a in items])
    per = [x["conner"] for x in res.scores]
    assert per[0]["factuality"] > 0.5 and per[2]["factuality"] > 0.5  # item 2's Rome sentence is judged
    why = per[1]["not_computed"]["factuality"]
    assert why == "no sentence could be judged (judge failed: llama.cpp: Requested tokens (4780) exceed context window of 4096)"
    assert all(v is not None for v in (per[0]["validity"], per[1]["validity"], per[2]["validity"]))
    assert res.counts["failed_judgements"] == 2 and res.counts["unparseable_judgements"] == 0  # one passage, two Milan sentences
    assert res.results["factuality"].n == 2
    failed = [j for j in res.judgements[1] if j["purpose"] == "factuality"]
    assert [j["status"] for j in failed] == ["failed"]


def test_a_reader_call_that_fails_leaves_out_that_item_only():
    from vericite.errors import BackendError

    def reply(msgs, p):
        if "Milan" in msgs[-1]["content"]:
            raise BackendError("llama.cpp: Requested tokens (9000) exceed context window of 4096")
        return "Rome"

    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=reply), metrics=["validity", "answer_em"], resamples=0)
    s0, a0 = item(0, "Rome is the capital of Italy. It is old.")
    s1, a1 = item(1, "Milan is big. It is old.")
    res = m.score_answers([s0, s1], [a0, a1])
    per = [x["conner"] for x in res.scores]
    assert per[0]["answer_em"] == 1.0 and "validity" in per[0]
    assert per[1]["not_computed"]["validity"].startswith("the reader's call failed (llama.cpp: Requested tokens")
    assert res.results["answer_em"].n == 1 and res.results["validity"].n == 1


def test_the_reader_reads_an_item_once_for_a_metric_and_its_judging_part_and_again_for_another_lm():
    read = []

    def reply(msgs, p):
        read.append(msgs[-1]["content"])
        return "Rome"

    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=reply), metrics=["validity", "answer_em"], resamples=0)
    s, a = item(0, "Rome is the capital of Italy. It is old.")
    part = m.judging_part()
    first = part.score_answers([s], [a]).scores[0]["conner"]
    assert m.score_answers([s], [a]).scores[0]["conner"] == first and len(read) == 1  # the part's reading is the metric's
    m.lm = FakeBackend(replies=reply)  # another LM reads for itself
    assert m.score_answers([s], [a]).scores[0]["conner"] == first and len(read) == 2


def test_evidence_is_retrieved_once_for_a_metric_and_its_judging_part_and_taken_from_checkpointed_scores():
    class Store:
        def __init__(self):
            self.queries = []

        def search(self, query, k=10):
            self.queries.append(query)
            return [(Passage("x", "Rome is the capital of Italy."), 1.0), (Passage("y", f"Rome: {query}"), 0.5)][:k]

    s, a = item(0, "Rome is the capital of Italy. It is old.", answer=None, passages=())  # validity retrieves for the answer too
    store = Store()
    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), retriever=store, metrics=["factuality", "validity"], resamples=0)
    part = m.judging_part()
    kept = part.score_answers([s], [a]).scores[0]["conner"]
    asked = ["Rome is the capital of Italy.", "It is old.", "Rome"]
    assert store.queries == asked and kept["retrieved"]["found"]["It is old."] == ["Rome is the capital of Italy.", "Rome: It is old."]
    assert kept["retrieved"]["index"] == {"retriever": "Store", "k": 10, "corpus": None}
    whole = m.score_answers([s], [a]).scores[0]["conner"]
    assert store.queries == asked and "retrieved" not in whole  # the part's evidence is the metric's; samples.jsonl has none
    assert {k: v for k, v in kept.items() if k != "retrieved"} == whole

    # scored elsewhere (an actor, a checkpoint read back): another metric takes the evidence from the line's scores
    other = Store()
    fresh = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), retriever=other, metrics=["factuality", "validity"], resamples=0)
    fresh.reuse_checkpointed([s], [a], {0: {"conner": kept}})
    assert fresh.score_answers([s], [a]).scores[0]["conner"] == whole and other.queries == []
    fresh.retriever = Store()  # another retriever retrieves for itself
    assert fresh.score_answers([s], [a]).scores[0]["conner"] == whole and fresh.retriever.queries == asked

    # an index rebuilt from another corpus (at the same path) between a cut and --resume: its evidence is searched again
    class Index(Store):
        def __init__(self, sha):
            super().__init__()
            self.sha = sha

        def corpus_identity(self):
            return {"sha256": self.sha, "passages": 2}

    first = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), retriever=Index("a"), metrics=["factuality", "validity"], resamples=0)
    line = first.judging_part().score_answers([s], [a]).scores[0]
    assert line["conner"]["retrieved"]["index"]["corpus"] == {"sha256": "a", "passages": 2}
    for sha, queries in (("a", []), ("b", asked)):
        again = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(replies=lambda msgs, p: "Rome"), retriever=Index(sha), metrics=["factuality", "validity"], resamples=0)
        again.reuse_checkpointed([s], [a], {0: line})
        again.score_answers([s], [a])
        assert again.retriever.queries == queries, sha


def test_the_task_builds_the_relevance_model_at_its_first_use_and_its_judging_part_never_does():
    """The conner task's suite holds its relevance scorer unbuilt (evaluate --ray's workers build the suite and
    score only its judging part); the corpus's scoring builds it once, and records its id as before. A name not
    registered is refused when the suite is built."""
    from vericite import registry

    built = []
    registry.scorers.register("counted", lambda arg, *, ctx, **o: built.append(arg) or FakePairScorer(), replace=True)
    try:
        counted_suite(built)
    finally:
        registry.scorers.unregister("counted")


def counted_suite(built):
    from types import SimpleNamespace

    from vericite.registry import BuildContext, create

    settings = SimpleNamespace(lm="fake", relevance_model="counted", evidence_index=None, metrics=None, resamples=0, seed=0)
    [m] = create("tasks", "conner").suite(settings, judge=ThreeWayJudge(), ctx=BuildContext(cache=False))
    s, a = item(0, "Rome is the capital of Italy. It is old.")
    m.judging_part().score_answers([s], [a])
    assert built == []
    r = m.score_answers([s], [a])
    assert built == [""] and r.settings["conner"]["relevance_model"] == FakePairScorer.id and r.scores[0]["conner"]["relevance"] > 0.5
    m.score_answers([s], [a])
    assert built == [""]
    with pytest.raises(VericiteError, match="unknown pair scorer 'countd'"):
        create("tasks", "conner").suite(SimpleNamespace(**{**vars(settings), "relevance_model": "countd"}), judge=ThreeWayJudge(), ctx=BuildContext())


def test_u_is_recorded_as_asked_and_as_used():
    # Eq. 6 averages over u unrelated knowledge texts of other items; a corpus with fewer other texts uses fewer, and
    # that is recorded (it was only ever recorded as asked: unrelated 3 with 2 used)
    three = [item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is in France. It is big."), item(2, "Milan has a cathedral. It is big.")]
    r = run(three)
    assert [s["conner"]["helpfulness_unrelated"] for s in r.scores] == [2, 2, 2]
    assert r.results["helpfulness"].details["unrelated"] == 3 and r.results["helpfulness"].details["unrelated_used"] == {"2": 3}
    five = three + [item(3, "Turin has cars. It is north."), item(4, "Naples has pizza. It is south.", answer=None)]
    r = run(five, unrelated=3)
    assert [s["conner"].get("helpfulness_unrelated") for s in r.scores] == [3, 3, 3, 3, None]  # item 4: no gold answer
    assert r.results["helpfulness"].details["unrelated_used"] == {"3": 4}


def test_paragraph_coherence_takes_a_pluggable_discourse_model():
    # issue 14: coherence_paragraph is "a pluggable discourse-coherence model"; the LM's order test is only the default
    class Discourse:
        id = "discourse@1"

        def __init__(self):
            self.pairs = []

        def score(self, pairs):
            self.pairs += list(pairs)
            return [float(len(k.split())) - 8.0 if "NaN" not in k else math.nan for _, k in pairs]

    model = Discourse()
    items = [item(0, "Rome is the capital of Italy. It is old."), item(1, "Rome is old."), item(2, "Rome is NaN. It is old.")]
    samples, answers = zip(*items)
    m = ConnerMetric(ThreeWayJudge(), lm=None, scorer=FakePairScorer(), coherence=model, resamples=50)
    r = m.score_answers(list(samples), list(answers))
    per = [s["conner"] for s in r.scores]
    assert per[0]["coherence_paragraph"] == pytest.approx(round(sigmoid(9.0 - 8.0), 6))  # no LM needed
    assert per[1]["not_computed"]["coherence_paragraph"] == "one sentence: no paragraph to judge"
    assert per[2]["not_computed"]["coherence_paragraph"].startswith("the coherence model gave no score (nan)")
    assert model.pairs == [("What is the capital of Italy?", "Rome is the capital of Italy. It is old."), ("What is the capital of Italy?", "Rome is NaN. It is old.")]
    assert per[0]["not_computed"]["coherence_sentence"] == "no language model (--lm)"
    st = r.settings["conner"]
    assert st["coherence_paragraph_model"].startswith("discourse@1") and not [d for d in st["deviations"] if d.startswith("coherence_paragraph")]
    assert m.judging_part().coherence is None  # the judged part never loads it (evaluate --ray's workers)
    default = run([items[0], items[1]]).settings["conner"]
    assert default["coherence_paragraph_model"] == "sentence-order test of fake" and any("Coherence-Momentum" in d for d in default["deviations"])


def test_a_coherence_model_is_neither_loaded_nor_recorded_when_coherence_paragraph_is_not_measured():
    class Loading(FakePairScorer):
        loads = 0

        def load(self):
            Loading.loads += 1
            return self

    m = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(), scorer=None, coherence=Loading(), metrics=["factuality"])
    m.preload()
    st = m.settings()
    assert Loading.loads == 0 and st["coherence_paragraph_model"] is None and st["deviations"] == []
    # the LM's order test is not noted either when coherence_paragraph is not measured
    assert ConnerMetric(ThreeWayJudge(), lm=FakeBackend(), metrics=["factuality"]).settings()["coherence_paragraph_model"] is None
    measured = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(), scorer=None, coherence=Loading(), metrics=["coherence_paragraph"])
    measured.preload()
    assert Loading.loads == 1 and measured.settings()["coherence_paragraph_model"].startswith("fake-scorer@1")


def test_an_items_own_evidence_is_used_whole_not_cut_to_evidence_k():
    # "evidence per sentence = the item's evidence or the top 10 passages retrieved from --index": evidence_k bounds
    # retrieval; a line's 12 passages were cut to their first 10, and the one that supports the sentence was last
    others = [f"Bananas number {j} are yellow fruit." for j in range(11)]
    r = run([item(0, "Rome is the capital of Italy.", passages=(*others, "Rome is the capital of Italy."))], evidence_k=10)
    per = r.scores[0]["conner"]
    assert per["factuality_label"] == "factual_consistent", per
    assert len([j for j in r.judgements[0] if j["purpose"] == "factuality"]) == 12  # the sentence against each passage


def test_the_readers_prompt_and_woWs_query_are_recorded_as_deviations():
    from vericite.metrics.conner import COHERENCE_DEVIATION, READER_DEVIATION, SENTENCE_CONTEXT_DEVIATION, SETTINGS, WOW_QUERY_DEVIATION
    from vericite.metrics.conner_specs import Q_KNOW

    nq = [item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is in France. It is big.")]
    assert run(nq).settings["conner"]["deviations"] == [SENTENCE_CONTEXT_DEVIATION, COHERENCE_DEVIATION, READER_DEVIATION]
    # WoW-shaped: the query is the dialogue history, meta.last_utterance its last turn (wow-*-500's samples)
    s, a = item(2, "Beards are hair. They grow.")
    wow = Sample(id="w", question="i like beards.\nAdult males grow them!", meta={"topic": "Beard", "last_utterance": "Adult males grow them!"})
    assert run([*nq, (wow, a)]).settings["conner"]["deviations"] == [SENTENCE_CONTEXT_DEVIATION, COHERENCE_DEVIATION, READER_DEVIATION, WOW_QUERY_DEVIATION]
    one_turn = Sample(id="w1", question="Adult males grow them!", meta={"last_utterance": "Adult males grow them!"})
    assert WOW_QUERY_DEVIATION not in run([*nq, (one_turn, a)]).settings["conner"]["deviations"]  # its query is the utterance
    # Q_know's measures read no reader: its settings (generate's manifest) note no reader's prompt
    q = ConnerMetric(ThreeWayJudge(), lm=FakeBackend(), scorer=FakePairScorer(), metrics=Q_KNOW)
    assert q.settings()["deviations"] == [COHERENCE_DEVIATION]
    # compare reads every setting but the deviations
    assert set(ConnerMetric.compared_settings) == {f"conner.{k}" for k in q.settings() if k != "deviations"} == {f"conner.{k}" for k in SETTINGS}


def test_coherence_sentence_in_context_is_recorded_as_a_deviation():
    """CONNER's scripts score each sentence alone; vericite's default (sentence_context=paragraph) scores each after
    the ones before it: a deviation, recorded when coherence_sentence is measured so, and only then."""
    from vericite.metrics.conner import SENTENCE_CONTEXT_DEVIATION

    nq = [item(0, "Rome is the capital of Italy. It is old."), item(1, "Paris is in France. It is big.")]
    st = run(nq).settings["conner"]
    assert st["sentence_context"] == "paragraph" and SENTENCE_CONTEXT_DEVIATION in st["deviations"]
    assert SENTENCE_CONTEXT_DEVIATION not in run(nq, sentence_context="sentence").settings["conner"]["deviations"]
    assert SENTENCE_CONTEXT_DEVIATION not in run(nq, metrics=["relevance", "informativeness"]).settings["conner"]["deviations"]
    assert run(nq, metrics=["coherence_sentence"]).settings["conner"]["deviations"] == [SENTENCE_CONTEXT_DEVIATION]


def test_helpfulness_raw_is_the_ratio_before_the_clamp():
    # Eq. 6 clamps at 0: max(0, 1 − L/mean L⁻); the raw ratio tells a zero that was -0.01 from one that was -3. An LM
    # whose loss per gold token is the prompt's length / 100: the longest knowledge is the least helpful
    from vericite.metrics.conner_specs import HELP_PREFIX

    class PrefixLM(FakeBackend):
        def continuation_logprobs(self, pairs):
            return [[-len(p) / 100.0] * len(c.split()) for p, c in pairs]

    texts = ["Rome is the capital of Italy. It is old and has a long history.", "Paris is in France. It is big.", "Milan has a cathedral. It is big."]
    samples, answers = zip(*[item(i, t) for i, t in enumerate(texts)])
    r = ConnerMetric(ThreeWayJudge(), lm=PrefixLM(), scorer=FakePairScorer(), resamples=50).score_answers(list(samples), list(answers))
    per = [s["conner"] for s in r.scores]
    loss = [len(HELP_PREFIX.format(knowledge=t, query=samples[0].question)) / 100.0 for t in texts]
    for i in range(3):
        raw = 1.0 - loss[i] / ((sum(loss) - loss[i]) / 2)
        assert per[i]["helpfulness_raw"] == pytest.approx(raw, abs=1e-6)
        assert per[i]["helpfulness"] == pytest.approx(max(0.0, raw), abs=1e-6)
    assert per[0]["helpfulness_raw"] < 0 and per[0]["helpfulness"] == 0.0  # the clamped zero is readable
    assert per[1]["helpfulness_raw"] > 0
    no_gold = ConnerMetric(ThreeWayJudge(), lm=PrefixLM(), scorer=FakePairScorer(), resamples=50).score_answers(
        [item(0, texts[0], answer=None)[0], *samples[1:]], list(answers)).scores[0]["conner"]
    assert "helpfulness_raw" not in no_gold and no_gold["not_computed"]["helpfulness"] == "no gold answer"
