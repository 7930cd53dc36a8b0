"""``generate --concurrency N``: what each worker thread built for itself (its VTG method's own judge model, here
``llm:fake-judge``) is closed when the pool closes, once each; the shared backend the workers answer with is the
run's, closed by it and not by the workers. A local model's weights, shared by the process, are never closed by
one worker (``models.release``)."""

from __future__ import annotations

from vericite.models import release
from vericite.models import local as local_models
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.types import Sample

from tests.support.vtg import DOCS, QUESTION, slow_script

SAMPLES = [Sample(f"q{i}", QUESTION, passages=list(DOCS)) for i in range(1, 5)]


def test_each_workers_own_judge_model_is_closed_once_when_the_run_ends(tmp_path, monkeypatch):
    closed: dict[str, int] = {}

    def counting_close(self) -> None:
        closed[f"{self.name}#{id(self)}"] = closed.get(f"{self.name}#{id(self)}", 0) + 1

    monkeypatch.setattr(FakeBackend, "close", counting_close)
    cfg = GenerateConfig(dataset="x", method="vtg", model="vtg-script", cache=False,
                         method_args={"k": 2, "verifier_judge": "llm:fake:judge", "docs_per_query": 1, "trials": 1})  # fmt: skip
    shared = slow_script()
    generate_pooled(cfg, tmp_path / "r", ray=None, workers=2, samples=SAMPLES, backend_factory=lambda: shared, progress=False, batch_size=1)
    judges = {k: v for k, v in closed.items() if k.startswith("fake:judge#")}
    assert len(judges) == 3 and set(judges.values()) == {1}, closed  # the driver's copy and each of the 2 workers', once
    assert not any(k.startswith(f"{shared.name}#{id(shared)}") for k in closed)  # the factory's backend is the caller's


def test_release_leaves_a_process_shared_local_model_open(monkeypatch):
    closed = []

    class Weights(FakeBackend):
        def close(self) -> None:
            closed.append(self)

    weights = Weights()
    monkeypatch.setitem(local_models._LOCAL, ("w",), weights)
    release(weights)
    assert closed == []
    release(Weights())
    assert len(closed) == 1


def test_a_judge_worker_closes_its_judge_model_once():
    from vericite.runs.distributed_judge import JudgeWorker

    closed = []

    class Model(FakeBackend):
        def close(self) -> None:
            closed.append(self)

    class Judge:
        id = "llm:m"

        def __init__(self) -> None:
            self.backend = Model()

    worker = JudgeWorker(Judge())
    worker.close()
    worker.close()
    assert len(closed) == 1
