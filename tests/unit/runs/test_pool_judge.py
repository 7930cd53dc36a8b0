"""A judge whose judging is spread over workers (``PoolJudge``, ``--ray``) is given each pair whole: the question
(CAQA's llm4 reads it) and the context (the triple judge reads the cited triple there) reach the workers, so the
pooled verdicts are the local ones. Workers are threads here (the same Pool interface as Ray's actors)."""

from __future__ import annotations

import functools
from typing import Any, Sequence

from vericite import registry
from vericite.distributed.pool import ThreadPool
from vericite.runs.distributed import PoolJudge, _judge_worker
from vericite.types import JudgePair, Judgement


class ReadsQuestionAndContext:
    """Supported only when the pair has a question and a context key ``cited``: it judges what a judge is given
    beyond the two texts."""

    id = "reads-all@1"
    labels = ("supported", "not_supported")

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for p in pairs:
            ok = bool(p.question) and "cited" in p.context
            out.append(Judgement(self.id, p.claim, p.evidence, 0.9 if ok else 0.1, self.labels[0] if ok else self.labels[1]))
        return out


def _factory(arg: str, *, ctx: Any, **options: Any) -> ReadsQuestionAndContext:
    return ReadsQuestionAndContext()


def test_pooled_judging_gives_the_workers_the_whole_pair():
    reg = registry.registry_for("judges")
    reg.register("reads-all", _factory, replace=True)
    try:
        pairs = [JudgePair(f"e{i}", f"c{i}", question=f"q{i}" if i % 2 else None, context={"cited": i} if i % 3 else {}) for i in range(12)]
        local = ReadsQuestionAndContext()
        expected = local.judge(pairs)
        assert {j.label for j in expected} == {"supported", "not_supported"}  # the question and context decide
        pooled = PoolJudge(local, ThreadPool(functools.partial(_judge_worker, "reads-all", {}), 3))
        try:
            got = pooled.judge(pairs)
        finally:
            pooled.close()
        assert [j.to_dict() for j in got] == [j.to_dict() for j in expected]
    finally:
        reg.unregister("reads-all")


def test_the_workers_report_their_judges_usage_and_an_old_checkpoint_makes_it_unknown(tmp_path):
    """An LLM judge on workers: each part comes back with what its model calls cost (the fake's tokens), summed
    by model name, the same as the judge run here; parts read from a checkpoint keep theirs; a checkpoint line
    written before usage was kept (judgements only) makes the total unknown, never a smaller count."""
    from vericite.distributed import Checkpoint
    from vericite.judges.llm import LLMJudge
    from vericite.models.fake import FakeBackend
    from vericite.models.usage import UsageMeter, metered

    pairs = [JudgePair(f"evidence {i} " * (i + 1), f"claim {i}") for i in range(10)]
    meter = UsageMeter()
    local = LLMJudge(metered(FakeBackend("fake:w"), meter))
    expected = local.judge(pairs)
    assert meter.usage.calls == len(pairs) and meter.usage.prompt_tokens > 0
    factory = functools.partial(_judge_worker, "llm:fake:w", {"cache": False})
    pooled = PoolJudge(LLMJudge(FakeBackend("fake:w")), ThreadPool(factory, 3), Checkpoint(tmp_path, resume=False))
    try:
        assert [j.to_dict() for j in pooled.judge(pairs)] == [j.to_dict() for j in expected]
        assert pooled.worker_usage() == {"fake:w": meter.usage}
    finally:
        pooled.close()
    again = PoolJudge(LLMJudge(FakeBackend("fake:w")), ThreadPool(factory, 3), Checkpoint(tmp_path, resume=True))
    try:
        again.judge(pairs)  # every part from the checkpoint, with its usage
        assert again.worker_usage() == {"fake:w": meter.usage}
    finally:
        again.close()
    ck = tmp_path / ".ray-calls.jsonl"
    import json

    lines = [json.loads(x) for x in ck.read_text().splitlines()]
    lines[0]["result"] = lines[0]["result"]["judgements"]  # as an older vericite wrote it
    ck.write_text("".join(json.dumps(x) + "\n" for x in lines))
    old = PoolJudge(LLMJudge(FakeBackend("fake:w")), ThreadPool(factory, 3), Checkpoint(tmp_path, resume=True))
    try:
        assert [j.to_dict() for j in old.judge(pairs)] == [j.to_dict() for j in expected]
        assert old.worker_usage() is None
    finally:
        old.close()
