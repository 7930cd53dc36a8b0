"""generate -> evaluate -> run -> report through the real registry, store, parser and metrics, with a
deterministic fake model that cites what it is given. Also: a run killed with SIGKILL resumes without losing
or duplicating a sample."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.support.pipeline import SLOW_RUN, citing_reply, make_samples, wait_for_lines
from vericite.cli.main import cli
from vericite.runs.config import GenerateConfig
from vericite.runs.loop import generate_run
from vericite.models.fake import FakeBackend


def test_generate_then_evaluate_then_report(tmp_path):
    backend = FakeBackend(replies=citing_reply)
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given")
    manifest = generate_run(cfg, tmp_path / "gen", samples=make_samples(), backend=backend, progress=False)
    assert manifest["status"] == "complete" and manifest["summary"]["n_done"] == 2
    assert manifest["prompt"] == "kalma-answer@1" and manifest["model"]["backend"] == "fake"
    rec = [json.loads(l) for l in (tmp_path / "gen" / "samples.jsonl").read_text().splitlines()]
    assert rec[0]["citation_status"] == {"ok": 2} and rec[0]["na_count"] == 1

    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "gen" / "samples.jsonl"), "-o", str(tmp_path / "ev"),
                                 "--fail-under", "citation_correctness=0.4"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    m = res["metrics"]
    assert m["citation_correctness"]["value"] == pytest.approx(0.5)  # 2 of 4 citations exact
    assert m["citation_precision_micro"]["value"] == pytest.approx(0.5)  # painter and poet are gold
    assert m["citation_recall_micro"]["value"] == pytest.approx(2 / 3)
    assert m["geval_fluency"]["value"] is None and "geval" in m["geval_fluency"]["reason"].lower()
    assert res["model"]["backend"] == "fake" and res["judges"]["alignment"]["id"] == "triple@1"
    trust = res["judges"]["alignment"]["measured"]  # the report says how far to trust it: measured on the same task
    assert trust["task"] == "kalma-alignment" and 0 < trust["balanced_accuracy"] < 1
    assert "judge for alignment: triple@1 — measured balanced accuracy" in r.output
    ev = [json.loads(l) for l in (tmp_path / "ev" / "samples.jsonl").read_text().splitlines()]
    assert ev[0]["judgements"] and {j["purpose"] for j in ev[0]["judgements"]} == {"alignment", "na"}

    # the gate fails when a metric is below its threshold
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "gen" / "samples.jsonl"), "-o", str(tmp_path / "ev2"),
                                 "--fail-under", "citation_correctness=0.9"])
    assert r.exit_code == 1 and "citation_correctness" in r.output

    r = CliRunner().invoke(cli, ["report", str(tmp_path / "ev")])
    assert r.exit_code == 0 and (tmp_path / "ev" / "report.html").stat().st_size > 5000


def test_evaluate_counts_bad_lines_and_keeps_going(tmp_path):
    good = {"id": "a", "question": "q?", "answer": "x [Q1, p: v].", "knowledge": [{"subject": "Q1", "property": "p", "value": "v"}]}
    lines = [json.dumps(good), "not json", json.dumps({"id": "b", "question": "q?"}), json.dumps({**good, "id": "c", "answer": ""})]
    (tmp_path / "in.jsonl").write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["counts"]["bad_lines"] == 2 and res["counts"]["samples"] == 2
    assert res["metrics"]["citation_correctness"]["value"] == 1.0
    assert res["metrics"]["citation_precision_micro"]["value"] is None  # no gold: not computed, never 0
    assert res["warnings"][0]["reason"] == "empty answer"
    bad = [json.loads(l) for l in (tmp_path / "ev" / "bad_lines.jsonl").read_text().splitlines()]
    assert [b["line"] for b in bad] == [2, 3]


def test_evaluate_shows_judging_progress_unless_quiet(tmp_path, monkeypatch):
    import vericite.progress as progress

    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.0)  # every step past the interval: a line per judge call
    backend = FakeBackend(replies=citing_reply)
    generate_run(GenerateConfig(dataset="x", model="fake", knowledge="given"), tmp_path / "gen", samples=make_samples(), backend=backend, progress=False)
    args = ["evaluate", "-i", str(tmp_path / "gen" / "samples.jsonl"), "-o", str(tmp_path / "ev")]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and re.search(r"^judging: (\d+)/\1 after 0:00$", r.output, re.M), r.output
    r = CliRunner().invoke(cli, [*args, "-q"])
    assert r.exit_code == 0 and "judging:" not in r.output


def test_evaluate_user_errors_are_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "input file not found" in r.output and "Traceback" not in r.output
    (tmp_path / "in.jsonl").write_text('{"id": "a", "question": "q", "answer": "x", "knowledge": []}\n')
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o"), "--fail-under", "citation_f1=0.3"])
    assert r.exit_code == 2 and "did you mean 'citation_f1_micro'" in r.output
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "o"), "--judge", "tripel"])
    assert r.exit_code == 2 and "did you mean 'triple'" in r.output


def test_run_config_with_experiment(tmp_path, shared_data):
    cfg = tmp_path / "ci.yaml"
    cfg.write_text("name: t\ndataset: biokalma-gold\nmodel: fake\nlimit: 4\nexperiment: conscious-incompetence\nlevels: [0, 2]\nresamples: 50\n")
    from vericite.runs.runner import load_run_config, run_config

    res = run_config(load_run_config(cfg, {}), tmp_path / "out", progress=False, backend=FakeBackend(replies=citing_reply))
    rows = res["experiments"]["conscious-incompetence"]["rows"]
    assert [r["level"] for r in rows] == [0, 2] and all(r["n"] == 4 for r in rows)
    assert rows[0]["metrics"]["na_recall"]["value"] is None  # nothing removed at level 0
    assert rows[1]["metrics"]["na_recall"]["value"] is not None
    lvl2 = [json.loads(l) for l in (tmp_path / "out" / "level-2" / "samples.jsonl").read_text().splitlines()]
    assert all(len(r["absent"]) == 2 for r in lvl2)
    assert json.loads((tmp_path / "out" / "results.json").read_text())["kind"] == "run"


def test_run_with_any_registered_experiment_records_what_each_level_left_out(tmp_path):
    """The runner reads an experiment only through the Experiment Protocol (section, presentation, the level's
    samples with n_skipped and skip_reason): the fake experiment runs as KaLMA's do."""
    data = tmp_path / "q.jsonl"
    one = {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}
    rows = [{"id": "two", "question": "What did Ann do?", "knowledge": [one, dict(one, property="birthplace", value="Oslo")]},
            {"id": "none", "question": "Where was Ann born?", "knowledge": []}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cfg = tmp_path / "fake.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\nexperiment: fake\nlevels: [0, 1]\nresamples: 10\n")
    from vericite.runs.runner import load_run_config, run_config

    res = run_config(load_run_config(cfg, {}), tmp_path / "out", progress=False, backend=FakeBackend(replies=citing_reply))
    exp = res["experiments"]["fake"]
    assert exp["section"] == "" and exp["descending"] is False and exp["curves"] == []
    assert [(r["level"], r["n"], r["skipped"]) for r in exp["rows"]] == [(level, 1, {"n": 1, "reason": "fewer than 1 triples"}) for level in (0, 1)]


def test_a_runs_judge_usage_sums_its_levels(tmp_path):
    """An LLM judge's calls at each level are in that level's results.json, and the run's results.json sums them."""
    data = tmp_path / "q.jsonl"
    one = {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}
    data.write_text(json.dumps({"id": "two", "question": "What did Ann do?", "knowledge": [one, dict(one, property="birthplace", value="Oslo")]}) + "\n", encoding="utf-8")
    cfg = tmp_path / "fake.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: fake\nexperiment: fake\nlevels: [0, 1]\nresamples: 10\njudge: llm:fake:judge\ncache: false\n")
    from vericite.runs.runner import load_run_config, run_config

    res = run_config(load_run_config(cfg, {}), tmp_path / "out", progress=False, backend=FakeBackend(replies=citing_reply))
    levels = [json.loads((tmp_path / "out" / f"level-{x}" / "eval" / "results.json").read_text())["judge_usage"]["fake:judge"] for x in (0, 1)]
    assert all(u["calls"] > 0 for u in levels)
    assert res["judge_usage"]["fake:judge"] == {k: levels[0][k] + levels[1][k] for k in ("prompt_tokens", "completion_tokens", "calls")}


def test_unknown_config_option_is_refused(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\nmodle: fake\n")
    r = CliRunner().invoke(cli, ["run", str(cfg)])
    assert r.exit_code == 2 and "modle" in r.output and "Traceback" not in r.output




def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SLOW_RUN)
    out = tmp_path / "r"
    env = {**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")}
    # the run stops after 10 samples (no release file: it waits there until killed, 120 s at most), so the kill
    # lands mid-way however slow the machine
    p = subprocess.Popen([sys.executable, str(script), str(out)], env={**env, "SLOW_RUN_HOLD_AT": "10", "SLOW_RUN_RELEASE": str(tmp_path / "release")})
    samples = out / "samples.jsonl"
    wait_for_lines(samples, 10)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    done_before = samples.read_text().count("\n")
    assert 10 <= done_before < 60, "the run should have been killed mid-way"
    subprocess.run([sys.executable, str(script), str(out), "--resume"], env=env, check=True, timeout=120)
    ids = [json.loads(l)["id"] for l in samples.read_text().splitlines()]
    assert sorted(ids) == [f"s{i:03d}" for i in range(60)]  # none lost, none twice
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["resumed"]
