"""Language-model backends and the one function that turns a model name into one: ``load_model``.

Names:
- a registered embedded model: ``qwen2.5-coder-1.5b``, ``smollm2-135m`` (weights verified by sha256);
- ``llamacpp:<path to .gguf>``: any local GGUF file (identity records its sha256);
- ``openai:<model>``: any OpenAI-compatible server (``base_url``, else ``$OPENAI_BASE_URL``, else OpenAI's);
  its key (``api_key``, else ``$OPENAI_API_KEY``) never goes over plain http to another host than this machine,
  and the key from ``$OPENAI_API_KEY`` sent to a server not OpenAI's is named on stderr once (``openai_http``);
  ``timeout`` is its total time limit per request, ``retries`` how often a failed request is tried again;
- ``fake`` or ``fake:<anything>``: the deterministic fake used by tests;
- ``<backend>:<argument>`` for any other registered backend (plugins).

Every role that needs a model (answers, judges, G-Eval, dataset builders) builds it with ``load_model`` and the
same options, taken from its command's configuration by ``model_options``: a ``--base-url`` given to a command
reaches every model of that command.

Every name is built by ``vericite.registry.create`` (``models`` for a registered model, ``backends`` for
``<backend>:<argument>``) with one :class:`~vericite.registry.BuildContext`, then wrapped in the call cache.
Nothing heavy is imported until a backend is made.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Callable, Sequence

from .. import registry
from ..registry import BuildContext

__all__ = ["MODEL_OPTIONS", "check_model", "load_model", "model_loader", "model_options", "split_name", "with_cache"]

#: the options every model role of a command shares (fields of the command's configuration)
MODEL_OPTIONS = ("threads", "base_url", "cache", "timeout", "request_retries")

_UNSET: Any = object()


def split_name(name: str) -> tuple[str | None, str]:
    """``"openai:gpt-4o"`` -> ``("openai", "gpt-4o")``; a registered model name -> ``(None, name)``.
    A name with a colon whose prefix is not a backend (e.g. a Windows path) is left whole."""
    prefix, sep, rest = name.partition(":")
    if sep and (prefix in registry.backends or prefix.isidentifier()) and len(prefix) > 1:
        return prefix, rest
    if not sep and name in registry.backends and name not in registry.models:
        return name, ""
    return None, name


def model_options(cfg: Any) -> dict[str, Any]:
    """The keyword arguments of ``load_model`` (and ``vericite.judges.load_judge``) that a configuration
    object sets: its ``threads``, ``base_url``, ``cache``, ``timeout`` and ``request_retries`` (as
    ``retries``), where it has them and they are not None."""
    out: dict[str, Any] = {}
    for field in MODEL_OPTIONS:
        value = getattr(cfg, field, None)
        if value is not None:
            out["retries" if field == "request_retries" else field] = value
    return out


def load_model(
    name: str,
    *,
    threads: int | None = None,
    base_url: str | None = None,
    cache: bool | str | os.PathLike[str] | Any = _UNSET,
    api_key: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    ctx: BuildContext | None = None,
    **opts: Any,
) -> Any:
    """A ready backend for ``name`` (see the module docstring).

    ``threads``: CPU threads for local models (default ``$VERICITE_THREADS`` or 2). ``base_url``, ``api_key``,
    ``timeout``, ``retries``: the server of ``openai:`` models, its key and per-request limits. ``cache``: True
    (the default call cache), False, a path to a cache file, or a ``CallCache``. ``ctx``: a BuildContext to
    start from (the keyword settings given here override its fields). ``opts`` go to the backend (e.g.
    ``n_ctx``, ``reuse_prefix``, ``replies``). Unknown names get a did-you-mean error; a missing or altered
    embedded model a ModelUnavailableError that says how to install it."""
    given = {"threads": threads, "base_url": base_url, "api_key": api_key, "timeout": timeout, "retries": retries}
    changes = {k: v for k, v in given.items() if v is not None}
    if cache is not _UNSET:
        changes["cache"] = cache
    ctx = dataclasses.replace(ctx if ctx is not None else BuildContext(), **changes)
    name = name.strip()
    backend_name, _ = split_name(name)
    kind = "models" if backend_name is None else "backends"
    return with_cache(registry.create(kind, name, ctx, **opts), ctx.cache)


def check_model(name: str) -> None:
    """Checks ``name`` as :func:`load_model` would build it, without loading anything: an unknown name raises the
    registry's did-you-mean error; a registered embedded model that is not installed (nor can be assembled from its
    installed parts) and a ``llamacpp:<path>`` whose file is missing raise the ``ModelUnavailableError`` that loading
    would raise. What cannot be known without loading (a file's checksum, a server's reachability) is not checked.
    ``vericite run`` calls it for the models an evaluation loads late (a task's ``preload``), before it generates."""
    from pathlib import Path

    from ..errors import ModelUnavailableError

    name = name.strip()
    backend_name, arg = split_name(name)
    if backend_name is None:
        spec = registry.models.get(registry.models.split(name)[0])  # unknown names get the did-you-mean error
        from .provision import ModelSpec, installed_part_dirs

        if isinstance(spec, ModelSpec) and not spec.is_installed() and not (spec.source == "parts" and installed_part_dirs() is not None):
            raise ModelUnavailableError(f"model {spec.name!r} is not installed: {spec.install_hint}")
        return
    registry.backends.get(backend_name)
    if backend_name == "llamacpp":
        if not arg:
            raise ModelUnavailableError("llamacpp: needs a model file, e.g. llamacpp:/path/to/model.gguf")
        if not Path(arg).expanduser().is_file():
            raise ModelUnavailableError(f"GGUF model file not found: {Path(arg).expanduser()}")


def model_loader(ctx: BuildContext) -> Callable[[str], Any]:
    """How a factory that needs a model loads it: ``ctx.load_model``, else :func:`load_model` with ``ctx``."""
    if ctx.load_model is not None:
        return ctx.load_model
    return lambda name: load_model(name, ctx=ctx)


def with_cache(backend: Any, cache: Any) -> Any:
    """``backend`` behind the call cache: True (the default file), a path, or a ``CallCache``; False/None: as is."""
    if cache is False or cache is None:
        return backend
    from .cache import CachedBackend, open_cache

    opened = open_cache(cache)
    return CachedBackend(backend, opened, owns_cache=opened is not cache)  # a cache opened here is the wrapper's to close


def release(backend: Any) -> None:
    """Close a backend its caller loaded (:func:`load_model`, through any wrappers: the call cache, a usage meter):
    its client (an ``openai:`` model's HTTP client) and the call cache it opened; a local model's weights, which the
    process shares (``models/local.py``), stay loaded for the others and are closed at exit, only the wrappers'
    own call caches are closed. The wrappers are those that say what they wrap (``protocols.BackendWrapper``)."""
    from ..protocols import BackendWrapper, Closeable
    from .cache import CachedBackend
    from .local import shared_by_process

    chain = [backend]
    while isinstance(chain[-1], BackendWrapper) and len(chain) < 16:
        chain.append(chain[-1].wrapped_backend())
    if shared_by_process(chain[-1]):
        for b in chain:
            if isinstance(b, CachedBackend):
                b.close_cache()
    elif isinstance(backend, Closeable):
        backend.close()


def close_all(objects: Sequence[Any], models: Sequence[Any]) -> None:
    """What one party built: ``objects`` closed (those with ``close()``: a method, a judge, a suite's families),
    then ``models``, the models loaded for them (:func:`release`: their clients and call caches; a local model's
    shared weights stay). Each once (a judge the suite holds too), each tried: one that fails does not keep the
    others open; the first error is raised at the end. A pool's worker closes what it built so
    (``runs/distributed.py``), and so do the runs without a pool (``runs/loop.generate_run``,
    ``evaluate.pipeline.evaluate_items``)."""
    from ..protocols import Closeable

    first: Exception | None = None
    seen: set[int] = set()
    closers = [(o, o.close) for o in objects if isinstance(o, Closeable)] + [(m, functools.partial(release, m)) for m in models]
    for obj, close in closers:
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        try:
            close()
        except Exception as e:  # noqa: BLE001 - the others are closed all the same
            first = first or e
    if first is not None:
        raise first


class Closing:
    """``close()``: :func:`close_all` of ``objects`` and ``models`` (for ``runs.loop.close_after_run``)."""

    def __init__(self, objects: Sequence[Any], models: Sequence[Any]) -> None:
        self.objects, self.models = objects, models

    def close(self) -> None:
        close_all(self.objects, self.models)
