"""Ctrl-C in a pooled generate (``--concurrency``), evaluate or judge-eval (``--ray``; a thread pool here, the same
Pool interface) while the driver writes one finished batch: the rest of that batch and every other batch the workers
had finished by then go into the checkpoint too (``distributed.keep_finished`` over ``ThreadPool.finished``), so
``--resume`` does not ask the model for any answer or judgement it had already given (with ``--no-cache`` it would be
paid for twice)."""

from __future__ import annotations

import functools
import json
import threading
import time
from typing import Any, Sequence

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


def _ctrl_c_once_done(done: list[Any], n: int) -> None:
    """Ctrl-C, once ``n`` results are in ``done`` (the workers' record) and their workers have handed them back."""
    end = time.monotonic() + 5
    while len(done) < n and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(0.2)
    raise KeyboardInterrupt


def test_evaluate_on_a_pool_ctrl_c_keeps_every_answer_the_workers_scored(tmp_path, monkeypatch):
    """``evaluate --ray`` (its AnswerWorkers on threads): Ctrl-C after the driver wrote the first line of a batch of
    two, once the other worker's batch is scored too: the second line and the other batch are in
    ``.evaluate-answers.jsonl``, and ``--resume`` scores only the answers no worker had scored."""
    import vericite.evaluate.answer_scoring as S
    import vericite.runs.distributed as D
    from vericite.distributed import ThreadPool
    from vericite.evaluate import EvaluateConfig
    from vericite.evaluate.checkpoint import AnswerCheckpoint
    from vericite.runs.results import evaluate_file

    from tests.support.ray_runs import write_answers

    scored: list[int] = []

    class Counting(D.AnswerWorker):
        def score(self, batch):
            out = super().score(batch)
            scored.extend(i for i, _s, _a in batch)
            return out

    def counting(cfg, task):
        return Counting(cfg, task)

    monkeypatch.setattr(D, "answer_pool", lambda cfg, *, ray, workers: lambda task: ThreadPool(functools.partial(counting, cfg, task), workers))
    monkeypatch.setattr(S, "ANSWER_BATCH", 2)
    answers, out = write_answers(tmp_path / "a.jsonl", 6), tmp_path / "e"
    cfg = EvaluateConfig(judge="fake", attribution_judge="fake-4class", cache=False)
    real_add = AnswerCheckpoint.add_line
    interrupted = threading.Event()

    def add_then_ctrl_c(self, line):
        real_add(self, line)
        if not interrupted.is_set():  # the first line written: Ctrl-C once the other batch is scored too
            interrupted.set()
            _ctrl_c_once_done(scored, 4)

    monkeypatch.setattr(AnswerCheckpoint, "add_line", add_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        evaluate_file(answers, out, cfg, ray="auto", workers=2)
    monkeypatch.setattr(AnswerCheckpoint, "add_line", real_add)
    assert sorted(scored) == [0, 1, 2, 3]  # the third batch was never sent
    lines = (out / ".evaluate-answers.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(json.loads(x)["answer"] for x in lines) == [0, 1, 2, 3]  # each once

    scored.clear()
    evaluate_file(answers, out, cfg, ray="auto", workers=2, resume=True)
    assert sorted(scored) == [4, 5]  # the answers kept were not scored again
    lines = (out / ".evaluate-answers.jsonl").read_text(encoding="utf-8").splitlines()[1:]
    assert sorted(json.loads(x)["answer"] for x in lines) == list(range(6)) and (out / "results.json").is_file()


class CountingJudge:
    """Supports every pair; records each pair's claim it is asked about (the workers share the list)."""

    id = "counting@1"
    labels = ("supported", "not_supported")
    asked: list[str] = []

    def judge(self, pairs: Sequence[Any]) -> list[Any]:
        from vericite.types import Judgement

        out = [Judgement(self.id, p.claim, p.evidence, 0.9, "supported") for p in pairs]
        CountingJudge.asked.extend(p.claim for p in pairs)
        return out


def _counting_factory(arg: str, *, ctx: Any, **options: Any) -> CountingJudge:
    return CountingJudge()


def test_judge_eval_on_a_pool_ctrl_c_keeps_every_part_the_workers_judged(tmp_path, monkeypatch):
    """``judge-eval --ray``'s PoolJudge (on threads): Ctrl-C after the driver checkpointed the first part of a call,
    once the other part is judged too: both parts are in ``.ray-calls.jsonl``, and ``--resume`` judges neither again."""
    from vericite import registry
    from vericite.distributed import Checkpoint, ThreadPool
    from vericite.runs.distributed import PoolJudge
    from vericite.runs.distributed_judge import _judge_worker
    from vericite.types import JudgePair

    reg = registry.registry_for("judges")
    reg.register("counting", _counting_factory, replace=True)
    pairs = [JudgePair(f"evidence {i}", f"c{i}") for i in range(8)]
    CountingJudge.asked = []

    def pooled(resume: bool) -> PoolJudge:
        return PoolJudge(CountingJudge(), ThreadPool(functools.partial(_judge_worker, "counting", {}), 2), Checkpoint(tmp_path, resume=resume))

    real_put = Checkpoint.put
    interrupted = threading.Event()

    def put_then_ctrl_c(self, key, result):
        real_put(self, key, result)
        if not interrupted.is_set():  # the first part checkpointed: Ctrl-C once the other is judged too
            interrupted.set()
            _ctrl_c_once_done(CountingJudge.asked, len(pairs))

    try:
        monkeypatch.setattr(Checkpoint, "put", put_then_ctrl_c)
        first = pooled(False)
        try:
            with pytest.raises(KeyboardInterrupt):
                first.judge(pairs)
        finally:
            first.close()
        monkeypatch.setattr(Checkpoint, "put", real_put)
        assert sorted(CountingJudge.asked) == sorted(p.claim for p in pairs)
        lines = (tmp_path / ".ray-calls.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) == 2 and len({json.loads(x)["key"] for x in lines}) == 2  # both parts, each once

        CountingJudge.asked = []
        again = pooled(True)
        try:
            assert [j.label for j in again.judge(pairs)] == ["supported"] * len(pairs)
        finally:
            again.close()
        assert CountingJudge.asked == []  # every part read back, none judged again
    finally:
        reg.unregister("counting")
