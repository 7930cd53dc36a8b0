"""Totals over per-sample records, computed in one place: token use (a run's summary, ``vericite evaluate``'s
results, the report) and citation statuses (a run's summary, ``vericite evaluate``'s counts)."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

from .types import Usage


def token_totals(usages: Iterable[Any]) -> dict[str, int]:
    """``{"prompt": n, "completion": m}`` summed over usage records: a sample's ``usage`` (``prompt_tokens``,
    ``completion_tokens``) or a total made before (``prompt``, ``completion``; e.g. one per experiment level).
    A record that is not a mapping and a count that is not a finite number add nothing. When some calls' tokens
    are unknown (a record's ``uncounted_calls``), ``uncounted_calls`` says how many: the counts are then a lower
    bound."""
    total = sum((_read_usage(u) for u in usages), Usage())
    out = {"prompt": total.prompt_tokens, "completion": total.completion_tokens}
    if total.uncounted_calls:
        out["uncounted_calls"] = total.uncounted_calls
    return out


def _read_usage(usage: Any) -> Usage:
    """A usage record from a file, read leniently (the report reads files written by anyone)."""
    if not isinstance(usage, Mapping):
        return Usage()

    def count(key: str) -> int:
        n = usage.get(f"{key}_tokens", usage.get(key))
        return int(n) if isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) else 0

    return Usage(count("prompt"), count("completion"), 0, count("uncounted_calls"))


def status_totals(counts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Citation-status counts (``AttributedAnswer.status_counts``, a record's ``citation_status``) summed over
    samples, in the order the statuses first appear."""
    out: dict[str, int] = {}
    for c in counts:
        for status, n in c.items():
            out[status] = out.get(status, 0) + n
    return out
