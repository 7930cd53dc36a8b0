"""Where vericite keeps things: the cache (built wheels, assembled models, call cache) and the shared data; and
a file's sha256 (``file_sha256``), how a file's identity is recorded everywhere."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .errors import DataError, VericiteError


class CacheError(VericiteError):
    """The cache folder, or a file in it, cannot be used (not writable, corrupt)."""


def cache_dir() -> Path:
    """``$VERICITE_CACHE``, else ``$XDG_CACHE_HOME/vericite``, else ``~/.cache/vericite``. Only named here, not
    created: whoever writes into it makes it (``make_folder``), so reading works in a read-only cache."""
    env = os.environ.get("VERICITE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vericite"


def os_reason(e: OSError) -> str:
    """``Permission denied``, ``Not a directory``, ...: the reason of an OSError without its path."""
    return e.strerror or type(e).__name__


def make_folder(folder: Path, what: str, advice: str = "set VERICITE_CACHE to a writable folder") -> Path:
    """``folder``, created if needed; a CacheError naming it, ``what`` it is for and ``advice`` if it cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CacheError(f"{what} {folder} cannot be created ({os_reason(e)}): {advice}") from None
    return folder


def repo_root() -> Path:
    # src/vericite/paths.py -> repository root when running from a checkout
    return Path(__file__).resolve().parents[2]


def shared_data_dir(required: bool = True) -> Path | None:
    """The data folder beside the project: ``$VERICITE_DATA``, else ``../shared/data`` next to the checkout
    or next to the current directory."""
    env = os.environ.get("VERICITE_DATA")
    candidates = [Path(env)] if env else [repo_root().parent / "shared" / "data", Path.cwd().parent / "shared" / "data", Path.cwd() / "shared" / "data"]
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


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes, read in 1 MiB blocks (``models.provision.file_sha256`` remembers it for
    large model files)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
