"""The calibrated three-way judge (``llm3c:``) wherever a three-way judge is taken: CONNER's evaluation records its
content-free prior beside its id, and judge-eval measures it three-way and records the prior (the fake model)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

from tests.e2e.test_conner_evaluate import LINES, write

PAIRS = [("Rome is in Italy.", "Rome is in Italy.", "SUPPORTS"), ("Rome is in Italy.", "Rome is not in Italy.", "REFUTES"),
         ("Rome is old.", "Paris is big.", "NOT ENOUGH INFO")]


def test_conner_evaluation_with_llm3c_records_the_prior(tmp_path):
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "out"),
                                 "--judge", "llm3c:fake", "--lm", "fake", "--relevance-model", "fake", "-q", "--resamples", "50"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert res["evaluation"]["conner"]["judge"] == "llm3c:fake@1" and res["metrics"]["factuality"]["n"] == 1
    for purpose in ("factuality", "validity"):
        j = res["judges"][purpose]
        assert j["id"] == "llm3c:fake@1" and j["calibration"]["id"] == "content-free@1"
        assert set(j["calibration"]["content_free_prior"]) == {"supports", "refutes", "not_enough_info"}
    # the uncalibrated llm3 records no calibration
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "plain"),
                                 "--judge", "llm3:fake", "--lm", "fake", "--relevance-model", "fake", "-q", "--resamples", "50"])
    assert r.exit_code == 0, r.output
    assert "calibration" not in json.loads((tmp_path / "plain" / "results.json").read_text())["judges"]["factuality"]


def test_judge_eval_measures_llm3c_three_way_and_records_the_prior(tmp_path):
    data = tmp_path / "p.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in PAIRS), encoding="utf-8")
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", "llm3c:fake", "--data", str(data), "--out", str(tmp_path / "l"), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "l" / "results.json").read_text())
    assert res["judge"] == "llm3c:fake@1" and res["judge_kind"] == "llm3c" and "three_way" in res
    assert res["judge_options"] == {"calibration": "content-free@1", "content_free_inputs": ["N/A", "", "[MASK]"]}
    assert abs(sum(res["calibration"]["content_free_prior"].values()) - 1) < 1e-9
    raw = json.loads(json.loads((tmp_path / "l" / "judgements.jsonl").read_text().splitlines()[0])["raw"])
    assert set(raw) == {"label_logmass", "uncalibrated", "content_free_prior", "calibration"}
    from vericite.report.judge_eval import judge_block

    assert "content-free prior" in judge_block(res) and "content-free prior" not in judge_block({**res, "calibration": None})
