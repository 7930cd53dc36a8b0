"""benchmarks/bench_vtg.py on small run folders: the judges' tokens per method (VTG's ``verify`` component,
rerank's ``judge_usage``), and runs written before judges reported tokens said to leave them out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def folder(path: Path, records: list[dict]) -> Path:
    path.mkdir()
    (path / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def vtg(i: str, verify: dict) -> dict:
    comp = {"sentence": {"prompt_tokens": 100, "completion_tokens": 10, "calls": 2}, "verify": verify}
    total = {k: sum(c.get(k, 0) for c in comp.values()) for k in ("prompt_tokens", "completion_tokens", "calls")}
    return {"id": i, "usage": total, "seconds": 1.0, "vtg": {"components": comp, "seconds": {"sentence": 1.0}, "judge": {"calls": 2}}}


def bench(*args: Path) -> str:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_vtg.py"), "--vtg", str(args[0])]
    for b in args[1:]:
        cmd += ["--baseline", str(b)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_judge_tokens_per_method(tmp_path):
    v = folder(tmp_path / "vtg", [vtg("q1", {"prompt_tokens": 50, "completion_tokens": 2, "calls": 2})])
    rr = folder(tmp_path / "rerank", [{"id": "q1", "usage": {"prompt_tokens": 300, "completion_tokens": 40, "calls": 8}, "seconds": 2.0,
                                       "rerank": {"judge_usage": {"prompt_tokens": 100, "completion_tokens": 4, "calls": 4}}}])
    out = bench(v, rr)
    assert "vtg: judge 52 tokens in 2 calls (52 per question, 32% of its tokens)" in out  # 52 of 162
    assert "rerank: judge 104 tokens in 4 calls (104 per question, 31% of its tokens)" in out  # 104 of 340
    assert "VTG / rerank tokens (medians): 0.48" in out and "lower bound" not in out


def test_runs_written_before_judges_reported_tokens_are_said_to_leave_them_out(tmp_path):
    v = folder(tmp_path / "vtg", [vtg("q1", {"prompt_tokens": 0, "completion_tokens": 0, "calls": 2})])
    rr = folder(tmp_path / "rerank", [{"id": "q1", "usage": {"prompt_tokens": 300, "completion_tokens": 40, "calls": 8}, "rerank": {"chosen": 0}}])
    out = bench(v, rr)
    assert "vtg: 2 judge calls with no tokens recorded" in out
    assert "rerank: the judge's tokens are not recorded" in out


def test_calls_of_unknown_tokens_make_a_lower_bound(tmp_path):
    rec = vtg("q1", {"prompt_tokens": 10, "completion_tokens": 1, "calls": 2, "uncounted_calls": 1})
    rec["usage"]["uncounted_calls"] = 1
    out = bench(folder(tmp_path / "vtg", [rec]))
    assert "1 judge calls of unknown tokens (a lower bound)" in out and "vtg: 1 calls of unknown tokens in its usage" in out


def test_the_simplifiers_checks_calls_and_removals(tmp_path):
    def with_simplifier(i, *simps):
        r = vtg(i, {"prompt_tokens": 10, "completion_tokens": 1, "calls": 2})
        r["vtg"]["sentences"] = [{"trials": [{"simplifier": s} for s in simps] + [{"simplifier": None}]}]
        return r

    seq = {"removed": [2], "checks": 3, "checked": [], "calls": 3}
    bat = {"removed": [1, 2], "checks": 2, "checked": [], "calls": 2, "speculative": 3}
    out = bench(folder(tmp_path / "vtg", [with_simplifier("q1", seq), with_simplifier("q2", bat)]))
    assert "VTG simplifier: 2 runs, 5 checks, 5 judge calls, 3 removals, 3 speculative checks (batched)" in out
    old = bench(folder(tmp_path / "old", [with_simplifier("q1", {"removed": [2], "checks": 3})]))
    assert "VTG simplifier: 1 runs, 3 checks, 1 removals" in old  # written before the calls were counted


def run_bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_vtg.py"), *args], capture_output=True, text=True, cwd=ROOT)


def evaluation(path: Path, f1: float) -> Path:
    path.mkdir()
    (path / "results.json").write_text(json.dumps({"metrics": {"alce_citation_f1": {"value": f1, "ci": [f1 - 0.1, f1 + 0.1]}, "rouge_lsum": {"value": 0.2}}}))
    return path


def test_svg_writes_the_token_figure_with_a_lower_bound_marked(tmp_path):
    v = folder(tmp_path / "vtg", [vtg("q1", {"prompt_tokens": 50, "completion_tokens": 2, "calls": 2})])
    rr = folder(tmp_path / "rerank", [{"id": "q1", "usage": {"prompt_tokens": 300, "completion_tokens": 40, "calls": 8}, "rerank": {"chosen": 0}}])
    svg = tmp_path / "img" / "tokens.svg"
    r = run_bench("--vtg", str(v), "--baseline", str(rr), "--svg", str(svg), "--eval", str(evaluation(tmp_path / "ev", 0.9)),
                  "--eval", str(evaluation(tmp_path / "er", 0.4)))
    assert r.returncode == 0, r.stderr
    assert "| vtg | 162 | 162–162 | 0.900 [0.800, 1.000] | no |" in r.stdout
    assert "| rerank | 340 | 340–340 | 0.400 [0.300, 0.500] | judge tokens not recorded |" in r.stdout
    body = svg.read_text()
    assert body.startswith("<?xml") and body.count('class="point-group"') == 2 and body.count('data-lower-bound="true"') == 1
    r = run_bench("--vtg", str(v), "--svg", str(svg), "--eval", str(tmp_path / "ev"), "--metric", "rouge_lsum")
    assert r.returncode == 0 and "| vtg | 162 | 162–162 | 0.200 | no |" in r.stdout
    r = run_bench("--vtg", str(v), "--svg", str(svg))  # no evaluation: no point, said
    assert r.returncode == 0 and "vtg: not plotted (no evaluation given)" in r.stdout and "no method has a value to plot" in svg.read_text()


@pytest.mark.parametrize("case", ["no samples", "no usage", "eval count", "no results"])
def test_bad_input_is_one_line(tmp_path, case):
    v = folder(tmp_path / "vtg", [vtg("q1", {"prompt_tokens": 50, "completion_tokens": 2, "calls": 2})])
    args = ["--vtg", str(v), "--svg", str(tmp_path / "x.svg")]
    if case == "no samples":
        (tmp_path / "empty").mkdir()
        args += ["--baseline", str(tmp_path / "empty")]
        want = "empty: no samples.jsonl"
    elif case == "no usage":
        args += ["--baseline", str(folder(tmp_path / "bare", [{"id": "q1", "output": "x"}]))]
        want = "bare: its answers have no usage"
    elif case == "eval count":
        ev = str(evaluation(tmp_path / "ev", 0.5))
        args += ["--eval", ev, "--eval", ev]  # one run, two evaluations
        want = "--eval: 2 folders for 1 runs"
    else:
        args += ["--eval", str(tmp_path / "nothing")]
        want = "nothing: no results.json"
    r = run_bench(*args)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and want in r.stderr, r.stderr
