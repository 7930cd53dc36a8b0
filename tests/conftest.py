"""Shared fixtures. Tests that need ../shared data or the embedded models run in CI and never skip there:
outside CI (no $CI) they may skip, saying why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

IN_CI = bool(os.environ.get("CI"))


def need(condition: bool, why: str) -> None:
    """Skip outside CI when ``condition`` is false; fail in CI."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "biokalma").is_dir(), "../shared/data is not beside this checkout (set VERICITE_DATA)")
    return d  # type: ignore[return-value]
