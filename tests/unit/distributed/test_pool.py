"""distributed/: the thread pool builds one worker per thread and yields every batch once; the checkpoint reads
back what was written, cuts a torn last line, and starts empty without resume; an address nothing answers on is
one line."""

from __future__ import annotations

import threading
import time

import pytest

from vericite.distributed import Checkpoint, ThreadPool
from vericite.distributed.fit import probe as _probe
from vericite.errors import VericiteError

built: list[int] = []


class Doubler:
    def __init__(self) -> None:
        built.append(threading.get_ident())

    def run(self, xs):
        time.sleep(0.01 * (5 - xs[0] % 5))  # later batches finish first
        return [2 * x for x in xs]


def test_thread_pool_builds_a_worker_per_thread_and_yields_each_batch_once():
    built.clear()
    pool = ThreadPool(Doubler, 3)
    try:
        got = dict(pool.map("run", [(f"b{i}", [i, i + 100]) for i in range(10)]))
    finally:
        pool.close()
    assert got == {f"b{i}": [2 * i, 2 * i + 200] for i in range(10)}
    assert 1 <= len(built) <= 3 and len(set(built)) == len(built)



hang = threading.Event()
ran: list[int] = []


class Hanger:
    def run(self, xs):
        ran.append(xs[0])
        if xs[0] > 0:
            hang.wait(30)
        return xs


def test_closing_the_thread_pool_waits_for_no_batch_in_flight_and_drops_those_not_started():
    """Ctrl-C in the driver's loop: ``close`` returns at once although two batches hang in their threads (daemon
    threads, which the interpreter does not wait for either), the batches not started never run, and a hanging
    batch that ends afterwards is given to nobody."""
    hang.clear()
    ran.clear()
    pool = ThreadPool(Hanger, 3)
    got = []
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        try:
            for key, result in pool.map("run", [(f"b{i}", [i]) for i in range(8)]):
                got.append(key)
                while len(ran) < 3:  # the two others are in flight
                    time.sleep(0.01)
                raise KeyboardInterrupt
        finally:
            pool.close()
    took = time.perf_counter() - t0
    try:
        assert took < 2.0, f"close waited {took:.1f} s for the batches in flight"
        assert got == ["b0"] and sorted(ran) == [0, 1, 2]
        workers = [t for t in threading.enumerate() if t.name.startswith("vericite-worker")]
        assert workers and all(t.daemon for t in workers)
    finally:
        hang.set()
    time.sleep(0.1)
    assert sorted(ran) == [0, 1, 2]  # the batches not started were dropped, not run once the threads were free


def test_checkpoint_reads_back_cuts_a_torn_line_and_starts_empty_without_resume(tmp_path):
    ck = Checkpoint(tmp_path)
    ck.put("a", [1, {"x": "é"}])
    ck.put("b", None)
    with ck.path.open("a") as f:
        f.write('{"key": "c", "resu')  # a driver killed while writing
    again = Checkpoint(tmp_path, resume=True)
    assert "a" in again and again.get("a") == [1, {"x": "é"}] and "b" in again and "c" not in again
    again.put("c", 3)
    assert Checkpoint(tmp_path, resume=True).get("c") == 3
    assert Checkpoint(tmp_path, resume=True).keys() == ["a", "b", "c"]  # in the order written
    assert len(Checkpoint(tmp_path)) == 0 and ck.path.read_text() == ""


def test_an_address_nothing_answers_on_is_one_line():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(VericiteError, match=r"cannot reach the Ray cluster at 127.0.0.1:\d+"):
        _probe(f"127.0.0.1:{port}", timeout=2)


def test_an_actor_s_driver_watch_exits_once_the_driver_is_killed_even_before_it_is_reaped():
    """A Ray actor on its driver's machine exits as soon as the driver's process is gone (``watch_driver``), a
    killed driver not yet reaped (a zombie) counting as gone; it never exits while the driver runs, and a process
    that is not the driver (another start time: a number used again, another container's) is not watched."""
    import os
    import signal
    import subprocess
    import sys

    from vericite.distributed.actor_side import driver_alive as _alive, process_started as _started, watch_driver

    driver = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    exited = threading.Event()
    started = _started(driver.pid)
    watch = threading.Thread(target=watch_driver, args=(driver.pid, 0.02, lambda code: exited.set(), started), daemon=True)
    watch.start()
    try:
        assert not exited.wait(0.3) and _alive(driver.pid, started) and _alive(os.getpid())
        if started is not None:  # with /proc: another process of that number is not the driver
            other = threading.Thread(target=watch_driver, args=(driver.pid, 0.02, lambda code: exited.set(), str(int(started) + 1)))
            other.start()
            other.join(5)
            assert not other.is_alive() and not exited.is_set()  # not watched: returned at once, no exit
        os.kill(driver.pid, signal.SIGKILL)  # not waited for: a zombie until then
        assert exited.wait(5)
    finally:
        driver.kill()
        driver.wait()
    assert not _alive(driver.pid)


def test_finished_gives_the_batches_done_that_the_driver_may_not_have_written():
    """Ctrl-C while the driver writes the batch ``map`` gave it: ``finished`` gives that batch and every other one
    done (not the one still in flight), each once, without waiting."""
    hang.clear()
    ran.clear()
    pool = ThreadPool(Hanger, 3)
    try:
        with pytest.raises(KeyboardInterrupt):
            for key, result in pool.map("run", [("b0", [0]), ("b1", [-1]), ("b2", [2])]):
                while len(ran) < 3:
                    time.sleep(0.01)
                time.sleep(0.1)  # b1 is done too
                raise KeyboardInterrupt
        t0 = time.perf_counter()
        got = sorted(pool.finished())
        assert time.perf_counter() - t0 < 0.5
        assert got == sorted([(key, result), ("b1" if key == "b0" else "b0", [-1] if key == "b0" else [0])])
        assert pool.finished() == []
    finally:
        pool.close()
        hang.set()
