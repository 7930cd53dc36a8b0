"""``models.release`` finds the model under its wrappers by what each says it wraps (``protocols.BackendWrapper``:
``wrapped_backend()``), not by an attribute that happens to be called ``backend``: a plugin's wrapper that keeps
its model under another name is walked through, and a model with a ``backend`` attribute of its own (a device)
is not taken for a wrapper. A process-shared local model's weights stay open either way; only the wrappers' own
call caches are closed."""

from __future__ import annotations

from typing import Any

from vericite.models import local as local_models
from vericite.models import release, with_cache
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.models.usage import MeteredBackend, UsageMeter
from vericite.protocols import BackendWrapper


class Weights(FakeBackend):
    """A local model's weights: ``close()`` counted."""

    def __init__(self, name: str = "fake:weights") -> None:
        super().__init__(name)
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


class Logging:
    """A plugin's wrapper (a request log, say) that keeps its model as ``inner`` and says so."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def identity(self):
        return self.inner.identity()

    def generate(self, prompts, params):
        return self.inner.generate(prompts, params)

    def logprobs(self, texts):
        return self.inner.logprobs(texts)

    def wrapped_backend(self) -> Any:
        return self.inner

    def close(self) -> None:
        self.inner.close()


def shared(monkeypatch, weights: Weights) -> Weights:
    monkeypatch.setitem(local_models._LOCAL, (weights.name,), weights)
    return weights


def test_the_wrappers_say_what_they_wrap_and_a_model_is_no_wrapper(tmp_path):
    leaf = FakeBackend()
    metered, cached = MeteredBackend(leaf, UsageMeter()), CachedBackend(leaf, tmp_path / "c.sqlite")
    assert isinstance(metered, BackendWrapper) and metered.wrapped_backend() is leaf
    assert isinstance(cached, BackendWrapper) and cached.wrapped_backend() is leaf
    assert not isinstance(leaf, BackendWrapper) and isinstance(Logging(leaf), BackendWrapper)
    cached.close()


def test_release_walks_a_plugin_wrapper_to_the_shared_weights_under_it(tmp_path, monkeypatch):
    closed_caches: list[CallCache] = []
    real_close = CallCache.close
    monkeypatch.setattr(CallCache, "close", lambda self: (closed_caches.append(self), real_close(self))[1])
    weights = shared(monkeypatch, Weights())
    cached = with_cache(weights, tmp_path / "own.sqlite")  # a call cache this wrapper opened: its own to close
    release(MeteredBackend(Logging(cached), UsageMeter()))
    assert weights.closes == 0  # the process's weights: closed at exit, not by one caller
    assert closed_caches == [cached.cache]
    own = Weights("fake:own")  # weights nobody shares: closed, through the wrappers
    release(MeteredBackend(Logging(own), UsageMeter()))
    assert own.closes == 1


def test_a_shared_model_with_a_backend_attribute_of_its_own_is_not_walked_into(monkeypatch):
    weights = shared(monkeypatch, Weights())
    weights.backend = "cuda"  # its device, not a model it wraps
    release(weights)
    assert weights.closes == 0
