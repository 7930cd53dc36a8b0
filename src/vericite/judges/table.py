"""The ``table:<file.jsonl>`` judge: verdicts looked up in a table rather than computed — human labels, verdicts a
judge computed elsewhere (ALCE's TRUE T5-11B on a GPU server), or an exact reproduction.

Each line of the file is ``{"premise": str, "hypothesis": str, "entailed": true|false}``. A pair is matched on its
premise and hypothesis after whitespace is collapsed to single spaces, whitespace before ``. , ; : ! ?`` removed, and
both ends stripped (:func:`table_key`), so the same texts written with other spacing still match. A pair the table
does not hold is a *failed* judgement (status ``failed``, never a default verdict): metrics count it and
``vericite evaluate`` exits non-zero. A file that cannot be read, a line that is not such an object, or one pair
given two different verdicts, or bytes that are not UTF-8, is one error line naming the file and line; a table
with no verdict at all (empty, or only blank lines) is refused when the judge is built, naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Sequence

from ..errors import VericiteError
from ..types import NOT_SUPPORTED, SUPPORTED, JudgePair, Judgement

VERSION = "1"
_SPACES = re.compile(r"\s+")
_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")


def table_key(text: str) -> str:
    """How a premise or hypothesis is matched: whitespace collapsed, none before ``. , ; : ! ?``, stripped."""
    return _BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", text)).strip()


class TableJudge:
    """Verdicts from a JSONL table (see the module docstring)."""

    labels = (SUPPORTED, NOT_SUPPORTED)

    def __init__(self, path: str | Path) -> None:
        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise VericiteError(f"judge table {p}: cannot be read ({e.strerror or e})") from None
        self.path = p
        self.sha256 = hashlib.sha256(data).hexdigest()
        self.table: dict[tuple[str, str], bool] = {}
        for n, raw in enumerate(data.splitlines(), 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:  # read as U+FFFD it would match nothing: every pair of it a failed judgement
                raise VericiteError(f"judge table {p}, line {n}: not UTF-8 (byte {e.start + 1} of the line); write the table as UTF-8") from None
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as e:
                raise VericiteError(f"judge table {p}, line {n}: not JSON ({e.msg})") from None
            if not (isinstance(d, dict) and isinstance(d.get("premise"), str) and isinstance(d.get("hypothesis"), str) and isinstance(d.get("entailed"), bool)):
                raise VericiteError(f'judge table {p}, line {n}: want {{"premise": str, "hypothesis": str, "entailed": true|false}}')
            key = (table_key(d["premise"]), table_key(d["hypothesis"]))
            if self.table.get(key, d["entailed"]) != d["entailed"]:
                raise VericiteError(f"judge table {p}, line {n}: this pair was given the other verdict on an earlier line")
            self.table[key] = d["entailed"]
        if not self.table:  # every pair would fail at scoring time: refused now, before anything is judged
            raise VericiteError(f'judge table {p}: holds no verdict (no line, or only blank ones); want lines {{"premise": str, "hypothesis": str, "entailed": true|false}}')
        self.id = f"table:{self.sha256[:12]}@{VERSION}"
        self.missing = 0

    def options(self) -> dict[str, Any]:
        return {"file": str(self.path), "sha256": self.sha256, "pairs": len(self.table)}

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for pair in pairs:
            v = self.table.get((table_key(pair.evidence), table_key(pair.claim)))
            if v is None:
                self.missing += 1
                out.append(Judgement(self.id, pair.claim, pair.evidence, None, None, "pair not in the table", "failed"))
            else:
                out.append(Judgement(self.id, pair.claim, pair.evidence, 1.0 if v else 0.0, SUPPORTED if v else NOT_SUPPORTED, "entailed" if v else "not entailed"))
        return out


def from_spec(arg: str, *, ctx: Any, **options: Any) -> TableJudge:
    """Registry factory (``registry.judges``): ``table:<file.jsonl>``."""
    if not arg:
        raise VericiteError("the table judge needs its file: table:<file.jsonl> (lines {premise, hypothesis, entailed})")
    if options:
        raise VericiteError(f"the table judge takes no options (got {', '.join(options)})")
    return TableJudge(arg)
