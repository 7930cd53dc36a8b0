"""One evaluation loads a model name once, however many roles (judge, four-class judge, LM) name it."""

from __future__ import annotations

from types import SimpleNamespace

import vericite.models as models
from vericite.evaluate.pipeline import build_context
from vericite.models import model_loader


def test_a_model_named_by_two_roles_is_loaded_once(monkeypatch):
    loaded: list[str] = []

    def fake_load(name, *, ctx=None, **kw):
        loaded.append(name)
        return object()

    monkeypatch.setattr(models, "load_model", fake_load)
    ctx = build_context(SimpleNamespace(threads=1, cache=False))
    a = model_loader(ctx)("qwen")
    b = model_loader(ctx)("qwen")
    c = model_loader(ctx)("smol")
    assert a is b and c is not a
    assert loaded == ["qwen", "smol"]
    assert ctx.threads == 1 and ctx.cache is False


def test_ready_models_are_used_and_not_loaded(monkeypatch):
    monkeypatch.setattr(models, "load_model", lambda name, **kw: (_ for _ in ()).throw(AssertionError(name)))
    ready = object()
    ctx = build_context(SimpleNamespace(), {"qwen": ready})
    assert model_loader(ctx)("qwen") is ready


def test_two_evaluations_do_not_share_models(monkeypatch):
    monkeypatch.setattr(models, "load_model", lambda name, **kw: object())
    cfg = SimpleNamespace()
    assert model_loader(build_context(cfg))("qwen") is not model_loader(build_context(cfg))("qwen")
