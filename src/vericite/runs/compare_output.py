"""What ``vericite compare`` writes and how its outputs show a comparison: ``compare.json`` and
``compare_samples.jsonl`` in ``--out`` (:func:`write_comparison`; the folder checked before any work,
:func:`check_out`), the metrics neither run computed folded into one line per reason
(:func:`folded_not_computed`, :func:`folded_lines`) and a metric's n (:func:`n_text`), read by the command's table
and the comparison's HTML page (``report/compare.py``). The comparison itself is ``compare.py``'s."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import jsonl
from ..errors import DataError

COMPARE_JSON = "compare.json"
COMPARE_SAMPLES = "compare_samples.jsonl"


def check_out(out: str | Path) -> Path:
    """The --out folder, refused before any work when it is a file or holds a run."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"--out {folder} is a file; give a folder")
    for name in ("results.json", "samples.jsonl", "manifest.json"):
        if (folder / name).exists():
            raise DataError(f"--out {folder} holds a run ({name}); choose another folder for the comparison")
    return folder


def write_comparison(out: str | Path, cmp: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> Path:
    """compare.json and compare_samples.jsonl in ``out`` (``vericite report OUT`` renders them); returns the
    path of compare.json."""
    folder = check_out(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        jsonl.write_jsonl_atomic(folder / COMPARE_SAMPLES, rows)
        jsonl.write_json_atomic(folder / COMPARE_JSON, cmp)
    except OSError as e:
        raise DataError(f"cannot write the comparison to {folder}: {e.strerror or e}") from None
    return folder / COMPARE_JSON


#: the reason of a metric neither run computed, for the same reason in both, starts so
BOTH_NOT_COMPUTED = "not computed in A and B: "


def folded_not_computed(metrics: Mapping[str, Any]) -> dict[str, list[str]]:
    """The metrics of a comparison (``compare.json``'s ``metrics``) not computed in A and B, by their reason, in
    the order of ``metrics``; a reason that names its metric ("no qa_em score in samples.jsonl") is grouped with
    the others' as "no <metric> score ...". The outputs show them as one line per reason, not one row each (five
    attribution_* rows on every comparison of runs without a four-class judge said nothing each)."""
    import re

    out: dict[str, list[str]] = {}
    for name, m in metrics.items():
        reason = (m.get("reason") or "") if isinstance(m, Mapping) else ""
        if isinstance(m, Mapping) and m.get("diff") is None and reason.startswith(BOTH_NOT_COMPUTED):
            why = re.sub(rf"\b{re.escape(name)}\b", "<metric>", reason[len(BOTH_NOT_COMPUTED):], count=1)
            out.setdefault(why, []).append(name)
    return out


def folded_lines(metrics: Mapping[str, Any]) -> list[str]:
    """"not computed in A and B: m1, m2 (reason)", one line per reason (:func:`folded_not_computed`)."""
    lines = []
    for reason, names in folded_not_computed(metrics).items():
        why = reason.replace("<metric>", names[0], 1) if len(names) == 1 else reason
        lines.append(f"{BOTH_NOT_COMPUTED}{', '.join(names)} ({why})")
    return lines


def n_text(m: Mapping[str, Any]) -> str:
    """A compared metric's n as the outputs show it: ``n_a/n_b``, or ``—`` where either run has none (computed in
    one run only, in neither, or not compared: its reason says which). A compare.json written before ``n_a`` was
    null there held 0: a metric with no difference and a 0 reads as none too."""
    na, nb = m.get("n_a"), m.get("n_b")
    if m.get("diff") is None and (not na or not nb):
        return "—"
    return f"{na}/{nb}"
