"""The per-batch checkpoint of a pool's run (``OUT/.ray-calls.jsonl``); split from ``distributed/pool.py``, moved
verbatim."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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
