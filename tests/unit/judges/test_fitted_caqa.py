"""llm3f fitted on a `vericite build caqa` dataset (judges/fit_bias.py): the file is told by its fields, the items of
one split (train by default) are judged as judge-eval --task caqa judges them (meta_caqa.item_pair), their four
classes read as three; the fit file records the kind, split and mapping; the judge's overlap check knows the split;
a fit file written before the data kind was recorded still loads."""

from __future__ import annotations

import json
import math

import pytest

from tests.unit.judges.test_fitted import CLAIMS, Scorer, write_fit
from vericite.errors import VericiteError
from vericite.judges.fit_bias import CAQA_TO_3WAY, data_kind, fit_on_pairs, read_fit_pairs
from vericite.judges.fitted import FittedLLM3Judge, read_fit
from vericite.judges.meta_caqa import item_pair

#: a three-way gold label as CAQA classes: not_enough_info alternates between insufficient and irrelevant
FOUR = {"supports": ["supportive"], "refutes": ["contradictory"], "not_enough_info": ["insufficient", "irrelevant"]}


def caqa_items(test_lead: int = 2) -> list[dict]:
    """``test_lead`` test items first (never fitted on by default), then one train item per claim; the answer
    statement is the claim the fake scorer knows, the citation its evidence."""
    items = [{"question": f"q lead {i}", "answer": "supports 0", "citation": f"lead citation {i}", "label": "supportive",
              "complexity": "single", "split": "test"} for i in range(test_lead)]
    for n, (claim, (gold, _)) in enumerate(CLAIMS.items()):
        label = FOUR[gold][n % len(FOUR[gold])]
        items.append({"question": f"q {claim}", "answer": claim, "citation": f"cited for {claim}", "label": label,
                      "complexity": "union", "split": "train"})
    return items


def write_caqa(path, items=None):
    path.write_text("".join(json.dumps(d) + "\n" for d in (caqa_items() if items is None else items)), encoding="utf-8")
    return path


def test_a_caqa_dataset_is_told_by_its_fields(tmp_path):
    assert data_kind(write_caqa(tmp_path / "c.jsonl")) == "caqa"
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"evidence": "e", "claim": "c", "label": "supports"}) + "\n", encoding="utf-8")
    assert data_kind(pairs) == "pairs" and data_kind(tmp_path / "missing.jsonl") == "pairs"


def test_the_train_split_is_fitted_on_as_judge_eval_caqa_judges_it_four_classes_read_as_three(tmp_path):
    data = write_caqa(tmp_path / "caqa.jsonl")
    train = [it for it in caqa_items() if it["split"] == "train"]
    chosen = read_fit_pairs(data)
    assert chosen.pairs == [item_pair(it) for it in train]  # the one conversion: citation -> evidence, answer -> claim
    assert chosen.gold == [g for g, _ in CLAIMS.values()]
    scorer = Scorer()
    rec = fit_on_pairs(scorer, data, limit=100)
    assert scorer.asked == len(train)  # the two test items are not judged
    d = rec["data"]
    assert d["kind"] == "caqa" and d["split"] == "train" and d["skip"] == 0 and d["n"] == len(train) and len(d["sha256"]) == 64
    assert d["mapping"] == CAQA_TO_3WAY == {"supportive": "supports", "contradictory": "refutes",
                                            "insufficient": "not_enough_info", "irrelevant": "not_enough_info"}
    assert d["classes"] == {"supportive": 2, "contradictory": 2, "insufficient": 1, "irrelevant": 1}
    assert rec["pairs"]["gold"] == {"supports": 2, "refutes": 2, "not_enough_info": 2}
    assert rec["bias"]["not_enough_info"] == pytest.approx(-math.log(5.0), abs=1e-4) and rec["after"]["balanced_accuracy_3way"] == 1.0
    assert "cited for" not in json.dumps(rec) and "q supports" not in json.dumps(rec)  # no item text in the fit file


def test_skip_and_limit_count_the_splits_items(tmp_path):
    data = write_caqa(tmp_path / "caqa.jsonl")
    chosen = read_fit_pairs(data, split="train", skip=1, limit=3)
    assert [p.claim for p in chosen.pairs] == list(CLAIMS)[1:4] and chosen.data["skip"] == 1 and chosen.data["n"] == 3
    assert [p.evidence for p in read_fit_pairs(data, split="test").pairs] == ["lead citation 0", "lead citation 1"]


def test_a_split_with_no_item_is_one_clear_line(tmp_path):
    data = write_caqa(tmp_path / "caqa.jsonl")
    with pytest.raises(VericiteError, match=r"holds no item of split 'dev' \(its items: test 2, train 6\): give --split one of those") as e:
        read_fit_pairs(data, split="dev")
    assert "\n" not in str(e.value)
    with pytest.raises(VericiteError, match="holds 6 items of split 'train': none after the first 6"):
        read_fit_pairs(data, skip=6)


def test_split_is_refused_for_a_pairs_file(tmp_path):
    pairs = tmp_path / "p.jsonl"
    pairs.write_text(json.dumps({"evidence": "e", "claim": "c", "label": "supports"}) + "\n", encoding="utf-8")
    with pytest.raises(VericiteError, match="--split is for a `vericite build caqa` dataset"):
        read_fit_pairs(pairs, split="train")


def test_overlap_of_a_caqa_fit_counts_items_of_its_split(tmp_path):
    data = write_caqa(tmp_path / "caqa.jsonl")
    rec = fit_on_pairs(Scorer(), data, skip=1, limit=5)
    f = tmp_path / "fit.json"
    f.write_text(json.dumps(rec), encoding="utf-8")
    fit, sha = read_fit(f)
    judge = FittedLLM3Judge(Scorer(), fit, sha, path=f)
    why = judge.overlap(rec["data"]["sha256"], 0, 3, "train")
    assert "fitted on items 2-6 of split 'train'" in why and "judges items 1-3 of split 'train'" in why and "(2 in both)" in why
    assert judge.overlap(rec["data"]["sha256"], 0, 1, "train") is None  # the first train item was skipped
    assert judge.overlap(rec["data"]["sha256"], 0, 100, "test") is None and judge.overlap(rec["data"]["sha256"], 0, 100) is None


def test_a_fit_file_without_a_data_kind_still_loads_and_overlaps_as_pairs(tmp_path):
    """Compatibility guard: fit files written before ``data.kind`` (labelled pairs) read unchanged (the format was
    not bumped); their overlap check is the pairs one."""
    f, rec = write_fit(tmp_path, lead=3)
    old = json.loads(f.read_text())
    del old["data"]["kind"]
    g = tmp_path / "old.json"
    g.write_text(json.dumps(old), encoding="utf-8")
    fit, sha = read_fit(g)
    judge = FittedLLM3Judge(Scorer(), fit, sha, path=g)
    assert "fitted on pairs 4-9" in judge.overlap(rec["data"]["sha256"], 0, 4) and rec["data"]["kind"] == "pairs"
    assert [j.label for j in judge.judge(list(read_fit_pairs(tmp_path / "pairs.jsonl", skip=3).pairs))] == [g for g, _ in CLAIMS.values()]
