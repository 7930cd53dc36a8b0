"""The test session keeps its own call cache (tests/conftest.py ``own_call_cache``): a fake's call never lands in
the user's cache folder, and the user's models stay reachable."""

from __future__ import annotations

import os
from pathlib import Path

from vericite.models.cache import CachedBackend, CallCache, default_cache_path
from vericite.models.fake import FakeBackend
from vericite.types import GenParams


def test_the_call_cache_is_the_sessions_and_the_models_are_the_users(own_call_cache):
    assert Path(os.environ["VERICITE_CACHE"]) == own_call_cache
    assert default_cache_path() == own_call_cache / "calls.sqlite"
    assert not (own_call_cache / "calls.sqlite").is_symlink()
    for name in ("models", "wheels"):  # what the user's folder holds, linked (a file the session writes again, as
        entry = own_call_cache / name  # verified-hashes.json, becomes the session's own)
        assert not entry.exists() or entry.is_symlink()


def test_a_fakes_call_goes_to_the_sessions_cache(own_call_cache):
    cache = CallCache()
    try:
        CachedBackend(FakeBackend(), cache).generate([[{"role": "user", "content": "Who cached this?"}]], GenParams())
        assert len(cache) >= 1 and (own_call_cache / "calls.sqlite").exists()
    finally:
        cache.close()
