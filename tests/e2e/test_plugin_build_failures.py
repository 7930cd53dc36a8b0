"""``vericite build`` with a plugin model that raises something other than a ``BackendError``: the build ends as
it does when a model server fails (checked side by side), never in a traceback: one line naming the plugin, exit 2,
the entries written before kept, and ``--resume`` finishes once the model answers. The builders read their graph
from a file or an on-disk store, never from ``registry.graphs``, so a model is the plugin a build reaches, besides
a builder registered under a builder's name: a plugin graph store is only ever such a builder's own, and its
failure (a close that raises) is the builder's one line, exit 2, what it wrote left in place. The plugins are
registered as in ``test_plugin_kinds_failures.py``."""

from __future__ import annotations

import json

import pytest

from tests.e2e.test_plugin_kinds_failures import invoke, one_line, plugin  # noqa: F401  (plugin: a fixture)
from tests.support.builder import hand_pool, writer
from tests.support.caqa import write_pool
from vericite import registry
from vericite.errors import BackendError
from vericite.models.fake import FakeBackend

RAISED = {
    "server": (BackendError("the server said 500"), "the server said 500"),
    "KeyError": (KeyError("choices"), "backend 'flaky-writer' (plugin) failed: KeyError: 'choices'"),
}


class FlakyWriter(FakeBackend):
    """The builders' scripted writer as a plugin model: once ``after`` model calls (of any kind) were made, every
    ``failing`` call raises ``raised`` while ``broken`` is set."""

    broken = True
    calls = 0
    after = 0
    failing = "generate"
    raised: BaseException = RuntimeError()

    def __init__(self) -> None:
        super().__init__("flaky-writer", replies=writer())

    def _call(self, name: str) -> None:
        FlakyWriter.calls += 1
        if FlakyWriter.broken and name == FlakyWriter.failing and FlakyWriter.calls > FlakyWriter.after:
            raise FlakyWriter.raised

    def generate(self, prompts, params):
        self._call("generate")
        return super().generate(prompts, params)

    def logprobs(self, texts):
        self._call("logprobs")
        return super().logprobs(texts)


@pytest.fixture
def flaky(plugin):
    plugin(registry.backends, "flaky-writer", FlakyWriter)

    def failing(case: str, name: str, after: int) -> str:
        FlakyWriter.broken, FlakyWriter.calls, FlakyWriter.after, FlakyWriter.failing = True, 0, after, name
        FlakyWriter.raised = RAISED[case][0]
        return RAISED[case][1]

    return failing


@pytest.mark.parametrize("case", list(RAISED))
def test_build_caqa_with_a_plugin_model_that_raises_stops_as_for_a_failing_server_and_resumes(tmp_path, flaky, case):
    line = flaky(case, "generate", after=12)
    out = tmp_path / "caqa.jsonl"
    args = ["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "12", "--model", "flaky-writer", "--out", str(out), "-q", "--no-cache"]
    r = invoke(args)
    assert one_line(r) == f"error: the model failed on 3 queries in a row (last: {line}); fix it and rerun with --resume"
    kept = out.read_text().splitlines()
    assert kept and json.loads((tmp_path / "caqa.log.json").read_text())["status"] == "interrupted"
    FlakyWriter.broken = False
    r = invoke([*args, "--resume"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert out.read_text().splitlines()[: len(kept)] == kept and json.loads((tmp_path / "caqa.log.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("case", list(RAISED))
def test_build_biokalma_with_a_plugin_scorer_that_raises_ends_as_for_a_failing_server_and_resumes(tmp_path, flaky, case):
    line = flaky(case, "logprobs", after=6)  # the first entry's calls answered
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(hand_pool()), encoding="utf-8")
    out = tmp_path / "ds.jsonl"
    args = ["build", "biokalma", "--pool", str(pool), "--n", "2", "--iterations", "3", "--min-gold", "2", "--model", "flaky-writer", "--out", str(out),
            "-q", "--no-cache"]  # fmt: skip
    r = invoke(args)
    assert one_line(r) == f"error: {line}"
    kept = out.read_text().splitlines()
    assert len(kept) == 1 and json.loads((tmp_path / "ds.log.json").read_text())["status"] == "interrupted"
    FlakyWriter.broken = False
    r = invoke([*args, "--resume"])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert out.read_text().splitlines()[:1] == kept and len(out.read_text().splitlines()) == 2


class StoreBuilder:
    """A plugin builder registered as ``caqa`` that writes its items from its own graph store, then fails closing
    the store (the one place a plugin's graph store can be in ``vericite build``)."""

    id = "store-builder@1"

    def __init__(self, **options) -> None:
        self.options = options

    def build(self, out, *, resume=False):
        with open(out, "w", encoding="utf-8") as f:
            f.write(json.dumps({"id": "caqa-000000-supportive", "question": "Who?"}) + "\n")
        raise OSError(5, "Input/output error", "graph.db/LOCK")  # the store's close


@pytest.fixture
def builtin_caqa():
    """The built-in ``caqa`` builder put back after a test replaced it (set up before ``plugin``: torn down after)."""
    entry = registry.builders._entries["caqa"]
    yield
    registry.builders.register("caqa", entry, replace=True)
    registry.builders._builtin.add("caqa")


def test_a_plugin_builder_whose_graph_store_fails_to_close_ends_in_one_line_and_its_items_stay(tmp_path, builtin_caqa, plugin):
    plugin(registry.builders, "caqa", StoreBuilder)
    out = tmp_path / "caqa.jsonl"
    r = invoke(["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "4", "--out", str(out), "-q", "--no-cache"])
    assert one_line(r) == "error: builder 'caqa' (plugin) failed: OSError: [Errno 5] Input/output error: 'graph.db/LOCK'"
    assert len(out.read_text().splitlines()) == 1
