"""``generate --concurrency N`` against an OpenAI-compatible server that answers slowly and out of order: at most N
requests in flight (and N reached), the answers written in the order of the questions, the same as one at a time
but for each answer's wall time; failed requests retried as ever."""

from __future__ import annotations

import json
import re
import time

from click.testing import CliRunner

from tests.support.httpfake import FakeOpenAIServer
from tests.support.ray_runs import without_timings, write_questions
from vericite.cli.main import cli


def later_first(messages):
    """Question i waits (12 - i) * 20 ms: the later questions are answered first."""
    i = int(re.findall(r"person (\d+)", messages[-1]["content"])[-1])
    return (12 - i) * 0.02


def reply(messages, params):
    i = re.findall(r"person (\d+)", messages[-1]["content"])[-1]
    return f"P{i} worked as job{i} [Q{i}, occupation: job{i}]."


def generate(q, out, base_url, *extra):
    args = ["generate", "--dataset", str(q), "--model", "openai:served-model", "--base-url", base_url, "--no-cache",
            "--retries", "2", "--out", str(out), "-q", *extra]
    t0 = time.perf_counter()
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output + repr(r.exception)
    return time.perf_counter() - t0


def test_concurrency_bounds_requests_and_keeps_the_order(tmp_path):
    q = write_questions(tmp_path / "q.jsonl", 12)
    with FakeOpenAIServer(reply, delay=later_first) as one:
        serial = generate(q, tmp_path / "one", one.base_url)
        assert one.max_in_flight == 1
    with FakeOpenAIServer(reply, delay=later_first) as many:
        parallel = generate(q, tmp_path / "four", many.base_url, "--concurrency", "4")
        assert many.max_in_flight == 4  # bounded, and the bound reached
    a, b = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("one", "four"))
    assert [json.loads(l)["id"] for l in b.splitlines()] == [f"q{i:02d}" for i in range(12)]
    assert without_timings(b) == without_timings(a)
    assert parallel < serial  # 1.56 s of waits one at a time; about a quarter of it four at a time


def test_concurrency_retries_failed_requests(tmp_path):
    q = write_questions(tmp_path / "q.jsonl", 6)
    with FakeOpenAIServer(reply, fail_first=3) as server:
        generate(q, tmp_path / "out", server.base_url, "--concurrency", "3")
    m = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert m["status"] == "complete" and m["summary"]["n_done"] == 6 and m["summary"]["failed_calls"] == 0


def test_concurrency_needs_a_server_model(tmp_path):
    q = write_questions(tmp_path / "q.jsonl", 2)
    r = CliRunner().invoke(cli, ["generate", "--dataset", str(q), "--model", "fake", "--out", str(tmp_path / "o"), "--concurrency", "2"])
    assert r.exit_code != 0 and "--concurrency is for a model server" in r.output and "Traceback" not in r.output
