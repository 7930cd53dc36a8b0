"""Shared fixtures. Tests that need ../shared data, an optional extra or the embedded models run in CI and never
skip there: outside CI (no $CI) they may skip, saying why (``tests.support.guards``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pytest

from tests.support.guards import IN_CI, need, require_smollm2, requires  # noqa: F401  (imported from here before)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "biokalma").is_dir(), "../shared/data is not beside this checkout (set VERICITE_DATA)")
    return d  # type: ignore[return-value]


#: the files of the cache folder the session does not share with the user's: the call cache
CALL_CACHE_FILES = ("calls.sqlite", "calls.sqlite-wal", "calls.sqlite-shm", "calls.sqlite-journal")


@pytest.fixture(scope="session", autouse=True)
def own_call_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test session's own cache folder (``VERICITE_CACHE``, inherited by the commands the tests start): what
    the user's holds (the assembled models, built wheels, verified hashes) linked in, the call cache not. So the
    fakes' calls never land in the user's call cache, and a test of a real model runs the model, never an answer a
    run outside the tests left in the cache. A test that sets ``VERICITE_CACHE`` itself still gets its own."""
    from vericite.paths import cache_dir

    real = cache_dir()
    own = tmp_path_factory.mktemp("vericite-cache")
    if real.is_dir():
        for entry in real.iterdir():
            if entry.name not in CALL_CACHE_FILES:
                (own / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    before = os.environ.get("VERICITE_CACHE")
    os.environ["VERICITE_CACHE"] = str(own)
    try:
        yield own
    finally:
        if before is None:
            os.environ.pop("VERICITE_CACHE", None)
        else:
            os.environ["VERICITE_CACHE"] = before
