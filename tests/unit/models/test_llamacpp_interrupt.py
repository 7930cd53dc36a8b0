"""Ctrl-C inside a llama.cpp evaluation (models/llamacpp_interrupt.py), with a stand-in for the decode: it asks the
abort callback between its steps, as llama.cpp does between a graph's nodes (tests/real/test_llamacpp_interrupt.py
runs the real one)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from vericite.models.llamacpp_interrupt import abort_requested, interruptible, set_abort_callback


@pytest.fixture(autouse=True)
def python_handles_sigint():
    """Python's own SIGINT handler, as in a terminal (a shell's background job starts with SIGINT ignored)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def fake_decode(steps: int = 10_000) -> int:
    """Steps until the abort callback asks to stop; llama.cpp's decode then fails with its code 2."""
    for step in range(steps):
        if abort_requested():
            raise RuntimeError("llama_decode returned 2")
    return steps


def test_ctrl_c_during_an_evaluation_aborts_it_and_raises_keyboard_interrupt():
    aborted = []
    with pytest.raises(KeyboardInterrupt):
        with interruptible(lambda: aborted.append(True)):
            os.kill(os.getpid(), signal.SIGINT)  # Python runs the handler at its next bytecode: it only sets a flag
            fake_decode()
            pytest.fail("the abort callback never asked to stop")  # pragma: no cover
    assert aborted == [True]  # on_abort ran (the context forgets its tokens)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not abort_requested()  # the next evaluation runs


def test_an_evaluation_without_ctrl_c_runs_and_its_own_errors_go_through():
    with interruptible(lambda: pytest.fail("no abort")):
        assert fake_decode(5) == 5
    with pytest.raises(ValueError, match="too long"):
        with interruptible():
            raise ValueError("prompt too long")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_after_the_last_step_still_interrupts():
    with pytest.raises(KeyboardInterrupt):
        with interruptible():
            fake_decode(3)
            os.kill(os.getpid(), signal.SIGINT)
            sum(range(100))  # the handler runs here: a flag, raised as KeyboardInterrupt on the way out


def test_off_the_main_thread_or_under_another_handler_nothing_changes():
    seen = []

    def in_thread():
        with interruptible() as armed:
            seen.append(signal.getsignal(signal.SIGINT))
            seen.append(armed)

    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    assert seen == [signal.default_int_handler, False]
    mine = lambda *_: None  # noqa: E731
    old = signal.signal(signal.SIGINT, mine)
    try:
        with interruptible():
            assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, old)


def test_the_abort_callback_is_set_only_while_ctrl_c_is_handled_so_and_the_context_told_only_of_changes():
    import ctypes

    class LlamaCpp:  # the binding's two names used
        ggml_abort_callback = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)

        def __init__(self):
            self.set = []

        def llama_set_abort_callback(self, ctx, cb, data):
            self.set.append(bool(cb))  # a NULL function pointer is false

    class Llm:
        _ctx = type("Ctx", (), {"ctx": object()})()

    binding, llm = LlamaCpp(), Llm()
    set_abort_callback(binding, llm, False)  # a context starts without one: nothing to tell
    set_abort_callback(binding, llm, True)
    set_abort_callback(binding, llm, True)
    with interruptible() as armed:
        assert armed
    set_abort_callback(binding, llm, False)  # an evaluation off the main thread: no Python between the nodes
    assert binding.set == [True, False]
    assert llm._vericite_abort_cb(None) is False  # the callback answers abort_requested()
