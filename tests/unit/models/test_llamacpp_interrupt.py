"""Ctrl-C inside a llama.cpp evaluation (models/llamacpp_interrupt.py), with a stand-in for the decode: it asks the
abort callback between its steps, as llama.cpp does between a graph's nodes (tests/real/test_llamacpp_interrupt.py
runs the real one)."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from vericite.models.llamacpp_interrupt import abort_requested, interruptible


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
        with interruptible():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    assert seen == [signal.default_int_handler]
    mine = lambda *_: None  # noqa: E731
    old = signal.signal(signal.SIGINT, mine)
    try:
        with interruptible():
            assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, old)
