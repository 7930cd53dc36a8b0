"""What every dataset builder does before it writes: check ``--out`` (a file it can write; something to resume
when ``--resume``), and, holding the lock, refuse an existing file unless ``--resume``, read the build log it left,
refuse a configuration that differs from the one the file was started with, and cut a line torn by a crash from
the dataset file and its skip list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ...errors import DataError, VericiteError
from ...jsonl import cut_torn_line
from ...outputs import check_out_file


def check_out(paths: Mapping[str, Path], resume: bool) -> Path:
    """``paths["out"]``, checked before the build takes its lock: not a folder, writable, and, with ``resume``,
    a file (or its log) to continue; its folder is created."""
    out = paths["out"]
    if out.exists() and out.is_dir():
        raise DataError(f"--out {out} is a folder; give a .jsonl file")
    check_out_file(out)
    if resume and not (out.exists() or paths["log"].exists()):
        raise VericiteError(f"nothing to resume: {out} does not exist")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def open_for_resume(paths: Mapping[str, Path], fingerprint: Mapping[str, Any], resume: bool) -> dict[str, Any]:
    """The previous build log of ``paths["out"]`` ({} for a new file), after the checks above. ``paths`` holds
    ``out``, ``log`` and ``skipped``; ``fingerprint`` is the configuration's (what must not change on resume)."""
    out = paths["out"]
    if not (out.exists() or paths["log"].exists()):
        return {}
    if not resume:
        raise VericiteError(f"{out} already exists: pass --resume to continue it, or choose another --out")
    try:
        previous = json.loads(paths["log"].read_text(encoding="utf-8")) if paths["log"].exists() else {}
    except (OSError, json.JSONDecodeError):
        raise DataError(f"cannot resume: {paths['log']} is unreadable") from None
    old = previous.get("fingerprint")
    if old is not None and old != fingerprint:
        diff = sorted(k for k in set(old) | set(fingerprint) if old.get(k) != fingerprint.get(k))
        raise VericiteError(f"cannot resume {out}: the configuration differs ({', '.join(diff[:5])}); use another --out")
    cut_torn_line(out)
    cut_torn_line(paths["skipped"])
    return previous
