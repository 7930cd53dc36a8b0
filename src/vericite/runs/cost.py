"""What a generation run cost per question, read from its run folder (``samples.jsonl``; no model loaded): tokens
(prompt + completion of every model call, the judges' included, as the run loop metered them), calls and seconds,
and whether the counts are a lower bound. Used by ``vericite report``'s token figure (VTG's Figure 4) and by
``benchmarks/bench_vtg.py``.

A count is a lower bound when some calls' tokens are unknown (a record's ``usage.uncounted_calls``: judgements read
from a cache entry written before usage was stored), or when the judge's tokens were not recorded at all: runs
written before next-token judge calls reported their tokens (VTG's ``verify`` component has calls but no tokens;
RERANK's records have no ``rerank.judge_usage``)."""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import DataError
from ..jsonl import text_lines


@dataclass(frozen=True)
class SamplesFile:
    """A run folder's ``samples.jsonl`` read once (:func:`read_samples`): its bytes, or None when the folder or the
    file is missing or the read failed (``error``). What reads the answers of one folder two ways (the report's
    token figure, strictly, by :func:`records_of`; its VTG trace, skipping bad lines) reads them from here, so the
    file is read once."""

    folder: Path
    data: bytes | None
    error: OSError | None = None

    @property
    def path(self) -> Path:
        return self.folder / "samples.jsonl"


def read_samples(folder: str | Path) -> SamplesFile:
    """The bytes of ``folder``'s ``samples.jsonl``, read once; a missing file or a failed read is kept, not raised."""
    folder = Path(folder)
    path = folder / "samples.jsonl"
    if not path.is_file():
        return SamplesFile(folder, None)
    try:
        return SamplesFile(folder, path.read_bytes())
    except OSError as e:
        return SamplesFile(folder, None, e)


def records(folder: str | Path) -> dict[str, dict[str, Any]]:
    """The answers of a run folder's ``samples.jsonl`` by id; one clear line (:class:`DataError`) when the folder
    or file is missing or a line is not a JSON object with an ``id``."""
    return records_of(read_samples(folder))


def records_of(samples: SamplesFile) -> dict[str, dict[str, Any]]:
    """:func:`records` of a file already read."""
    folder, path = samples.folder, samples.path
    if not folder.is_dir():
        raise DataError(f"{folder}: no such run folder")
    if samples.data is None and samples.error is None:
        raise DataError(f"{folder}: no samples.jsonl (not a generation run folder)")
    out: dict[str, dict[str, Any]] = {}
    try:
        if samples.error is not None:
            raise samples.error
        lines = text_lines((samples.data or b"").decode("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read it ({e})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            raise DataError(f"{path}, line {n}: not JSON") from None
        if not isinstance(r, dict) or not isinstance(r.get("id"), (str, int)):
            raise DataError(f"{path}, line {n}: not an answer record with an id")
        out[str(r["id"])] = r
    if not out:
        raise DataError(f"{path}: no answers")
    return out


def _int(x: Any) -> int:
    return int(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else 0


def _num(x: Any) -> float:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else 0.0


def tokens(r: Mapping[str, Any]) -> int:
    """One answer's tokens: prompt + completion of its ``usage``."""
    u = r.get("usage") or {}
    return _int(u.get("prompt_tokens")) + _int(u.get("completion_tokens"))


def judge_usage(r: Mapping[str, Any]) -> dict[str, Any] | None:
    """The judge's model calls of one answer: VTG's ``verify`` component, RERANK's ``judge_usage``; None when the
    record has none (another method, or a run written before judge tokens were reported)."""
    if isinstance(r.get("vtg"), dict):
        return ((r["vtg"].get("components") or {}).get("verify")) or None
    if isinstance(r.get("rerank"), dict):
        return r["rerank"].get("judge_usage")
    return None


def _judge_totals(recs: Sequence[Mapping[str, Any]]) -> tuple[int, int, int]:
    """The judge's calls, tokens (prompt + completion) and calls of unknown tokens over these answers."""
    used = [judge_usage(r) or {} for r in recs]
    calls = sum(_int(u.get("calls")) for u in used)
    t = sum(_int(u.get("prompt_tokens")) + _int(u.get("completion_tokens")) for u in used)
    return calls, t, sum(_int(u.get("uncounted_calls")) for u in used)


def judge_unrecorded(recs: Sequence[Mapping[str, Any]]) -> str:
    """Why these answers' totals leave the judge's tokens out ("" when they do not): RERANK's records without
    ``judge_usage`` (written before it; ``null`` is a judge that calls no model: nothing left out), or judge calls
    with no tokens."""
    if any(isinstance(r.get("rerank"), dict) and "judge_usage" not in r["rerank"] for r in recs):  # null: a judge of no model
        return "the judge's tokens are not recorded (a run written before judges reported tokens): its totals leave them out"
    calls, t, _ = _judge_totals(recs)
    if calls and not t:
        return f"{calls} judge calls with no tokens recorded (a run written before judges reported tokens): its totals leave them out"
    return ""


def judge_note(name: str, recs: Sequence[Mapping[str, Any]]) -> str:
    """What the judge cost in these answers, or why it is not known ("" for a method without a judge)."""
    why = judge_unrecorded(recs)
    if why:
        return f"{name}: {why}"
    if all(judge_usage(r) is None for r in recs):
        return ""
    calls, t, unknown = _judge_totals(recs)
    whole = sum(tokens(r) for r in recs) or 1
    return f"{name}: judge {t:,} tokens in {calls} calls ({t / len(recs):,.0f} per question, {t / whole:.0%} of its tokens)" + (
        f"; {unknown} judge calls of unknown tokens (a lower bound)" if unknown else "")


@dataclass(frozen=True)
class Cost:
    """One method's cost per question over the questions compared."""

    name: str
    n: int
    tokens: tuple[int, ...]
    calls_mean: float
    seconds_median: float
    uncounted_calls: int  # calls of unknown tokens: the totals are a lower bound
    judge_missing: str  # why the judge's tokens are left out ("" when they are not)
    no_usage: int = 0  # answers without a usage (counted as 0 tokens): a lower bound too

    @property
    def median(self) -> float:
        return float(statistics.median(self.tokens))

    @property
    def mean(self) -> float:
        return float(statistics.mean(self.tokens))

    @property
    def quartiles(self) -> tuple[float, float]:
        """The 25th and 75th percentiles (inclusive; a single answer: its count twice)."""
        if len(self.tokens) < 2:
            return (float(self.tokens[0]), float(self.tokens[0]))
        q = statistics.quantiles(self.tokens, n=4, method="inclusive")
        return (float(q[0]), float(q[2]))

    @property
    def lower_bound(self) -> str:
        """Why the counts are a lower bound, "" when they are not."""
        why = []
        if self.judge_missing:
            why.append("judge tokens not recorded")
        if self.uncounted_calls:
            why.append(f"{self.uncounted_calls} calls of unknown tokens")
        if self.no_usage:
            why.append(f"{self.no_usage} answers without usage")
        return "; ".join(why)


def common_ids(runs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The questions every run answered, sorted; one clear line when there is none."""
    common = sorted(set.intersection(*(set(r) for r in runs.values()))) if runs else []
    if not common:
        raise DataError("the run folders answered no question in common")
    return common


def cost(name: str, recs: Mapping[str, Mapping[str, Any]], ids: Sequence[str], folder: Any = None) -> Cost:
    """``name``'s cost over the answers ``ids`` of ``recs``; one clear line when none of them has a ``usage``
    (a run whose tokens were not metered)."""
    chosen = [recs[i] for i in ids]
    if not any(isinstance(r.get("usage"), Mapping) for r in chosen):
        raise DataError(f"{folder or name}: its answers have no usage (tokens not recorded): no token count")
    return Cost(
        name=name,
        n=len(chosen),
        tokens=tuple(tokens(r) for r in chosen),
        calls_mean=statistics.mean(_int((r.get("usage") or {}).get("calls")) for r in chosen),
        seconds_median=float(statistics.median(_num(r.get("seconds")) for r in chosen)),
        uncounted_calls=sum(_int((r.get("usage") or {}).get("uncounted_calls")) for r in chosen),
        judge_missing=judge_unrecorded(chosen),
        no_usage=sum(1 for r in chosen if not isinstance(r.get("usage"), Mapping)),
    )
