"""``vericite train llm3f`` then ``judge-eval --judge llm3f:<file>`` (the fake model): the fit file names the model,
the data and the pairs; judge-eval records the biases and refuses to measure the judge on the pairs it was fitted
on; a missing fit file is one line, not a traceback."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

LABELS = ("supports", "refutes", "not_enough_info")


def pairs_file(tmp_path, n=12):
    f = tmp_path / "pairs.jsonl"
    f.write_text("".join(json.dumps({"evidence": f"evidence {i}", "claim": f"claim {i}", "label": LABELS[i % 3]}) + "\n" for i in range(n)), encoding="utf-8")
    return f


def test_train_llm3f_then_judge_eval_on_other_pairs(tmp_path):
    data, fit = pairs_file(tmp_path), tmp_path / "fit.json"
    r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--data", str(data), "--skip", "6", "--limit", "6", "--no-cache", "--out", str(fit), "-q"])
    assert r.exit_code == 0, r.output
    assert f"judge: llm3f:{fit}" in r.output
    rec = json.loads(fit.read_text())
    assert rec["data"]["skip"] == 6 and rec["data"]["n"] == 6 and rec["model"]["name"] == "fake" and rec["bias"]["supports"] == 0.0
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", f"llm3f:{fit}", "--data", str(data), "--limit", "6", "--no-cache", "--out", str(tmp_path / "j"), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "j" / "results.json").read_text())
    assert res["judge_kind"] == "llm3f" and res["judge"].startswith("llm3f:fake:") and "three_way" in res
    assert res["judge_options"]["fit_sha256"] and res["calibration"]["bias"] == rec["bias"] and res["calibration"]["data"]["skip"] == 6
    # the pairs it was fitted on are refused
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", f"llm3f:{fit}", "--data", str(data), "--limit", "7", "--no-cache", "--out", str(tmp_path / "k"), "-q"])
    assert r.exit_code != 0 and "was fitted on pairs 7-12" in r.output and "Traceback" not in r.output


def test_a_missing_fit_file_is_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", f"llm3f:{tmp_path / 'none.json'}", "--data", str(pairs_file(tmp_path)), "--out", str(tmp_path / "j"), "-q"])
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit)
    assert "fit file" in r.output and "not found" in r.output and len(r.output.strip().splitlines()) == 1


def test_conner_evaluation_with_llm3f_records_its_biases(tmp_path):
    from tests.e2e.test_conner_evaluate import LINES, write

    data, fit = pairs_file(tmp_path), tmp_path / "fit.json"
    r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--data", str(data), "--skip", "0", "--limit", "12", "--no-cache", "--out", str(fit), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(write(tmp_path, LINES)), "-o", str(tmp_path / "out"),
                                 "--judge", f"llm3f:{fit}", "--lm", "fake", "--relevance-model", "fake", "-q", "--resamples", "50"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    for purpose in ("factuality", "validity"):
        j = res["judges"][purpose]
        assert j["id"].startswith("llm3f:fake:") and j["calibration"]["bias"] == json.loads(fit.read_text())["bias"]


def test_the_report_shows_the_fitted_biases(tmp_path):
    from vericite.report.judge_eval import judge_block

    data, fit = pairs_file(tmp_path), tmp_path / "fit.json"
    CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--data", str(data), "--skip", "6", "--limit", "6", "--no-cache", "--out", str(fit), "-q"])
    r = CliRunner().invoke(cli, ["judge-eval", "--judge", f"llm3f:{fit}", "--data", str(data), "--limit", "6", "--no-cache", "--out", str(tmp_path / "j"), "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "j" / "results.json").read_text())
    block = judge_block(res)
    assert "fitted log-bias" in block and "fitted on 6 pairs after the first 6" in block and "content-free prior" not in block
    assert "fitted log-bias" not in judge_block({**res, "calibration": None})


def test_train_llm3f_refuses_the_shared_vitaminc_pairs(tmp_path, shared_data):
    """The shared VitaminC pairs are for evaluation only (their README): fitting on them is one line, no model loaded."""
    shared = shared_data
    copy = tmp_path / "copy.jsonl"  # the same bytes under another name are refused too
    copy.write_bytes((shared / "vitaminc" / "dev.jsonl").read_bytes())
    for data in (shared / "vitaminc" / "dev.jsonl", copy):
        r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--data", str(data), "--no-cache", "--out", str(tmp_path / "f.json"), "-q"])
        assert r.exit_code != 0 and "evaluation only" in r.output and "Traceback" not in r.output
        assert not (tmp_path / "f.json").exists()
    r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--out", str(tmp_path / "f.json"), "-q"])
    assert r.exit_code != 0 and "--data" in r.output
