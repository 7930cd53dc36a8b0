"""scripts/caqa_transfer.py: LLM-written CAQA items paired with their template twins by (query, class)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.paths import load_script


def _script():
    return load_script("scripts/caqa_transfer.py")


def _item(q: str, label: str, text: str, split: str = "test") -> dict:
    return {"query": {"atoms": [{"s": q}]}, "label": label, "citation": text, "split": split}


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_match_then_compare(tmp_path, capsys):
    t = _script()
    llm = _write(tmp_path / "llm.jsonl", [_item("A", "supportive", "x"), _item("A", "irrelevant", "y"), _item("B", "supportive", "z"), _item("C", "supportive", "w")])
    # the pool: twins of A's two items and B's (twice: the first kept), another class of C only, an unrelated query
    pool = _write(tmp_path / "pool.jsonl", [_item("A", "supportive", "X"), _item("B", "supportive", "Z"), _item("B", "supportive", "Z2"),
                                           _item("A", "irrelevant", "Y"), _item("C", "contradictory", "W"), _item("D", "supportive", "V")])
    twins = str(tmp_path / "twins.jsonl")
    t.main(["match", "--llm", llm, "--pool", pool, "--out", twins])
    assert [r["citation"] for r in map(json.loads, open(twins))] == ["X", "Z", "Y"]
    assert "3 of 4 items have a template twin" in capsys.readouterr().out

    # judgements in each file's order: the judge gets every twin right, and only A-irrelevant of the LLM items
    for name, labels in (("llm-eval", ["contradictory", "irrelevant", "insufficient", "supportive"]), ("twins-eval", ["supportive", "supportive", "irrelevant"])):
        (tmp_path / name).mkdir()
        _write(tmp_path / name / "judgements.jsonl", [{"label": x} for x in labels])
    train = _write(tmp_path / "train.jsonl", [_item("B", "supportive", "t", split="train")])
    t.main(["compare", "--llm", llm, "--twins", twins, "--llm-eval", str(tmp_path / "llm-eval"),
            "--twins-eval", str(tmp_path / "twins-eval"), "--train", train])
    out = capsys.readouterr().out
    assert "all twins: 3 items, 2 queries; accuracy template 1.000, LLM 0.333, LLM - template -0.667" in out
    assert "queries not in the train split: 2 items, 1 queries; accuracy template 1.000, LLM 0.500" in out
    assert "supportive: n 2, template 1.000, LLM 0.000" in out
