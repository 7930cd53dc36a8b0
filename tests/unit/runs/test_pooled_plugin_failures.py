"""The pooled run (``--concurrency``, ``--ray``) treats a plugin's failures as the local loop does
(tests/e2e/test_plugin_kinds_failures.py): a ``close`` that raises is a warning line, not the run's end; failures in
a row of a component that is not a model are worded by what failed."""

from __future__ import annotations

import pytest

from vericite import registry
from vericite.errors import BackendError, PluginError
from vericite.fakes.pipeline import FakeMethod
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.types import Sample, Triple


class CloseFailing(FakeMethod):
    def close(self) -> None:
        raise OSError("socket already closed")


class RetrieverDown(FakeMethod):
    def answer(self, sample):
        raise PluginError("retriever 'down:idx' (plugin) failed: ConnectionResetError: gone", kind="retriever")


@pytest.fixture
def method():
    added = []

    def add(name, cls):
        registry.methods.register(name, lambda arg, *, ctx, backend=None, **o: cls(backend=backend), replace=True)
        added.append(name)

    yield add
    for name in added:
        registry.methods.unregister(name)


def run(out, name, n=4):
    cfg = GenerateConfig(dataset="x", model="fake", method=name, cache=False)
    questions = [Sample(f"s{i}", f"What did Ann do {i}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(n)]
    return generate_pooled(cfg, out, ray=None, workers=2, samples=questions, backend_factory=lambda: FakeBackend(default="Ann painted."), progress=False)


def test_a_plugin_method_whose_close_raises_is_a_warning_and_the_pooled_run_completes(tmp_path, method, capsys):
    method("close-failing", CloseFailing)
    manifest = run(tmp_path / "r", "close-failing")
    assert manifest["status"] == "complete" and len((tmp_path / "r" / "samples.jsonl").read_text().splitlines()) == 4
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("warning:")]
    failed = "warning: method 'close-failing:fake' (plugin) failed: OSError: socket already closed"
    assert warned[0] == f"{failed} (on close, of the driver's copy, before the run; the run goes on)"
    # each worker that built a copy closes it as the pool closes: the same warning, and the run still completes
    assert warned[1:] and set(warned[1:]) == {f"{failed} (on close, of a worker's copy, as the pool closes)"}, warned


def test_failures_in_a_row_of_a_retriever_are_worded_by_it_in_the_pooled_run(tmp_path, method):
    method("retriever-down", RetrieverDown)
    with pytest.raises(BackendError) as e:
        run(tmp_path / "r", "retriever-down")
    assert str(e.value).endswith("(the retriever failed on 3 questions in a row; finished samples are kept, rerun with --resume)"), str(e.value)
    assert "calls failed" not in str(e.value)
