"""Ctrl-C inside a llama.cpp evaluation. Python runs its SIGINT handler only between bytecodes, and one
``llama_decode`` of a full batch can take many seconds on a busy machine (a scorer window of 512 tokens with every
row's logits took over 10 s beside another CPU-bound job), so ``KeyboardInterrupt`` came only when the decode
returned. :func:`interruptible` makes the decode stop between two of its graph's nodes instead: while it runs,
SIGINT sets a flag (its handler runs when llama.cpp calls the context's abort callback, which is Python code run
on the calling thread), the callback then asks llama.cpp to abort, and ``KeyboardInterrupt`` is raised when the
evaluation returns. Only on the main thread and only while SIGINT has Python's own handler (which raises
``KeyboardInterrupt`` anyway); elsewhere the evaluation runs as it did."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import signal
import threading
from typing import Any, Callable, Iterator

#: set by the SIGINT handler :func:`interruptible` installs, read by the abort callbacks
_tripped = threading.Event()

#: llama-cpp-python's logger: the line llama.cpp logs as an error when a decode is aborted ("decode: removing
#: memory module entries ...") is not printed, Ctrl-C asked for the abort
_llama_log = logging.getLogger("llama-cpp-python")


def _trip(_signum: int, _frame: Any) -> None:
    _tripped.set()


def abort_requested(_data: Any = None) -> bool:
    """The abort callback's answer: whether Ctrl-C came during the evaluation under way (then llama.cpp's log
    is quiet until :func:`interruptible` puts its level back)."""
    if not _tripped.is_set():
        return False
    _llama_log.setLevel(logging.CRITICAL + 1)
    return True


@contextlib.contextmanager
def interruptible(on_abort: Callable[[], None] | None = None) -> Iterator[bool]:
    """Run an evaluation whose abort callback is :func:`abort_requested`, with SIGINT setting its flag. On Ctrl-C
    the evaluation's own error (llama.cpp's "decode returned 2") is replaced by ``KeyboardInterrupt``, after
    ``on_abort`` (e.g. forgetting the tokens a context may not hold) and after the handler is put back. Yields
    whether Ctrl-C is so handled (the abort callback is then worth setting: :func:`set_abort_callback`)."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield False
        return
    _tripped.clear()
    level = _llama_log.level
    signal.signal(signal.SIGINT, _trip)
    try:
        yield True
    except Exception:
        if not _tripped.is_set():
            raise
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _llama_log.setLevel(level)
        tripped = _tripped.is_set()
        _tripped.clear()
        if tripped:
            if on_abort is not None:
                on_abort()
            raise KeyboardInterrupt  # (an error of the evaluation, if any, was llama.cpp's abort)


def set_abort_callback(llama_cpp: Any, llm: Any, armed: bool = True) -> None:
    """Give ``llm`` (a ``llama_cpp.Llama``) :func:`abort_requested` as its context's abort callback when ``armed``,
    none otherwise (llama.cpp then calls no Python between the nodes: an evaluation off the main thread, where
    Ctrl-C is not handled so, takes no GIL for it). The ctypes callback is kept on ``llm`` so it lives as long as
    the context; the context is told only when that changes."""
    if getattr(llm, "_vericite_abort_armed", False) == armed:
        return
    setter = getattr(llama_cpp, "llama_set_abort_callback", None)
    ctx = getattr(getattr(llm, "_ctx", None), "ctx", None)
    if setter is None or ctx is None:
        return  # an older binding, or a context not made yet: Ctrl-C comes when the decode returns
    if getattr(llm, "_vericite_abort_cb", None) is None:
        llm._vericite_abort_cb = llama_cpp.ggml_abort_callback(abort_requested)
    setter(ctx, llm._vericite_abort_cb if armed else ctypes.cast(None, llama_cpp.ggml_abort_callback), None)
    llm._vericite_abort_armed = armed
