"""Where vericite keeps things: the cache (built wheels, assembled models, call cache) and the shared data."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import DataError


def cache_dir() -> Path:
    """``$VERICITE_CACHE``, else ``$XDG_CACHE_HOME/vericite``, else ``~/.cache/vericite``."""
    env = os.environ.get("VERICITE_CACHE")
    if env:
        p = Path(env)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        p = Path(base) / "vericite"
    p.mkdir(parents=True, exist_ok=True)
    return p


def _repo_root() -> Path:
    # src/vericite/paths.py -> repository root when running from a checkout
    return Path(__file__).resolve().parents[2]


def shared_data_dir(required: bool = True) -> Path | None:
    """The data folder beside the project: ``$VERICITE_DATA``, else ``../shared/data`` next to the checkout
    or next to the current directory."""
    env = os.environ.get("VERICITE_DATA")
    candidates = [Path(env)] if env else [_repo_root().parent / "shared" / "data", Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data"]
    for c in candidates:
        if c.is_dir():
            return c
    if required:
        where = env or str(candidates[0])
        raise DataError(
            f"shared data not found at {where}: set VERICITE_DATA to the folder holding biokalma/, alce/, conner/, vitaminc/"
        )
    return None


def package_data(name: str) -> Path:
    return Path(__file__).resolve().parent / "data" / name
