"""CONNER's released per-passage figures for the NQ reference passages (``conner/nq/random_testset/nq_ref_*``),
read the way their files are written, with nothing left to chance.

Two layouts are in the release:

- **a JSON list on the first line, then summary lines** (``nq_ref_avg_sent_ppl``, ``nq_ref_avg_coh_para``,
  ``nq_ref_avg_lm_entropy``): the list holds one value per passage of ``nq_ref``, in its line order (``NaN`` and
  ``null`` are passages CONNER could not score). Every later non-empty line is a *summary* their scripts printed
  after the list (``nq_ref_avg_sent_ppl``: one number, the mean of 1/PPL; ``nq_ref_avg_coh_para``: two
  tab-separated numbers; ``nq_ref_avg_lm_entropy``: ``NaN``). Summary lines are kept apart (``summary``) and are
  never values; a later line that is not numbers is an error naming the file and line.
- **one number a line** (``nq_ref_rel``): every non-empty line is one value; a line with several numbers is an
  error (this layout has no summary lines, so it cannot be told from one).

The values keep their positions, NaN included (pairing with ``nq_ref`` is by position). Comparisons take the
pairs where both sides are finite and say how many were left out (``finite_pairs``); a file whose values are
all NaN cannot be compared with anything, and ``require_finite`` says so in one line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import VericiteError
from ..jsonl import text_lines

#: the released files of per-passage figures, by what vericite calls them
REFERENCE_FILES = {
    "relevance": "nq_ref_rel",
    "sentence_perplexity": "nq_ref_avg_sent_ppl",
    "paragraph_coherence": "nq_ref_avg_coh_para",
    "lm_entropy": "nq_ref_avg_lm_entropy",
}


@dataclass
class ReferenceValues:
    """One file's values (positional, NaN kept in place) and its summary lines (numbers, never values)."""

    name: str
    values: list[float]
    summary: list[list[float]] = field(default_factory=list)

    @property
    def nan(self) -> int:
        """Values that are not finite numbers (NaN; an infinity would count too)."""
        return sum(1 for v in self.values if not math.isfinite(v))

    @property
    def finite(self) -> int:
        return len(self.values) - self.nan

    def require_finite(self) -> "ReferenceValues":
        """Itself; a VericiteError when it holds no finite value (nothing to compare with)."""
        if not self.values:
            raise VericiteError(f"{self.name}: no values")
        if self.finite == 0:
            raise VericiteError(f"{self.name}: all {len(self.values)} values are NaN, so nothing can be compared with it")
        return self

    def describe(self) -> dict[str, Any]:
        """What the file holds, for a report: counts, the summary lines, and a note when all values are NaN."""
        out: dict[str, Any] = {"values": len(self.values), "nan": self.nan, "summary_lines": self.summary}
        if self.values and self.finite == 0:
            out["note"] = f"all {len(self.values)} values are NaN: no comparison is possible"
        return out


def _number(token: str, where: str) -> float:
    try:
        return float(token)  # float() reads "NaN", "nan", "inf"
    except ValueError:
        raise VericiteError(f"{where}: {token[:40]!r} is not a number") from None


def parse_reference_values(text: str, name: str = "values") -> ReferenceValues:
    """The values and summary lines of one file's ``text`` (module docstring); ``name`` goes into errors."""
    lines = [(i, line.strip()) for i, line in enumerate(text_lines(text), 1) if line.strip()]
    if not lines:
        return ReferenceValues(name, [])
    first_no, first = lines[0]
    if first.startswith("["):
        try:
            raw = json.loads(first.replace("null", "NaN"))  # Python's json reads NaN
        except ValueError as e:
            raise VericiteError(f"{name}:{first_no}: the first line is not a JSON list ({e.msg})") from None
        if not isinstance(raw, list):
            raise VericiteError(f"{name}:{first_no}: the first line is not a JSON list")
        values = []
        for k, v in enumerate(raw):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise VericiteError(f"{name}:{first_no}: item {k} of the list is {v!r}, not a number")
            values.append(float(v))
        summary = [[_number(tok, f"{name}:{no}: summary line") for tok in line.split()] for no, line in lines[1:]]
        return ReferenceValues(name, values, summary)
    values = []
    for no, line in lines:
        tokens = line.split()
        if len(tokens) != 1:
            raise VericiteError(f"{name}:{no}: {len(tokens)} numbers on a line of a one-value-a-line file")
        values.append(_number(tokens[0], f"{name}:{no}"))
    return ReferenceValues(name, values)


def read_reference_values(path: str | Path) -> ReferenceValues:
    """``parse_reference_values`` of a file (errors name it by its file name)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise VericiteError(f"cannot read {p}: {e.strerror or e}") from None
    return parse_reference_values(text, p.name)


def finite_pairs(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float], int]:
    """(xs, ys) of the positions where both are finite, and how many positions were left out."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} values paired with {len(ys)}")
    keep = [i for i in range(len(xs)) if math.isfinite(xs[i]) and math.isfinite(ys[i])]
    return [float(xs[i]) for i in keep], [float(ys[i]) for i in keep], len(xs) - len(keep)
