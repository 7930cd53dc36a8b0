"""A judge whose judging is spread over workers (``PoolJudge``, ``--ray``) is given each pair whole: the question
(CAQA's llm4 reads it) and the context (the triple judge reads the cited triple there) reach the workers, so the
pooled verdicts are the local ones. Workers are threads here (the same Pool interface as Ray's actors)."""

from __future__ import annotations

import functools
from typing import Any, Sequence

from vericite import registry
from vericite.distributed.pool import ThreadPool
from vericite.runs.distributed import PoolJudge
from vericite.runs.distributed_judge import _judge_worker
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


class ServerJudge:
    """Says what its server would: supported when ``base_url`` names the lenient server; counts its calls."""

    labels = ("supported", "not_supported")
    calls = 0

    def __init__(self, base_url: str | None) -> None:
        self.base_url = base_url
        self.id = "server-judge@1"  # the same id whatever the server, as llm:openai:<model> has

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        ServerJudge.calls += 1
        ok = "lenient" in str(self.base_url)
        return [Judgement(self.id, p.claim, p.evidence, 0.9 if ok else 0.1, self.labels[0] if ok else self.labels[1]) for p in pairs]


def _server_factory(arg: str, *, ctx: Any, **options: Any) -> ServerJudge:
    return ServerJudge(ctx.base_url)


def test_parts_are_keyed_by_the_server_and_settings_never_by_the_api_key(tmp_path, monkeypatch):
    # the key was the judge's id and the pairs: a resume against another --base-url read the first server's verdicts
    from vericite.distributed import Checkpoint
    from vericite.runs.distributed import judge_settings

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    reg = registry.registry_for("judges")
    reg.register("server-judge", _server_factory, replace=True)
    pairs = [JudgePair(f"e{i}", f"c{i}") for i in range(6)]

    def run(options: dict[str, Any]) -> tuple[list[str | None], int]:
        ServerJudge.calls = 0
        local = ServerJudge(options.get("base_url"))
        pooled = PoolJudge(local, ThreadPool(functools.partial(_judge_worker, "server-judge", options), 2), Checkpoint(tmp_path, resume=True), options)
        try:
            return [j.label for j in pooled.judge(pairs)], ServerJudge.calls
        finally:
            pooled.close()

    try:
        strict = {"base_url": "http://strict:8000/v1", "api_key": "sk-one", "threads": 1}
        assert run(strict) == (["not_supported"] * 6, 2)
        lenient = {"base_url": "http://lenient:8000/v1", "api_key": "sk-one", "threads": 1}
        assert run(lenient) == (["supported"] * 6, 2)  # judged anew on the other server, not read back
        # another key, other threads: the same verdicts, read back (no call)
        assert run({**lenient, "api_key": "sk-two", "threads": 4}) == (["supported"] * 6, 0)
    finally:
        reg.unregister("server-judge")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:1/v1")  # the server a judge asks without --base-url
    assert judge_settings(object(), {}) == {"base_url": "http://env:1/v1"}

    class Keyed:  # a judge whose recorded options and model settings hold a key: left out at any depth
        def __init__(self) -> None:
            self.backend = type("B", (), {"identity": lambda s: None, "cache_key_extra": lambda s: {"base_url": "u", "API_KEY": "k"}})()

        def options(self) -> dict[str, Any]:
            return {"threshold": 0.6, "auth": {"token": "t", "x": 1}}

    assert judge_settings(Keyed(), {"base_url": "b", "api_key": "k"}) == {"base_url": "b", "options": {"threshold": 0.6, "auth": {"x": 1}}, "model": {"base_url": "u"}}
