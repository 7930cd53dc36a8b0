"""``vericite cache stats`` and ``vericite cache clear [--model NAME]``: what the call cache (``cache.py``) holds, read
without changing or creating it (:func:`cache_stats`), and its entries deleted, all or one model's
(:func:`clear_cache`); a file that is not an intact SQLite database is one ``CacheError`` line, and ``clear``
deletes it whole. Split from ``models/cache.py``; moved verbatim."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from ..paths import CacheError
from .cache import CallCache, cache_error, default_cache_path


def _files(path: Path) -> list[Path]:
    """The database and its WAL side files that exist."""
    return [p for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")) if p.exists()]


def cache_stats(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What the call cache holds, read without changing (or creating) it: ``path``, ``exists``, ``bytes`` (with
    the WAL files), ``entries`` and ``models``: one ``{"model", "entries", "kinds"}`` per model name, most
    entries first (``model`` None for entries written before the model was recorded)."""
    p = Path(path) if path is not None else default_cache_path()
    out: dict[str, Any] = {"path": str(p), "exists": p.is_file(), "bytes": sum(f.stat().st_size for f in _files(p)), "entries": 0, "models": []}
    if not out["exists"]:
        return out
    try:
        con = sqlite3.connect(f"{p.resolve().as_uri()}?mode=ro", uri=True)
        try:
            cols = {row[1] for row in con.execute("PRAGMA table_info(calls)")}
            if not cols:
                return out  # an empty database: nothing cached yet
            model = "model" if "model" in cols else "NULL"
            rows = con.execute(f"SELECT {model}, kind, COUNT(*) FROM calls GROUP BY 1, 2").fetchall()
        finally:
            con.close()
    except sqlite3.Error as e:
        raise cache_error(p, e) from None
    models: dict[str | None, dict[str, Any]] = {}
    for name, kind, n in rows:
        m = models.setdefault(name, {"model": name, "entries": 0, "kinds": {}})
        m["entries"] += n
        m["kinds"][kind] = n
    out["models"] = sorted(models.values(), key=lambda m: (-m["entries"], str(m["model"])))
    out["entries"] = sum(m["entries"] for m in out["models"])
    return out


def clear_cache(path: str | os.PathLike[str] | None = None, model: str | None = None) -> dict[str, Any]:
    """Delete every entry of the call cache, or only ``model``'s. Returns ``path``, ``deleted`` (None when a
    corrupt file was deleted whole) and ``left``. A model with no entries is an error listing the models
    there, as a VericiteError (a typo should not pass for a clean cache)."""
    from ..errors import VericiteError

    p = Path(path) if path is not None else default_cache_path()
    if not p.is_file():
        if model is not None:
            raise VericiteError(f"no call cache at {p}: nothing of model {model!r} to delete")
        return {"path": str(p), "deleted": 0, "left": 0}
    try:
        before = cache_stats(p)
    except CacheError:
        if model is not None:
            raise
        for f in _files(p):  # corrupt: the file goes, whole
            f.unlink()
        return {"path": str(p), "deleted": None, "left": 0}
    if model is not None and not any(m["model"] == model for m in before["models"]):
        there = ", ".join(f"{m['model'] or '(not recorded)'} ({m['entries']})" for m in before["models"]) or "none"
        raise VericiteError(f"no entries of model {model!r} in the call cache {p}; models there: {there}")
    cache = CallCache(p)
    try:
        deleted = cache.clear(model)
        left = len(cache)
        cache.vacuum()  # give the space back; skipped when another process holds the file
    finally:
        cache.close()
    return {"path": str(p), "deleted": deleted, "left": left}
