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


def test_ctrl_c_returns_at_once_and_keeps_the_finished_answers(tmp_path):
    """SIGINT to ``generate --concurrency 2`` while two requests hang on the server: the command exits within a
    couple of seconds (it waits neither for the hanging requests nor for the threads that sent them), says
    ``interrupted: ... rerun with --resume``, and its files hold the answers finished before, each a whole line;
    ``--resume`` then answers the rest."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    from pathlib import Path

    q = write_questions(tmp_path / "q.jsonl", 6)
    out = tmp_path / "out"
    release = threading.Event()

    def hang_after_two(messages):
        i = int(re.findall(r"person (\d+)", messages[-1]["content"])[-1])
        if i >= 2:
            release.wait(30)  # the old close waited for this: the test then fails on the time, not by hanging
        return 0.0

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "src"), str(root)])}
    with FakeOpenAIServer(reply, delay=hang_after_two) as server:
        try:
            p = subprocess.Popen(
                [sys.executable, "-m", "vericite", "generate", "--dataset", str(q), "--model", "openai:served-model",
                 "--base-url", server.base_url, "--no-cache", "--retries", "0", "--timeout", "60", "--concurrency", "2",
                 "--out", str(out)],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
            samples = out / "samples.jsonl"
            deadline = time.time() + 60
            while time.time() < deadline and not (samples.exists() and samples.read_text().count("\n") >= 2 and server.in_flight >= 2):
                time.sleep(0.05)
            assert server.in_flight == 2, "two requests should hang on the server"
            t0 = time.perf_counter()
            os.kill(p.pid, signal.SIGINT)
            try:
                _, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                _, err = p.communicate()
            took = time.perf_counter() - t0
            kept = samples.read_text(encoding="utf-8")
            checkpoint = (out / ".ray-calls.jsonl").read_text(encoding="utf-8")
            release.set()
            time.sleep(0.3)  # the released requests are answered to nobody: nothing more is written
            assert samples.read_text(encoding="utf-8") == kept
            assert took < 3.0, f"Ctrl-C took {took:.1f} s: {err}"
            assert p.returncode == 130, err
            assert "interrupted: completed samples are kept; rerun with --resume" in err and "Traceback" not in err, err
            assert kept.endswith("\n") and [json.loads(l)["id"] for l in kept.splitlines()] == ["q00", "q01"]
            assert checkpoint.endswith("\n") and all(json.loads(l)["key"] for l in checkpoint.splitlines())
            before = len(server.requests)
            generate(q, out, server.base_url, "--concurrency", "2", "--resume")
            asked = [r["body"]["messages"][-1]["content"] for r in server.requests[before:] if r["path"].endswith("/chat/completions")]
        finally:
            release.set()
    assert sorted(int(re.findall(r"person (\d+)", c)[-1]) for c in asked) == [2, 3, 4, 5]  # only what was not kept
    assert [json.loads(l)["id"] for l in samples.read_text(encoding="utf-8").splitlines()] == [f"q{i:02d}" for i in range(6)]
