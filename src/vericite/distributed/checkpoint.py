"""The per-batch checkpoint of a pool's run (``OUT/.ray-calls.jsonl``; split from ``distributed/pool.py``), and what
a driver interrupted by Ctrl-C keeps of its pool's work (:func:`keep_finished`: generate's, evaluate's and
judge-eval's, whatever checkpoint each writes)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from .. import jsonl


class Checkpoint:
    """``OUT/.ray-calls.jsonl``: one fsynced line ``{"key", "result"}`` per finished batch. Opened with
    ``resume``, the batches already there are read back (a torn last line, from a killed driver, is cut first);
    without it the file starts empty."""

    NAME = ".ray-calls.jsonl"

    def __init__(self, folder: str | os.PathLike[str], resume: bool = False) -> None:
        self.path = Path(folder) / self.NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._done: dict[str, Any] = {}
        if resume and self.path.exists():
            jsonl.cut_torn_line(self.path)
            for line in jsonl.read_appended(self.path):
                if isinstance(line, dict) and "key" in line:
                    self._done[str(line["key"])] = line.get("result")
        else:
            self.path.write_text("", encoding="utf-8")

    def __contains__(self, key: str) -> bool:
        return key in self._done

    def __len__(self) -> int:
        return len(self._done)

    def get(self, key: str) -> Any:
        return self._done.get(key)

    def keys(self) -> list[str]:
        """The keys of the batches checkpointed, in the order written."""
        return list(self._done)

    def put(self, key: str, result: Any) -> None:
        jsonl.append(self.path, {"key": key, "result": result})
        self._done[key] = result


def keep_finished(pool: Any, write: Callable[[str, Any], None], written: Callable[[str], bool] | None = None) -> None:
    """After Ctrl-C: each batch the workers finished that the driver may not have written yet (the one it was
    writing, others done meanwhile) is given to ``write(key, result)`` (a :class:`Checkpoint`'s ``put``, or an
    evaluation's writer of its answer lines), unless ``written(key)`` says it is there already, so ``--resume``
    does not ask for it again; nothing in flight is waited for (``pool.finished()``: the thread pool's and Ray's; a
    pool without one gives none)."""
    finished = getattr(pool, "finished", None)
    for key, result in finished() if callable(finished) else []:
        if written is None or not written(key):
            write(key, result)
