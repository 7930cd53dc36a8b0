"""Local GGUF weights, loaded once per process: the registry factory of the ``llamacpp`` backend.

Generation, the LLM judge and G-Eval asking for the same model file with the same settings share one
``LlamaCppBackend`` (and its memory) instead of loading it again; every instance is closed at exit, while the
interpreter is whole (llama.cpp's finalisers fail noisily during module teardown).
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from ..errors import ModelUnavailableError
from ..protocols import Closeable

_LOCAL: dict[tuple[Any, ...], Any] = {}


@atexit.register
def _close_local() -> None:
    while _LOCAL:
        _, backend = _LOCAL.popitem()
        if isinstance(backend, Closeable):
            try:
                backend.close()
            except Exception:  # noqa: BLE001 - best effort at exit
                pass


def from_spec(arg: str, *, ctx: Any, name: str | None = None, sha256: str | None = None, **options: Any) -> Any:
    """Registry factory: ``llamacpp:<path to .gguf>``, with ``ctx.threads``; one shared instance per file and
    settings. ``name``/``sha256`` are given by registered models (their name and known hash)."""
    if not arg:
        raise ModelUnavailableError("llamacpp: needs a model file, e.g. llamacpp:/path/to/model.gguf")
    path = Path(arg).expanduser()
    if not path.is_file():
        raise ModelUnavailableError(f"GGUF model file not found: {path}")
    kw: dict[str, Any] = {"name": name or f"llamacpp:{arg}"}
    if sha256 is not None:
        kw["sha256"] = sha256
    from .llamacpp import LlamaCppBackend, default_state_cache_mb  # imports numpy; llama_cpp itself only when the backend is made

    # $VERICITE_STATE_CACHE_MB is a setting of the instance too: an instance made before it changed is not shared
    env = () if "state_cache_mb" in options else (("env_state_cache_mb", default_state_cache_mb()),)
    try:
        key: tuple[Any, ...] | None = (str(path), ctx.threads, tuple(sorted(options.items())), tuple(sorted(kw.items())), env)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _LOCAL:
        return _LOCAL[key]
    backend = LlamaCppBackend(str(path), n_threads=ctx.threads, **kw, **options)
    if key is not None:
        _LOCAL[key] = backend
    return backend
