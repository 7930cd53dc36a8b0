"""A plugin's registered model that builds vericite's ``llamacpp`` backend (as a ``ModelSpec`` does) comes back in
a ``GuardedProxy`` (the backend has properties), while ``llamacpp:<the same file>`` comes back plain: two objects
around ONE ``LlamaCppBackend`` (``models/local.py`` shares one instance per file and settings). Nothing in vericite
decides "the same model" by object identity across spellings (roles share a model by its name: ``build_method``,
``evaluate.pipeline.build_context``, ``runs.runner.run_judge``), so these pin what must hold: one instance in
memory, one identity, one set of capabilities, and one call cache's rows, whichever spelling asks first.
No weights are loaded: the file is a stand-in, and ``generate`` is replaced on the class."""

from __future__ import annotations

import pytest

from vericite import registry
from vericite.guard import GuardedProxy
from vericite.models import load_model
from vericite.models import local
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.llamacpp import LlamaCppBackend
from vericite.types import Completion, GenParams


@pytest.fixture
def gguf(tmp_path, monkeypatch):
    """``plugin-gguf``: a plugin's model of a stand-in GGUF file (built as a ``ModelSpec`` builds its backend);
    yields the file's path. ``LlamaCppBackend.generate`` answers by counting its calls (``calls``)."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"not really weights")
    calls: list[str] = []

    def generate(self, prompts, params):
        calls.extend(m[-1]["content"] for m in prompts)
        return [Completion(text=f"said {m[-1]['content']}", prompt_tokens=3, completion_tokens=2, finish_reason="stop") for m in prompts]

    monkeypatch.setattr(LlamaCppBackend, "generate", generate)
    monkeypatch.setattr(local, "_LOCAL", {})
    monkeypatch.setattr(local, "_REGISTERED", set())

    def factory(arg, *, ctx, **options):
        return registry.create("backends", f"llamacpp:{path}", ctx, name="plugin-gguf", **options)

    registry.models.register("plugin-gguf", factory, replace=True)
    yield path, calls
    registry.models.unregister("plugin-gguf")


def target(obj):
    return object.__getattribute__(obj, "_vericite_target") if isinstance(obj, GuardedProxy) else obj


@pytest.mark.parametrize("first", ["plugin", "path"])
def test_the_plugin_spelling_and_the_path_share_one_instance(gguf, first):
    path, _ = gguf
    names = {"plugin": "plugin-gguf", "path": f"llamacpp:{path}"}
    order = [first, *(n for n in names if n != first)]
    got = {n: load_model(names[n], cache=False) for n in order}
    assert isinstance(got["plugin"], GuardedProxy) and not isinstance(got["path"], GuardedProxy)  # two objects...
    assert target(got["plugin"]) is got["path"]  # ...around one instance: one model in memory
    assert len(local._LOCAL) == 1
    assert target(load_model("plugin-gguf", cache=False)) is got["path"]  # a second load of either: the same one
    assert got["plugin"].identity() == got["path"].identity()
    assert got["path"].identity().name == "plugin-gguf"  # named as registered, whichever came first
    assert type(CachedBackend(got["plugin"])).__mro__ == type(CachedBackend(got["path"])).__mro__  # the same capabilities


@pytest.mark.parametrize("first", ["plugin-gguf", "path"])
def test_a_call_answered_through_one_spelling_is_a_cache_hit_through_the_other(gguf, tmp_path, first):
    path, calls = gguf
    names = ["plugin-gguf", f"llamacpp:{path}"] if first == "plugin-gguf" else [f"llamacpp:{path}", "plugin-gguf"]
    cache = CallCache(tmp_path / "calls.sqlite")
    backends = [load_model(n, cache=cache) for n in names]  # both loaded before a call, as a command's roles are
    params = GenParams(max_tokens=8, temperature=0.0)
    a = backends[0].generate([[{"role": "user", "content": "q"}]], params)[0]
    b = backends[1].generate([[{"role": "user", "content": "q"}]], params)[0]
    assert calls == ["q"]  # asked once: the other spelling's call was answered from the same cache row
    assert (a.cached, b.cached) == (False, True) and a.text == b.text == "said q"
    assert len(cache) == 1


def test_a_method_of_the_plugin_model_judged_by_its_path_loads_it_once(gguf):
    """``--model plugin-gguf --judge llm:llamacpp:<its file>``: two names, so two roles' wrappers (as for two
    spellings of a built-in model), one instance under both."""
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import build_method

    path, _ = gguf
    cfg = GenerateConfig(method="vtg", model="plugin-gguf", dataset="unused.json", cache=False, method_args={"verifier_judge": f"llm:llamacpp:{path}"})
    m = build_method(cfg)

    def unwrap(b):
        while hasattr(b, "backend") and not isinstance(b, LlamaCppBackend):
            b = b.backend
        return target(b)

    assert unwrap(m.backend) is unwrap(m.judge.backend)
    assert len(local._LOCAL) == 1
