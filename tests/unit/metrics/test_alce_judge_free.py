"""ALCE's judge-free metrics, worked by hand from ALCE's eval.py: output length, STR-EM/Hit, QAMPARI, short-answer
EM/F1, ROUGE-Lsum (equal to rouge-score called as ALCE calls it), the preprocessing they share, and the QA model's
answer decoding."""

from __future__ import annotations

import pytest

from vericite.metrics.alce import (
    RougeLsum,
    answer_scores,
    compute_f1,
    detect_subtask,
    exact_presence,
    normalize_answer,
    qampari_scores,
    str_em,
)
from vericite.metrics.alce_family import AlceMetric
from vericite.metrics.alce_qa import extract_answer, qa_scores
from vericite.registry import create
from vericite.types import QAPair, Sample


def test_normalisation_is_squads():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert normalize_answer("An apple, a day") == "apple day"


def test_str_em_and_hit():
    pairs = [QAPair("q1", ("Ali Daei", "Daei")), QAPair("q2", ("Josef Bican",)), QAPair("q3", ("Christine Sinclair",))]
    assert str_em(pairs, "Daei scored most; Bican (Josef) too.") == (pytest.approx(1 / 3), 0.0)
    assert str_em(pairs, "ali daei, josef bican and christine sinclair.") == (1.0, 1.0)
    assert str_em([], "anything") is None
    assert exact_presence([""], "x")  # an empty short answer is in every output (ALCE's substring test)


def test_qampari_precision_recall_top5_and_f1():
    answers = [["Paris", "City of Paris"], ["Lyon"], ["Nice"], ["Lille"], ["Metz"], ["Brest"]]
    s = qampari_scores(answers, "paris, Lyon, Berlin, the Nice,.")
    # predictions: paris, lyon, berlin, nice (articles dropped) -> 3 of 4 right; 3 of 6 clusters; top-5: 3/5
    assert s["qampari_precision"] == 0.75 and s["qampari_recall"] == 0.5 and s["qampari_recall_top5"] == 0.6
    assert s["qampari_f1"] == pytest.approx(2 * 0.75 * 0.5 / 1.25) and s["qampari_f1_top5"] == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert qampari_scores([["a"]], ", ,")["qampari_precision"] == 0.0  # no prediction: precision 0, F1 0
    assert qampari_scores([], "x") is None


def test_short_answer_em_and_f1_best_alias():
    assert answer_scores([["Paul Simon", "Simon"]], "Simon.") == (1.0, 1.0)
    em, f1 = answer_scores([["Paul Simon"], ["Art Garfunkel"]], "It was Paul Simon")
    assert em == 0.0 and f1 == pytest.approx(compute_f1("Paul Simon", "It was Paul Simon")) == pytest.approx(2 * (2 / 4) * 1 / (2 / 4 + 1))


def test_short_answer_hit_is_a_gold_alias_inside_the_output():
    from vericite.metrics.alce import answer_hit

    assert answer_hit([["Paul Simon"], ["Art Garfunkel"]], "It was written by Paul Simon [1].") == 1.0  # EM 0, hit 1
    assert answer_hit([["The Beatles"]], "beatles, of course") == 1.0  # normalised: article and case
    assert answer_hit([["28.0.0.137"]], "The current version is 34.0.0.175.") == 0.0
    assert answer_hit([["", "Zed"], ["the"]], "anything") == 0.0  # aliases that normalise to nothing never match
    assert answer_hit([[""]], "x") is None and answer_hit([], "x") is None


def test_rouge_lsum_equals_rouge_score_as_alce_calls_it():
    from rouge_score import rouge_scorer

    from vericite.attribution.alce import sent_tokenize

    plain = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)
    out = "The Beatles were formed in Liverpool in 1960. They released many albums."
    refs = ["The Beatles formed in Liverpool, England, in 1960. The group's members were Lennon and McCartney.", "In 1960 the band formed."]
    want = max(plain.score("\n".join(sent_tokenize(r.lower())), "\n".join(sent_tokenize(out.lower())))["rougeLsum"].fmeasure for r in refs)
    r = RougeLsum()
    assert r.score(out, refs) == want and r.score(out, refs) == want  # the memoised second call too
    assert r.score(out, []) is None


def test_the_lcs_table_is_rouge_scores():
    import random

    from rouge_score import rouge_scorer

    from vericite.metrics.alce import lcs_table

    rng = random.Random(0)
    for _ in range(300):
        a = [rng.choice("abcdefg") for _ in range(rng.randint(0, 25))]
        b = [rng.choice("abcdefgh") for _ in range(rng.randint(0, 25))]
        assert lcs_table(a, b) == rouge_scorer._lcs_table(a, b)
    assert rouge_scorer._lcs_table is not lcs_table  # scoring put rouge-score's own back


def test_the_family_preprocesses_removes_citations_and_reports_only_what_it_has():
    s = Sample("a", "Who?", qa_pairs=[QAPair("q", ("Simon",))], meta={"long_answers": ["Paul Simon wrote it."]})
    t = Sample("b", "Who?", qa_pairs=[QAPair("q", ("Garfunkel",))], meta={"long_answers": ["Art Garfunkel sang."]})
    fmt = create("formats", "alce")
    outs = ["  Paul Simon [1][2] wrote it.\nGarfunkel [3]", "<|im_end|>"]
    r = AlceMetric(None, subtask="asqa", resamples=20).score_answers([s, t], [fmt.parse(o) for o in outs]).results
    assert r["output_length"].value == 2.0  # "Paul Simon wrote it." (4 words) and "" (0)
    assert r["str_em"].value == 0.5 and r["str_hit"].value == 0.5  # the second line is cut: no Garfunkel
    assert r["rouge_lsum"].value == pytest.approx(0.5) and r["rouge_lsum"].n == 2
    assert r["qa_em"].value is None and "runs only when asked" in r["qa_em"].reason
    assert list(r) == ["output_length", "str_em", "str_hit", "rouge_lsum", "qa_em", "qa_f1", "qa_hit",
                       "alce_citation_recall", "alce_citation_precision", "alce_citation_f1"]  # fmt: skip


def test_a_metric_without_its_field_is_not_computed_never_zero():
    s = Sample("a", "Who?")
    r = AlceMetric(None, subtask="asqa", metrics=["str_em", "rouge_lsum"]).score_answers([s], [create("formats", "alce").parse("Simon.")]).results
    assert r["str_em"].value is None and "qa_pairs" in r["str_em"].reason
    assert r["rouge_lsum"].value is None and "long answers" in r["rouge_lsum"].reason
    assert list(r) == ["str_em", "rouge_lsum"]


def test_subtask_from_the_fields():
    assert detect_subtask([Sample("a", "q", qa_pairs=[])]) == "asqa"
    assert detect_subtask([Sample("a", "q", claims=["c"])]) == "eli5"
    assert detect_subtask([Sample("a", "q", answers=[["x"], ["y"]])]) == "qampari"
    assert detect_subtask([Sample("a", "q", answers=[["x", "X"]])]) == "short"


def test_qa_answer_decoding_is_the_pipelines():
    context = "Paul Simon wrote it"
    offsets = [[[0, 0], [0, 4], [5, 10], [11, 16], [17, 19], [0, 0]]]
    mask = [[False, True, True, True, True, False]]
    # start at "Paul", end at "Simon": span "Paul Simon"
    starts = [[0.0, 5.0, 1.0, 0.0, 0.0, 9.0]]
    ends = [[0.0, 0.0, 5.0, 1.0, 0.0, 9.0]]
    assert extract_answer(context, starts, ends, mask, offsets) == "Paul Simon"
    # the [CLS] (first token) scoring above every span: no answer
    assert extract_answer(context, [[9.0, 1.0, 0.0, 0.0, 0.0, 0.0]], [[9.0, 0.0, 1.0, 0.0, 0.0, 0.0]], mask, offsets) == ""
    # an end before its start, or a span longer than allowed, is never chosen
    assert extract_answer(context, [[0.0, 0.0, 0.0, 0.0, 6.0, 0.0]], [[0.0, 6.0, 0.0, 0.0, 0.0, 0.0]], mask, offsets, max_answer_len=2) != "Paul Simon wrote it"


def test_qa_scores_from_any_model():
    class Model:
        def answer(self, question, context):
            return {"who wrote": "Paul Simon", "who sang": "nobody"}[question]

    pairs = [QAPair("who wrote", ("Simon", "Paul Simon")), QAPair("who sang", ("Garfunkel",))]
    em, f1, hit = qa_scores(Model(), pairs, "")
    assert (em, f1, hit) == (0.5, 0.5, 0.0)
