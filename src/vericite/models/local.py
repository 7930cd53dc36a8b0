"""Local GGUF weights, loaded once per process: the registry factory of the ``llamacpp`` backend.

Generation, the LLM judge and G-Eval asking for the same model file with the same settings share one
``LlamaCppBackend`` (and its memory) instead of loading it again, whatever spelling named the file: the key is the
file's resolved path (``llamacpp:<path>``, a symlink to it, and the registered name of that file, e.g.
``qwen2.5-coder-1.5b``, are one file) and the settings. The shared instance carries the registered name and known
hash when any spelling of this process was the registered one (whichever came first), else ``llamacpp:<path>``.
Every instance is closed at exit, while the interpreter is whole (llama.cpp's finalisers fail noisily during module
teardown).
"""

from __future__ import annotations

import atexit
from pathlib import Path
from typing import Any

from ..errors import ModelUnavailableError
from ..protocols import Closeable

_LOCAL: dict[tuple[Any, ...], Any] = {}
#: the keys of ``_LOCAL`` whose instance carries a registered name (made or since named by one)
_REGISTERED: set[tuple[Any, ...]] = set()


@atexit.register
def _close_local() -> None:
    _REGISTERED.clear()
    while _LOCAL:
        _, backend = _LOCAL.popitem()
        if isinstance(backend, Closeable):
            try:
                backend.close()
            except Exception:  # noqa: BLE001 - best effort at exit
                pass


def shared_by_process(backend: Any) -> bool:
    """Whether ``backend`` is one of this process's shared local models (closed at exit, not by whoever asked)."""
    return any(backend is b for b in list(_LOCAL.values()))


def from_spec(arg: str, *, ctx: Any, name: str | None = None, sha256: str | None = None, **options: Any) -> Any:
    """Registry factory: ``llamacpp:<path to .gguf>``, with ``ctx.threads``; one shared instance per file (its
    resolved path) and settings. ``name``/``sha256`` are given by registered models (their name and known hash,
    verified against the file): an instance of the same file made under ``llamacpp:<path>`` takes them."""
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
        key: tuple[Any, ...] | None = (str(path.resolve()), ctx.threads, tuple(sorted(options.items())), env)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _LOCAL:
        backend = _LOCAL[key]
        if name is not None and key not in _REGISTERED:  # first made as llamacpp:<path>: now named as registered
            backend.register_as(name, sha256)
            _REGISTERED.add(key)
        return backend
    backend = LlamaCppBackend(str(path), n_threads=ctx.threads, **kw, **options)
    if key is not None:
        _LOCAL[key] = backend
        if name is not None:
            _REGISTERED.add(key)
    return backend
