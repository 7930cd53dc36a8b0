"""judge-eval --task alce-human: the items read from ALCE's human-evaluation file, the agreement figures, a run."""

from __future__ import annotations

import copy
import json

import pytest

from tests.support.alce_human import D, MINI, MINI_REFERENCE, write_mini, write_table
from vericite.errors import DataError
from vericite.judges.meta_alce import read_alce_human, run_alce_human_eval
from vericite.judges.meta_alce_figures import agreement, all_figures, balanced_accuracy, cohen_kappa, reference_verdict
from vericite.judges.table import TableJudge
from vericite.types import JudgePair, Judgement


def doc(k: int) -> str:
    return f"Title: T{k}\ntext of document {k}"


def test_items_of_the_mini_file(tmp_path):
    f = read_alce_human(write_mini(tmp_path))
    assert f.counts() == {"answers": 3, "sentences": 4, "sentences_without_citations": 1, "recall_items": 3,
                          "precision_items": 4, "distinct_pairs": 5}  # q2's and e1's single citations are their sentences' pairs
    r = f.recall[0]
    assert (r.dataset, r.system, r.id, r.sentence, r.citation) == ("asqa", "sysA.json", "q1", 0, None)
    assert r.premise == doc(1) + "\n" + doc(2)  # ALCE's format, in the order stored
    assert r.hypothesis == "Paris is the capital of France."
    assert [(i.human, i.automatic) for i in f.recall] == [(1, 1), (0, 1), (1, 0)]
    assert [(i.premise, i.citation, i.human, i.automatic) for i in f.precision] == [
        (doc(1), 0, 2, 2), (doc(2), 1, 0, 0), (doc(3), 0, 1, 2), (doc(4), 0, 2, 0)]
    assert f.systems == {"asqa": ["sysA.json"], "eli5": ["sysB.json"]}


def test_limit_is_per_run(tmp_path):
    f = read_alce_human(write_mini(tmp_path), limit=1)
    assert [(i.dataset, i.id) for i in f.recall] == [("asqa", "q1"), ("eli5", "e1")]
    assert f.answers == 2 and f.limit == 1


def test_kappa_and_balanced_accuracy_by_hand():
    gold = [True, True, False, False]
    assert cohen_kappa(gold, [True, False, False, False]) == pytest.approx(0.5)  # p_o 3/4, p_e 1/2
    assert balanced_accuracy(gold, [True, False, False, False]) == pytest.approx(0.75)
    # an abstention agrees with nothing: p_o 3/4, p_e = 1/2 * 1/4 + 1/2 * 1/2
    assert cohen_kappa(gold, [True, None, False, False]) == pytest.approx(0.6)
    assert balanced_accuracy(gold, [True, None, False, False]) == pytest.approx(0.75)
    assert cohen_kappa(gold, gold) == 1.0 and cohen_kappa([True, True], [True, True]) is None
    assert balanced_accuracy([True, True], [True, False]) is None


def test_agreement_auc_only_for_graded_scores():
    gold = [True, True, False, False]
    a = agreement(gold, [True, True, False, False], [1.0, 1.0, 0.0, 0.0], resamples=50)
    assert a["roc_auc"] is None and "0 or 1" in a["roc_auc_note"] and a["ci"]["roc_auc"] is None
    g = agreement(gold, [True, False, True, False], [0.9, 0.4, 0.6, 0.1], resamples=200)
    assert g["roc_auc"] == pytest.approx(0.75)  # 3 of 4 (positive, negative) pairs ranked right
    assert g["cohen_kappa"] == pytest.approx(0.0) and g["balanced_accuracy"] == pytest.approx(0.5)
    lo, hi = g["ci"]["roc_auc"]
    assert 0.0 <= lo <= hi <= 1.0
    assert g["confusion"] == {"supports": {"supported": 1, "not_supported": 1, "abstained": 0},
                              "not_supports": {"supported": 1, "not_supported": 1, "abstained": 0}}


def test_reference_row_by_hand(tmp_path):
    f = read_alce_human(write_mini(tmp_path))
    ref = all_figures(f, reference_verdict, resamples=50)
    for k, v in MINI_REFERENCE.items():
        assert ref[k] == pytest.approx(v), k
    assert ref["datasets"]["asqa"]["recall_n"] == 2 and ref["datasets"]["eli5"]["recall_n"] == 1
    assert ref["recall_roc_auc"] is None


class Graded:
    """A judge with graded probabilities, counting the pairs it is asked."""

    id = "graded@1"

    def __init__(self, p):
        self.p, self.asked = p, 0

    def judge(self, pairs):
        self.asked += len(pairs)
        return [Judgement(self.id, x.claim, x.evidence, self.p[x.evidence], "supported" if self.p[x.evidence] >= 0.5 else "not_supported", "")
                for x in pairs]


def test_run_writes_results_items_and_resumes(tmp_path):
    f = read_alce_human(write_mini(tmp_path))
    probs = {doc(1) + "\n" + doc(2): 0.9, doc(1): 0.8, doc(2): 0.3, doc(3): 0.6, doc(4): 0.2}
    judge = Graded(probs)
    res = run_alce_human_eval(judge, f, tmp_path / "o", resamples=50)
    assert judge.asked == 5  # every distinct pair once
    # recall: gold [1, 0, 1], judge [T (0.9), T (0.6), F (0.2)]: kappa -0.5, AUC 0.5 (0.9 > 0.6; 0.2 < 0.6)
    assert res["recall_cohen_kappa"] == pytest.approx(-0.5) and res["recall_roc_auc"] == pytest.approx(0.5)
    assert res["recall_n"] == 3 and res["precision_n"] == 4 and res["task"] == "alce-human"
    assert res["reference"]["recall_cohen_kappa"] == pytest.approx(-0.5) and res["reference"]["judge"].startswith("ALCE's TRUE")
    assert res["counts"]["sentences_without_citations"] == 1
    items = [json.loads(x) for x in (tmp_path / "o" / "items.jsonl").read_text().splitlines()]
    assert len(items) == 7 and items[0]["kind"] == "recall" and items[3]["citation"] == 0
    assert len((tmp_path / "o" / "judgements.jsonl").read_text().splitlines()) == 5
    again = Graded(probs)
    res2 = run_alce_human_eval(again, f, tmp_path / "o", resume=True, resamples=50)
    assert again.asked == 0 and res2["resumed_pairs"] == 5
    assert res2["recall_cohen_kappa"] == res["recall_cohen_kappa"]
    other = Graded(probs)
    other.id = "other@1"  # another judge's judgements are not reused
    run_alce_human_eval(other, f, tmp_path / "o", resume=True, resamples=50)
    assert other.asked == 5


def test_table_judge_from_the_true_labels_reproduces_the_reference(tmp_path):
    f = read_alce_human(write_mini(tmp_path))
    judge = TableJudge(write_table(tmp_path / "t.jsonl", MINI))
    res = run_alce_human_eval(judge, f, tmp_path / "o", resamples=50)
    for k in ("recall_cohen_kappa", "recall_balanced_accuracy", "precision_cohen_kappa", "precision_balanced_accuracy"):
        assert res[k] == res["reference"][k], k
    assert res["failed"] == 0


def test_without_automatic_labels_there_is_no_reference(tmp_path):
    data = copy.deepcopy(MINI)
    for systems in data.values():
        for answers in systems.values():
            for a in answers.values():
                a.pop("automatic_recall_scores", None)
                a.pop("automatic_citation_precision_scores", None)
    f = read_alce_human(write_mini(tmp_path, data))
    res = run_alce_human_eval(Graded({doc(1) + "\n" + doc(2): 0.9, doc(1): 0.8, doc(2): 0.3, doc(3): 0.6, doc(4): 0.2}), f, tmp_path / "o", resamples=20)
    assert res["reference"] is None and "automatic" in res["reference_note"]


@pytest.mark.parametrize(
    "data, match",
    [
        ([1, 2], "want a JSON object"),
        ({"asqa": []}, "want {system"),
        ({"asqa": {"s": {"q": {"output": "x"}}}}, "'sentences' list"),
        ({"asqa": {"s": {"q": {"sentences": [{"text": "a [1].", "citations": [{**D[1], "citation_precision_score": 3}], "sentence_recall_score": 1}]}}}}, "citation_precision_score is 3"),
        ({"asqa": {"s": {"q": {"sentences": [{"text": "a [1].", "citations": [D[1]], "sentence_recall_score": 1}]}}}}, "citation_precision_score is None"),
        ({"asqa": {"s": {"q": {"sentences": [{"text": "a.", "citations": []}]}}}}, "no sentence"),
        ({"asqa": {"s": {"overall_results": {}}}}, "holds no answer"),
    ],
)
def test_bad_shapes_are_one_error(tmp_path, data, match):
    with pytest.raises(DataError, match=match):
        read_alce_human(write_mini(tmp_path, data))


def test_missing_and_broken_files(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_alce_human(tmp_path / "nope.json")
    (tmp_path / "b.json").write_text("{", encoding="utf-8")
    with pytest.raises(DataError, match="not JSON"):
        read_alce_human(tmp_path / "b.json")


def test_pairs_are_judge_pairs(tmp_path):
    f = read_alce_human(write_mini(tmp_path))
    assert f.pairs()[0] == JudgePair(doc(1) + "\n" + doc(2), "Paris is the capital of France.")


def test_trust_words_show_kappa_beside_alces_judge():
    from vericite.judges.trust import trust_words

    meas = {"task": "alce-human", "balanced_accuracy": 0.6, "cohen_kappa": 0.3, "roc_auc": None, "n": 26,
            "data": "ALCE human labels, first answer of each run",
            "reference": {"judge": "TRUE T5-11B", "cohen_kappa": 0.5, "balanced_accuracy": 0.75}}
    words = trust_words(meas)
    assert "recall κ 0.300" in words and "ROC AUC n/a" in words and "ALCE's TRUE T5-11B on the same sentences: κ 0.500" in words
    assert trust_words({"balanced_accuracy": 0.7, "roc_auc": 0.8, "data": "VitaminC"}) == "measured balanced accuracy 0.700, ROC AUC 0.800 on VitaminC"
    assert trust_words(None) == "accuracy not measured"



def test_true_table_is_the_files_automatic_labels(tmp_path):
    from tests.support.alce_human import true_table as by_hand
    from vericite.judges.meta_alce import true_table

    f = read_alce_human(write_mini(tmp_path))
    assert sorted(map(json.dumps, true_table(f))) == sorted(map(json.dumps, by_hand(MINI)))

