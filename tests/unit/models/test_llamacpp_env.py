"""The llama.cpp backend's environment settings: $VERICITE_THREADS and $VERICITE_STATE_CACHE_MB are read as whole
numbers with their floor, and a bad value is one clear line (no llama_cpp import needed)."""

from __future__ import annotations

import pytest

from vericite.errors import BackendError
from vericite.models.llamacpp import default_state_cache_mb, default_threads


def test_defaults_when_unset_or_blank(monkeypatch):
    monkeypatch.delenv("VERICITE_THREADS", raising=False)
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "  ")
    assert default_threads() == 2 and default_state_cache_mb() == 0


def test_values_and_floors(monkeypatch):
    monkeypatch.setenv("VERICITE_THREADS", "3")
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "0")
    assert default_threads() == 3 and default_state_cache_mb() == 0
    monkeypatch.setenv("VERICITE_THREADS", "0")
    with pytest.raises(BackendError, match=r"^VERICITE_THREADS must be at least 1, not 0$"):
        default_threads()
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "-1")
    with pytest.raises(BackendError, match=r"^VERICITE_STATE_CACHE_MB must be 0 \(off\) or more, not -1$"):
        default_state_cache_mb()
    monkeypatch.setenv("VERICITE_STATE_CACHE_MB", "lots")
    with pytest.raises(BackendError, match=r"^VERICITE_STATE_CACHE_MB must be a whole number of MiB, not 'lots'$"):
        default_state_cache_mb()
