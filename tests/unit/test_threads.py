"""threads.py: daemon threads that Ctrl-C does not wait for. ``daemon_map`` keeps the order and the bound, waits
for the other calls after an error (as ``ThreadPoolExecutor``'s ``with`` does), and on a KeyboardInterrupt returns
at once, the calls not started dropped and none in flight waited for."""

from __future__ import annotations

import threading
import time

import pytest

from vericite.threads import DaemonExecutor, daemon_map


def test_daemon_map_keeps_the_order_and_the_bound():
    lock = threading.Lock()
    live = [0, 0]  # now, most

    def slow(i):
        with lock:
            live[0] += 1
            live[1] = max(live[1], live[0])
        time.sleep(0.01 * (6 - i % 6))
        with lock:
            live[0] -= 1
        return i * i

    assert daemon_map(slow, range(12), 3) == [i * i for i in range(12)]
    assert live[1] == 3


def test_an_error_is_raised_once_the_other_calls_are_done():
    done = []

    def call(i):
        if i == 0:
            raise ValueError("boom")
        time.sleep(0.05)
        done.append(i)
        return i

    with pytest.raises(ValueError, match="boom"):
        daemon_map(call, range(4), 2)
    assert sorted(done) == [1, 2, 3]


def test_ctrl_c_returns_at_once_and_drops_the_calls_not_started():
    release = threading.Event()
    started = []

    def call(i):
        started.append(i)
        if i == 0:
            while len(started) < 2:
                time.sleep(0.01)
            raise KeyboardInterrupt  # read by the caller's f.result(), as a Ctrl-C there
        release.wait(30)
        return i

    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            daemon_map(call, range(6), 2, thread_name_prefix="ctrl-c-test")
        took = time.perf_counter() - t0
        assert took < 2.0, f"waited {took:.1f} s for a call in flight"
        threads = [t for t in threading.enumerate() if t.name.startswith("ctrl-c-test")]
        assert threads and all(t.daemon for t in threads)
    finally:
        release.set()
    time.sleep(0.1)
    # the thread whose call raised may have taken the next call before the caller saw the interrupt; no more
    assert set(started) <= {0, 1, 2} and 0 in started and 1 in started


def test_no_submit_after_shutdown_and_a_plain_shutdown_joins():
    ex = DaemonExecutor(2, thread_name_prefix="joined-test")
    assert ex.submit(lambda: 7).result() == 7
    ex.shutdown()
    assert not [t for t in threading.enumerate() if t.name.startswith("joined-test")]
    with pytest.raises(RuntimeError):
        ex.submit(lambda: 1)
