"""What the llama.cpp backend (``llamacpp.py``) reads from the environment, and how its state cache saves and
restores a context: the KV cache of the evaluated tokens (and what llama.cpp keeps with it), without
llama-cpp-python's ``n_batch x n_vocab`` ``scores`` array, which sampling does not read when ``logits_all=False``
and which its own ``save_state`` would copy on every call."""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np

from ..errors import BackendError


def _env_int(name: str, default: int, least: int, what: str) -> int:
    """The whole number in ``$name`` (``default`` when unset or blank); at least ``least``, else one clear error."""
    env = os.environ.get(name, "").strip()
    if not env:
        return default
    try:
        n = int(env)
    except ValueError:
        raise BackendError(f"{name} must be a whole number{what}, not {env!r}") from None
    if n < least:
        raise BackendError(f"{name} must be {'0 (off) or more' if least == 0 else f'at least {least}'}, not {n}")
    return n


def default_threads() -> int:
    """``$VERICITE_THREADS``, else 2."""
    return _env_int("VERICITE_THREADS", 2, 1, "")


def default_state_cache_mb() -> int:
    """``$VERICITE_STATE_CACHE_MB`` (MiB of llama.cpp states kept for prefix reuse), else 0 (off)."""
    return _env_int("VERICITE_STATE_CACHE_MB", 0, 0, " of MiB")


def save_kv_state(llama_cpp: Any, llm: Any) -> Any:
    """``llm``'s state as a ``llama_cpp.LlamaState`` holding the context's state bytes and no scores."""
    size = int(llama_cpp.llama_state_get_size(llm.ctx))
    buf = (ctypes.c_uint8 * size)()
    n = int(llama_cpp.llama_state_get_data(llm.ctx, buf, size))
    if n > size:
        raise RuntimeError("llama.cpp: the state is larger than its size")
    return llama_cpp.LlamaState(
        input_ids=llm.input_ids.copy(), scores=np.zeros((0, 0), dtype=np.single), n_tokens=llm.n_tokens,
        llama_state=bytes(memoryview(buf)[:n]), llama_state_size=n, seed=llm._seed,
    )


def load_kv_state(llama_cpp: Any, llm: Any, state: Any) -> None:
    """Restore a state made by :func:`save_kv_state` into ``llm``."""
    llm.input_ids = state.input_ids.copy()
    llm.n_tokens = state.n_tokens
    llm._requires_eval = True  # the next prompt decodes at least one token before sampling
    llm._seed = state.seed
    buf = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
    if llama_cpp.llama_state_set_data(llm.ctx, buf, state.llama_state_size) != state.llama_state_size:
        raise RuntimeError("llama.cpp could not restore a cached state")
