"""Issue 9, defect 6: a total time limit per request to a model server (``--timeout``), and ``--retries``.
A server that never answers, or sends one byte a second forever, fails the call with one BackendError line
soon after the limit, not minutes later or never."""

from __future__ import annotations

import threading
import time

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import BackendError
from vericite.models import load_model
from vericite.models.openai_compat import BackendClosedError, DeadlineExceededError, OpenAICompatBackend
from vericite.types import GenParams

from tests.support.httpfake import FakeOpenAIServer

MSG = [{"role": "user", "content": "Is the sky blue?"}]


def call_within(fn, bound: float):
    """Run ``fn`` in a thread; (its exception or result, seconds taken). Fails, instead of hanging, when it
    takes longer than ``bound``."""
    box = {}

    def work():
        t0 = time.monotonic()
        try:
            box["result"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
        box["seconds"] = time.monotonic() - t0

    t = threading.Thread(target=work, daemon=True)
    t.start()
    t.join(bound)
    assert not t.is_alive(), f"the call was still running after {bound} s"
    return box.get("error", box.get("result")), box["seconds"]


def test_a_dribbling_server_fails_at_the_deadline():
    with FakeOpenAIServer(behaviour="dribble", dribble_s=1.0) as srv:
        b = OpenAICompatBackend("m", srv.base_url, timeout=2.0, max_retries=3, backoff=0.1)
        err, seconds = call_within(lambda: b.generate([MSG], GenParams()), 6.0)
    assert isinstance(err, DeadlineExceededError) and isinstance(err, BackendError)
    assert 1.9 <= seconds <= 3.5, seconds
    msg = str(err)
    assert "\n" not in msg and "time limit of 2 s" in msg and "--timeout" in msg


def test_a_silent_server_costs_the_limit_not_the_limit_per_retry():
    with FakeOpenAIServer(behaviour="hang") as srv:
        b = OpenAICompatBackend("m", srv.base_url, timeout=1.5, max_retries=3, backoff=0.1)
        err, seconds = call_within(lambda: b.generate([MSG], GenParams()), 6.0)
    assert isinstance(err, DeadlineExceededError), err
    assert 1.4 <= seconds <= 2.5, seconds


def test_retries_stop_at_the_deadline(monkeypatch):
    with FakeOpenAIServer(behaviour="busy") as srv:
        b = OpenAICompatBackend("m", srv.base_url, timeout=1.5, max_retries=10, backoff=0.3)
        err, seconds = call_within(lambda: b.generate([MSG], GenParams()), 5.0)
        n = len(srv.requests)
    assert isinstance(err, DeadlineExceededError) and "HTTP 503: overloaded" in str(err)
    # tries at 0 s, 0.3 s and 0.9 s (0.6 s to spare for the requests themselves on a loaded machine); the next
    # wait (1.2 s, to 2.1 s) would pass the limit: no fourth try, and no useless sleep before saying so
    assert n == 3 and seconds < 1.5, (n, seconds)


def test_load_model_passes_timeout_and_retries():
    b = load_model("openai:m", base_url="http://127.0.0.1:9", timeout=7.5, retries=1, cache=False)
    assert (b.http.timeout, b.http.max_retries) == (7.5, 1)
    b = load_model("openai:m", base_url="http://127.0.0.1:9", cache=False)
    assert (b.http.timeout, b.http.max_retries) == (300.0, 3)  # the defaults: a total of 5 minutes, 3 retries


def test_cli_timeout_and_retries(tmp_path, monkeypatch):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "q1", "question": "Who?", "knowledge": [{"subject": "Q1", "property": "p", "value": "v"}]}\n')
    base = ["generate", "--dataset", str(q), "--model", "openai:foo", "--no-cache", "-q"]
    with FakeOpenAIServer(behaviour="dribble", dribble_s=0.5) as srv:
        t0 = time.monotonic()
        r = CliRunner().invoke(cli, [*base, "--out", str(tmp_path / "a"), "--base-url", srv.base_url, "--timeout", "1.5"])
        assert time.monotonic() - t0 < 6
    assert r.exit_code != 0 and "no complete answer within the time limit of 1.5 s" in r.output and "Traceback" not in r.output
    with FakeOpenAIServer(behaviour="busy") as srv:
        r = CliRunner().invoke(cli, [*base, "--out", str(tmp_path / "b"), "--base-url", srv.base_url, "--retries", "1"])
        assert len(srv.requests) == 2  # one try and one retry
    assert r.exit_code != 0 and "after 2 attempts" in r.output
    r = CliRunner().invoke(cli, [*base, "--out", str(tmp_path / "c"), "--timeout", "0"])
    assert r.exit_code == 2 and "--timeout" in r.output


@pytest.mark.parametrize("command", [["evaluate", "-i", "x", "-o", "y"], ["run", "x"], ["judge-eval", "--judge", "triple", "--out", "y"], ["build", "biokalma", "--out", "y"], ["generate", "--out", "y"]])
def test_every_model_command_takes_the_server_options(command):
    r = CliRunner().invoke(cli, [*command, "--help"])
    assert r.exit_code == 0
    for opt in ("--base-url", "--timeout SECONDS", "--retries N"):
        assert opt in r.output, (command, opt)


def test_a_run_resumes_with_another_time_limit(tmp_path, monkeypatch):
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import generate_run
    from vericite.models.fake import FakeBackend
    from vericite.types import Sample, Triple

    samples = [Sample(f"s{i}", "Who?", [Triple("Q1", "p", "v")]) for i in range(2)]
    generate_run(GenerateConfig(dataset="x", model="fake", timeout=10), tmp_path / "r", samples=samples[:1], backend=FakeBackend(), progress=False)
    m = generate_run(GenerateConfig(dataset="x", model="fake", timeout=60, request_retries=5), tmp_path / "r", samples=samples, backend=FakeBackend(), resume=True, progress=False)
    assert m["summary"]["n_done"] == 2 and m["config"]["timeout"] == 60


def test_close_ends_a_waiting_request_at_once_and_sends_none_after():
    """Ctrl-C with --concurrency: the driver closes the shared backend while daemon threads wait for the server;
    their requests end at once with a BackendClosedError (not at the time limit, not with httpx's RuntimeError)."""
    with FakeOpenAIServer(behaviour="hang") as srv:
        b = OpenAICompatBackend("m", srv.base_url, timeout=30.0, max_retries=3, backoff=0.1)
        threading.Timer(0.5, b.close).start()
        err, seconds = call_within(lambda: b.generate([MSG], GenParams()), 5.0)
        assert isinstance(err, BackendClosedError) and isinstance(err, BackendError) and "closed" in str(err), err
        assert seconds < 2.0, seconds
        sent = len(srv.requests)
        with pytest.raises(BackendClosedError):
            b.generate([MSG], GenParams())
        assert len(srv.requests) == sent
