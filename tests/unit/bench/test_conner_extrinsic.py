"""CONNER's Tables 5–6 from evaluation folders (``vericite.bench.conner_extrinsic``): Somers' D of each extrinsic
measure given each intrinsic one, per group, folders of a group pooled, missing values left out and counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from vericite.bench import conner_extrinsic as X


def folder(tmp_path: Path, name: str, scores: list[dict[str, Any]], torn: bool = False) -> Path:
    d = tmp_path / name
    d.mkdir()
    lines = [json.dumps({"id": f"q{i}", "scores": {"conner": s}}) for i, s in enumerate(scores)]
    (d / "samples.jsonl").write_text("\n".join(lines) + ("\n{\"id\": \"torn" if torn else "\n"), encoding="utf-8")
    return d


def item(f: float, h: float | None, v: float | None) -> dict[str, Any]:
    # factuality orders helpfulness the same way and validity the other way; relevance is constant (all ties)
    return {"factuality": f, "relevance": 0.9, "coherence_sentence": 0.2, "coherence_paragraph": None, "informativeness": 1 - f, "helpfulness": h, "validity": v}


def test_somers_d_per_cell_with_missing_values_left_out_and_counted(tmp_path):
    d = folder(tmp_path, "a", [item(0.1, 0.0, 0.9), item(0.2, 0.1, 0.8), item(0.3, 0.2, 0.7), item(0.4, None, 0.6), item(0.5, 0.4, float("nan"))], torn=True)
    r = X.correlations({"g": X.read_scores(d)}, resamples=50)["g"]
    assert r["items"] == 5
    h, v = r["somers_d"]["helpfulness"], r["somers_d"]["validity"]
    assert h["factuality"]["somers_d"] == pytest.approx(1.0) and h["factuality"]["n"] == 4 and h["factuality"]["left_out"] == 1
    assert v["factuality"]["somers_d"] == pytest.approx(-1.0) and v["factuality"]["left_out"] == 1  # the NaN validity
    assert h["informativeness"]["somers_d"] == pytest.approx(-1.0)
    assert h["relevance"]["somers_d"] is None and h["relevance"]["ci95"] == [None, None]  # every pair tied on x
    assert h["coherence_paragraph"]["n"] == 0 and h["coherence_paragraph"]["left_out"] == 5


def test_folders_of_one_group_are_pooled_and_the_table_marks_intervals_that_exclude_zero(tmp_path, capsys):
    rising = [item(i / 10, i / 10, 0.5) for i in range(8)]
    a, b = folder(tmp_path, "a", rising[:4]), folder(tmp_path, "b", rising[4:])
    c = folder(tmp_path, "c", [item(i / 10, 1 - i / 10, 0.5) for i in range(8)])
    assert X.main([str(a), str(b), str(c), "--group", "LLMs", "--group", "LLMs", "--group", "retrieved", "--resamples", "200"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("| group (items) | extrinsic | factuality | relevance")
    llm_help = next(line for line in out if line.startswith("| LLMs (8) | helpfulness"))
    assert llm_help.split(" | ")[2].startswith("+1.00† [")
    ret_help = next(line for line in out if line.startswith("| retrieved (8) | helpfulness"))
    assert ret_help.split(" | ")[2].startswith("-1.00† [")
    assert X.main([str(a), "--json", "--resamples", "20"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["groups"][str(a)]["somers_d"]["validity"]["factuality"]["somers_d"] == 0.0  # validity constant: every pair tied on it
    assert got["groups"][str(a)]["somers_d"]["validity"]["factuality"]["n"] == 4


def test_user_mistakes_are_one_line_errors(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert X.main([str(empty)]) == 2
    assert "no samples.jsonl" in capsys.readouterr().err
    other = folder(tmp_path, "alce", [])
    (other / "samples.jsonl").write_text(json.dumps({"id": "q", "scores": {"alce": {"str_em": 1}}}) + "\n", encoding="utf-8")
    assert X.main([str(other)]) == 2
    assert "no item has CONNER scores" in capsys.readouterr().err
    a = folder(tmp_path, "a", [item(0.1, 0.1, 0.1)])
    assert X.main([str(a), "--group", "x", "--group", "y"]) == 2
    assert "2 groups for 1 folders" in capsys.readouterr().err
    for bad in ("0", "-3"):
        assert X.main([str(a), "--resamples", bad]) == 2
        assert "--resamples must be at least 1" in capsys.readouterr().err
