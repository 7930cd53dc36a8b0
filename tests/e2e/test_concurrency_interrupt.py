"""What the threads of ``generate --concurrency N`` do after Ctrl-C (in this process, so they can be watched): the
driver returns at once and closes the shared ``openai:`` backend; each request still waiting for the server then
ends at once with a ``BackendClosedError`` (it used to wait for the server's answer or its --timeout, then meet
httpx's "client has been closed"), so its thread ends: no traceback, no line written after the interrupt, no answer
put in the call cache after it, and the answers finished before it are all kept."""

from __future__ import annotations

import re
import sqlite3
import threading
import time

import pytest

import vericite.distributed.pool as pool_module
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled

from tests.support.httpfake import FakeOpenAIServer, wait_until
from tests.support.ray_runs import write_questions


def reply(messages, params):
    i = re.findall(r"person (\d+)", messages[-1]["content"])[-1]
    return f"P{i} worked as job{i} [Q{i}, occupation: job{i}]."


def test_the_threads_in_flight_at_ctrl_c_end_at_once_and_write_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    q = write_questions(tmp_path / "q.jsonl", 6)
    out = tmp_path / "out"
    samples, checkpoint = out / "samples.jsonl", out / ".ray-calls.jsonl"
    release = threading.Event()
    hooked: list[str] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: hooked.append(f"{a.thread.name}: {a.exc_value!r}"))

    def hang_after_two(messages):
        if int(re.findall(r"person (\d+)", messages[-1]["content"])[-1]) >= 2:
            release.wait(30)
        return 0.0

    before = set(threading.enumerate())
    with FakeOpenAIServer(reply, delay=hang_after_two) as server:
        server.httpd.handle_error = lambda *a: None  # the fake's own complaints about dropped connections
        real_wait = pool_module.wait

        def wait_then_ctrl_c(fs, return_when):  # Ctrl-C lands in the driver's wait once two requests hang
            while True:
                if samples.exists() and samples.read_text(encoding="utf-8").count("\n") == 2 and server.in_flight == 2:
                    raise KeyboardInterrupt
                done, not_done = real_wait(fs, timeout=0.02, return_when=return_when)
                if done:
                    return done, not_done

        monkeypatch.setattr(pool_module, "wait", wait_then_ctrl_c)
        cfg = GenerateConfig(dataset=str(q), model="openai:served-model", base_url=server.base_url, timeout=60, request_retries=2)
        try:
            t0 = time.perf_counter()
            with pytest.raises(KeyboardInterrupt):
                generate_pooled(cfg, out, ray=None, workers=2, progress=False, batch_size=1)
            took = time.perf_counter() - t0
            kept = samples.read_text(encoding="utf-8"), checkpoint.read_text(encoding="utf-8")
            workers = [t for t in set(threading.enumerate()) - before if t.name.startswith("vericite-worker")]
            assert server.in_flight == 2  # the server still holds both requests
            assert wait_until(lambda: not any(t.is_alive() for t in workers), 2.0), "a worker still waits for the server"
        finally:
            release.set()  # the server answers now: to nobody
        time.sleep(0.5)
    assert took < 3.0
    assert (samples.read_text(encoding="utf-8"), checkpoint.read_text(encoding="utf-8")) == kept
    assert all(text.endswith("\n") and text.count("\n") == 2 for text in kept)
    assert [re.findall(r'"id": "(q\d\d)"', line)[0] for line in kept[0].splitlines()] == ["q00", "q01"]
    with sqlite3.connect(tmp_path / "cache" / "calls.sqlite") as c:
        assert c.execute("SELECT COUNT(*) FROM calls WHERE kind = 'generate'").fetchone()[0] == 2  # none after the close
    assert hooked == []
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err
