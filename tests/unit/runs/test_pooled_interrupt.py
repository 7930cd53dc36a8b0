"""Ctrl-C in a pooled generate (``--concurrency``) while the driver writes one finished batch: every other batch the
workers had finished by then goes into the checkpoint too (``ThreadPool.finished``), so ``--resume`` does not ask
the model for any answer it had already given (with ``--no-cache`` it would be paid for twice)."""

from __future__ import annotations

import json
import threading
import time

import pytest

from vericite.distributed import Checkpoint

from tests.support.pooled import counting_run


def test_ctrl_c_while_a_batch_is_written_keeps_every_finished_batch(tmp_path, monkeypatch):
    samples, asked, run = counting_run(tmp_path / "r", 4, workers=2, batch_size=1)

    real_put = Checkpoint.put
    interrupted = threading.Event()

    def put_then_ctrl_c(self, key, result):
        real_put(self, key, result)
        if not interrupted.is_set():  # the first batch written: Ctrl-C once the other one has finished too
            interrupted.set()
            end = time.monotonic() + 5
            while len(asked) < 2 and time.monotonic() < end:
                time.sleep(0.01)
            time.sleep(0.2)  # its worker hands the answer back
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "put", put_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        run(resume=False)
    monkeypatch.setattr(Checkpoint, "put", real_put)
    assert sorted(asked) == ["s00", "s01"]  # the batches not started were dropped
    lines = (tmp_path / "r" / ".ray-calls.jsonl").read_text(encoding="utf-8")
    assert lines.endswith("\n")
    assert sorted(o["id"] for line in lines.splitlines() for o in json.loads(line)["result"]) == ["s00", "s01"]

    asked.clear()
    manifest = run(resume=True)
    assert sorted(asked) == ["s02", "s03"]  # s00 and s01 from the checkpoint, neither asked again
    ids = [json.loads(line)["id"] for line in (tmp_path / "r" / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    assert ids == [s.id for s in samples] and manifest["status"] == "complete"
