"""The one JSONL module: read a file line by line under a stated error policy, append a line durably, write a
JSON or JSONL file atomically, and cut a torn last line.

Reading. Every call states two things:

* ``policy``, what a bad line does (a line that is not UTF-8, not JSON, or not a JSON object):
  ``"raise"`` stops with a :class:`~vericite.errors.DataError` naming ``file:line`` and the reason;
  ``"collect"`` skips it and records a :class:`BadLine` (number and reason) in ``stats.bad``;
  ``"skip"`` skips it and only counts it (``stats.unreadable``).
* ``torn``, what a last line without a newline is. ``"ignore"``: a torn line, what a writer that is still
  writing or was killed mid-line leaves (run folders, build outputs); it is not read, and ``stats.torn_last``
  says it was there. ``"read"``: an ordinary line whose newline an editor left out (files a user gives).

Blank lines are skipped and not counted. Lines are numbered from 1 over the whole file, blank ones included,
so a number points at the line an editor shows. A byte order mark before the first line is dropped. Bytes that
are not UTF-8 make the line bad, or with ``errors="replace"`` become U+FFFD (one per undecodable sequence),
counted per line in ``stats.replaced``.

Writing. :func:`append` adds one line and fsyncs it, so a finished record survives a crash.
:func:`write_json_atomic`, :func:`write_jsonl_atomic` and :func:`write_text_atomic` write ``NAME.tmp`` beside
the target, fsync it and rename it over the target: a reader sees the old file or the new one, never half of
one. :func:`cut_torn_line` truncates a file after its last newline before appending to it again.

A whole JSON file that must hold one object (results.json, manifest.json) is read with :func:`read_json_object`:
any problem is one line naming the file.
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

from .errors import DataError

Policy = Literal["raise", "collect", "skip"]
Torn = Literal["ignore", "read"]

#: how a bad line is described; a reader may pass its own wording (fields: ``msg``, ``column``; ``found``)
JSON_REASON = "not valid JSON ({msg})"
OBJECT_REASON = "expected a JSON object"


@dataclass
class BadLine:
    line: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason}


@dataclass
class ReadStats:
    """What a read saw: ``lines`` complete non-blank lines (bad ones included), ``unreadable`` bad lines,
    ``bad`` their numbers and reasons (policy ``"collect"``), ``torn_last`` a torn last line ignored,
    ``replaced`` line number -> bytes that were not UTF-8 (``errors="replace"``)."""

    lines: int = 0
    unreadable: int = 0
    bad: list[BadLine] = field(default_factory=list)
    torn_last: bool = False
    replaced: dict[int, int] = field(default_factory=dict)


def decode_line(data: bytes) -> tuple[str, int]:
    """A line as text, and how many of its bytes were not UTF-8 (each undecodable sequence: one U+FFFD)."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        pass
    parts: list[str] = []
    bad = pos = 0
    while True:
        try:
            parts.append(data[pos:].decode("utf-8"))
            return "".join(parts), bad
        except UnicodeDecodeError as e:
            parts.append(data[pos : pos + e.start].decode("utf-8"))
            parts.append("\ufffd")
            bad += e.end - e.start
            pos += e.end


def text_lines(text: str) -> list[str]:
    """``text`` split at line feeds only (a trailing carriage return dropped), as a file is read line by line.
    ``str.splitlines`` also splits at U+2028/U+2029, U+0085 and form feeds, which JSON written with
    ``ensure_ascii=False`` (and Wikipedia text) can hold inside a string: one record would read as two bad lines."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def preview(value: Any, width: int = 60) -> str:
    """A JSON value shortened to one line, for an error message."""
    s = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 3] + "..."


def read_numbered(
    path: str | os.PathLike[str],
    *,
    policy: Policy,
    torn: Torn,
    stats: ReadStats | None = None,
    missing_ok: bool = False,
    errors: Literal["strict", "replace"] = "strict",
    require_object: bool = True,
    json_reason: str = JSON_REASON,
    object_reason: str = OBJECT_REASON,
    data: bytes | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(line number, JSON object)`` for each good line of ``path``, streamed (see the module docstring).

    ``missing_ok``: a missing file (or a folder) reads as empty; else it is a ``DataError``.
    ``errors="replace"`` reads bytes that are not UTF-8 as U+FFFD instead of treating the line as bad.
    ``require_object=False`` yields any JSON value. ``json_reason`` and ``object_reason`` word the reasons
    (``str.format`` fields: ``msg`` and ``column`` of the JSON error; ``found``, a preview of the value that is
    not an object). ``data``: the file's bytes, already read by the caller (``path`` is then not opened, only
    named in the reasons), read line by line as the file would be."""
    p = Path(path)
    st = stats if stats is not None else ReadStats()
    if data is not None:
        f: Any = io.BytesIO(data)
    elif missing_ok and not p.is_file():
        return
    else:
        try:
            f = open(p, "rb")
        except OSError as e:
            raise DataError(f"{p}: cannot read: {e.strerror or e}") from None

    def bad(n: int, reason: str) -> None:
        if policy == "raise":
            raise DataError(f"{p}:{n}: {reason}")
        st.unreadable += 1
        if policy == "collect":
            st.bad.append(BadLine(n, reason))

    with f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n") and torn == "ignore":
                if raw.strip():
                    st.torn_last = True
                return
            if n == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte order mark
            n_replaced = 0
            if errors == "replace":
                line, n_replaced = decode_line(raw)
            else:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    if raw.strip():
                        st.lines += 1
                        bad(n, f"not UTF-8 text ({e.reason} at byte {e.start})")
                    continue
            if not line.strip():
                continue
            st.lines += 1
            if n_replaced:
                st.replaced[n] = n_replaced
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                bad(n, json_reason.format(msg=e.msg, column=e.colno))
                continue
            if require_object and not isinstance(value, dict):
                bad(n, object_reason.format(found=preview(value)))
                continue
            yield n, value


def read(path: str | os.PathLike[str], *, policy: Policy, torn: Torn, **options: Any) -> Iterator[Any]:
    """The JSON objects of ``path``, streamed: :func:`read_numbered` without the numbers."""
    for _n, value in read_numbered(path, policy=policy, torn=torn, **options):
        yield value


def read_appended(
    path: str | os.PathLike[str],
    stats: ReadStats | None = None,
    *,
    errors: Literal["strict", "replace"] = "strict",
    data: bytes | None = None,
) -> Iterator[Any]:
    """The records of a file that :func:`append` writes (a run's samples, a build's entries): a missing file is
    empty; a torn last line (its writer still writing, or killed) and a bad line are skipped and counted. ``data``:
    the file's bytes, already read (:func:`read_numbered`)."""
    return read(path, policy="skip", torn="ignore", stats=stats, missing_ok=True, errors=errors, data=data)


def folder_samples(folder: str | os.PathLike[str], what: str) -> Iterator[Any]:
    """The records of an evaluation folder's ``samples.jsonl`` (:func:`read_appended`, bytes not UTF-8 replaced);
    a folder without one is a :class:`~vericite.errors.DataError` saying to give ``what``."""
    path = Path(folder) / "samples.jsonl"
    if not path.is_file():
        raise DataError(f"{folder}: no samples.jsonl (give {what})")
    return read_appended(path, ReadStats(), errors="replace")


def family_scores(record: Any, family: str) -> dict[str, Any] | None:
    """A samples.jsonl record's scores of one metric family (``scores[family]``), None when it has none."""
    scores = record.get("scores") if isinstance(record, dict) else None
    found = scores.get(family) if isinstance(scores, dict) else None
    return found if isinstance(found, dict) else None


# --------------------------------------------------------------------------- writing


def dumps_line(record: Any) -> str:
    """One JSONL line: UTF-8 text as is, anything JSON cannot hold written as ``str()``."""
    return json.dumps(record, ensure_ascii=False, default=str) + "\n"


def append(path: str | os.PathLike[str], record: Any) -> None:
    """Append ``record`` as one line and fsync it: once this returns, the line survives a crash."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(dumps_line(record))
        f.flush()
        os.fsync(f.fileno())


def _write_atomic(path: str | os.PathLike[str], chunks: Iterable[str]) -> None:
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where folders cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    _write_atomic(path, [text])


def write_json_atomic(path: str | os.PathLike[str], data: Any) -> None:
    """``data`` as indented JSON (UTF-8 as is, a final newline), replacing ``path`` atomically."""
    _write_atomic(path, [json.dumps(data, indent=2, ensure_ascii=False, default=str), "\n"])


def write_jsonl_atomic(path: str | os.PathLike[str], records: Iterable[Any]) -> None:
    """One line per record, replacing ``path`` atomically (records are streamed, not held)."""
    _write_atomic(path, (dumps_line(r) for r in records))


def cut_torn_line(path: str | os.PathLike[str]) -> int:
    """Truncate ``path`` after its last newline (a missing file is left alone); returns the bytes removed.
    Call it before appending to a file a killed writer may have left with half a line."""
    p = Path(path)
    if not p.exists():
        return 0
    size = p.stat().st_size
    if size == 0:
        return 0
    with open(p, "rb+") as f:
        block = 1 << 16  # read backwards, a block at a time, until the last newline
        pos = size
        while pos > 0:
            start = max(0, pos - block)
            f.seek(start)
            chunk = f.read(pos - start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                keep = start + i + 1
                if keep != size:
                    f.truncate(keep)
                return size - keep
            pos = start
        f.truncate(0)
        return size


def read_json_object(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (``what`` it holds, for the message); a file that cannot be read, is not UTF-8,
    is not JSON or holds no object is a :class:`~vericite.errors.DataError` in one line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{path} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    if not isinstance(data, dict):
        raise DataError(f"{path} must hold a JSON object ({what}), not {type(data).__name__}")
    return data


__all__ = [
    "BadLine",
    "Policy",
    "ReadStats",
    "Torn",
    "append",
    "cut_torn_line",
    "decode_line",
    "dumps_line",
    "family_scores",
    "folder_samples",
    "preview",
    "read",
    "read_appended",
    "read_json_object",
    "read_numbered",
    "write_json_atomic",
    "write_jsonl_atomic",
    "write_text_atomic",
]
