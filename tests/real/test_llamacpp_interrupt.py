"""Ctrl-C inside a real llama.cpp decode (SmolLM2-135M; slow, runs in CI): it stops the decode at once rather than
when the decode returns (which took over 10 s a window beside another CPU-bound job), and the scorer scores as
before afterwards."""

from __future__ import annotations

import os
import signal

import pytest

import vericite.models.llamacpp_interrupt as interrupt
from vericite.models import load_model

from tests.support.guards import require_smollm2

pytestmark = pytest.mark.slow

TEXT = " ".join(["The painter Vincent van Gogh was born in Zundert in 1853 and sold few paintings in his life."] * 20)


def test_ctrl_c_inside_a_decode_stops_it_there(monkeypatch):
    require_smollm2()
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal (a background job ignores it)
    b = load_model("smollm2-135m", threads=1, cache=False, scorer_n_ctx=512)
    try:
        expected = b.logprobs([TEXT])[0]
        b.scorer.reset()
        real, calls = interrupt.abort_requested, []

        def ctrl_c_on_the_tenth_node(data=None):  # llama.cpp asks between a graph's nodes: SIGINT mid-decode
            calls.append(1)
            if len(calls) == 10:
                os.kill(os.getpid(), signal.SIGINT)
            return real(data)

        monkeypatch.setattr(interrupt, "abort_requested", ctrl_c_on_the_tenth_node)
        b.scorer._vericite_abort_cb = b.scorer._vericite_abort_armed = None  # the callback is made again, with the stand-in
        with pytest.raises(KeyboardInterrupt) as raised:
            b.logprobs([TEXT])
        assert raised.traceback[-1].path.name == "llamacpp_interrupt.py"  # raised as the decode returned, aborted
        assert len(calls) <= 12  # the decode stopped at the next node or so, not at its end (hundreds of nodes)
        assert b.scorer.n_tokens == 0 and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        monkeypatch.undo()
        assert b.logprobs([TEXT])[0] == pytest.approx(expected, abs=1e-4)
    finally:
        b.close()
        signal.signal(signal.SIGINT, old)
