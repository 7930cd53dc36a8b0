"""CAQA's figures by hand: per-class F1, micro/macro F1, per complexity, binary, unparseable counted wrong,
Cohen's kappa; raw text mapped by metrics.md §3's rule; bad predictions files."""

from __future__ import annotations

import json

import pytest

from vericite.errors import DataError
from vericite.judges.meta_caqa import Scored, gold_class, kappa, parse_prediction, read_items, read_predictions, score


def test_parse_prediction_takes_the_first_keyword():
    assert parse_prediction("Supportive") == "supportive"
    assert parse_prediction("The citation is partially supportive") == "insufficient"  # "partial" occurs first
    assert parse_prediction("partial support") == "insufficient"
    assert parse_prediction("It contradicts the answer; irrelevant otherwise") == "contradictory"
    assert parse_prediction("Information is MISSING") == "insufficient"
    assert parse_prediction("I don't know") is None and parse_prediction(None) is None
    assert gold_class("partially_supportive") == "insufficient" and gold_class("maybe") is None


def test_figures_by_hand():
    s = Scored(
        gold=["supportive", "supportive", "insufficient", "contradictory", "irrelevant", "irrelevant"],
        pred=["supportive", "irrelevant", None, "contradictory", "irrelevant", "supportive"],
        complexity=["single", "single", "union", "intersection", "concatenation", "concatenation"],
        human=[None] * 6,
    )
    f = score(s, resamples=50)
    assert f["micro_f1"] == pytest.approx(3 / 6)
    # supportive: tp 1, fp 1, fn 1 -> F1 0.5; insufficient: 0 (its only item unparseable: counted wrong)
    assert f["f1_supportive"] == pytest.approx(0.5) and f["f1_insufficient"] == 0.0
    assert f["f1_contradictory"] == pytest.approx(1.0) and f["f1_irrelevant"] == pytest.approx(0.5)
    assert f["macro_f1"] == pytest.approx((0.5 + 0 + 1 + 0.5) / 4)
    assert f["micro_f1_single"] == pytest.approx(0.5) and f["micro_f1_union"] == 0.0 and f["micro_f1_concatenation"] == pytest.approx(0.5)
    # binary: supportive vs rest; the unparseable item is wrong there too
    assert f["binary_micro_f1"] == pytest.approx(3 / 6)
    assert f["unparseable"] == pytest.approx(1 / 6) and f["confusion"]["insufficient"]["unparseable"] == 1
    assert f["cohen_kappa"] is None and set(f["ci"]) >= {"micro_f1", "macro_f1", "f1_supportive"}
    lo, hi = f["ci"]["micro_f1"]
    assert lo <= f["micro_f1"] <= hi


def test_kappa():
    assert kappa(["a", "b", "a", "b"], ["a", "b", "a", "b"]) == pytest.approx(1.0)
    assert kappa(["a", "a", "b", "b"], ["a", "b", "a", "b"]) == pytest.approx(0.0)
    assert kappa([], []) is None


def test_predictions_file(tmp_path):
    p = tmp_path / "preds.jsonl"
    lines = [
        {"label": "supportive", "prediction": "Supportive.", "complexity": "single", "human_label": "supportive"},
        {"label": "irrelevant", "prediction": "no idea", "complexity": "union", "human_label": "irrelevant"},
        {"label": "maybe", "prediction": "supportive", "complexity": "single"},
        {"prediction": "x"},
    ]
    p.write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n", encoding="utf-8")
    s, info = read_predictions(p)
    assert s.gold == ["supportive", "irrelevant"] and s.pred == ["supportive", None]
    assert info["unknown_labels"] == {"maybe": 1} and info["bad_lines"] == 2
    f = score(s, resamples=20)
    assert f["micro_f1"] == 0.5 and f["cohen_kappa"] == pytest.approx(1.0) and f["n_human"] == 2
    empty = tmp_path / "e.jsonl"
    empty.write_text(json.dumps({"label": "nope", "prediction": "x"}) + "\n")
    with pytest.raises(DataError, match="no scorable line"):
        read_predictions(empty)


def test_read_items_by_split(tmp_path):
    p = tmp_path / "d.jsonl"
    rows = [{"question": "q", "answer": "a", "citation": "c", "label": lab, "complexity": "single", "split": sp}
            for lab, sp in (("supportive", "test"), ("irrelevant", "train"), ("odd", "test"))]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = read_items(p, "test")
    assert len(got.items) == 1 and got.other_split == 1 and got.unknown_labels == {"odd": 1}
    with pytest.raises(DataError, match="no CAQA item"):
        read_items(p, "dev")
