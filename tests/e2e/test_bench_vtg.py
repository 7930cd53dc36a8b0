"""benchmarks/bench_vtg.py on small run folders: the judges' tokens per method (VTG's ``verify`` component,
rerank's ``judge_usage``), and runs written before judges reported tokens said to leave them out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
