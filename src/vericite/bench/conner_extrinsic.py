"""CONNER's Tables 5–6 (§4.3) from CONNER evaluation folders: how well each intrinsic measure of the knowledge
(factuality, relevance, sentence and paragraph coherence, informativeness) orders its extrinsic ones (helpfulness,
validity), per group of knowledge sources:
``python -m vericite.bench.conner_extrinsic FOLDER [FOLDER ...] [--group G ...] [--resamples N] [--seed S] [--json]``.

Each FOLDER is a ``vericite evaluate --task conner`` folder (or a level's ``eval/`` of ``vericite run``); folders
given the same ``--group`` are pooled (CONNER's rows are "DPR" and "LLMs", several generators pooled), a folder
without one is its own group. The statistic is Somers' D of the extrinsic measure given the intrinsic one:
(concordant − discordant) / pairs untied on the intrinsic measure (``stats.somers_d_of``; CONNER does not say which
is given which), on the items that have
both (an item a measure was not computed for is left out of that cell, counted in ``left_out``), with ``n`` and the
95% percentile bootstrap interval over items (``--resamples``, seeded). CONNER marks p < 0.05; here a cell is marked
† where its interval excludes 0. Read-only: no model is loaded. Prints a Markdown table, or with ``--json`` one
JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..jsonl import family_scores, folder_samples
from ..stats import DEFAULT_RESAMPLES, DEFAULT_SEED
from .conner_agreement import agreement

#: CONNER's intrinsic measures, in Tables 5–6's column order
INTRINSIC = ("factuality", "relevance", "coherence_sentence", "coherence_paragraph", "informativeness")
#: its extrinsic (downstream) measures, the tables' rows
EXTRINSIC = ("helpfulness", "validity")


def read_scores(folder: str | Path) -> list[dict[str, Any]]:
    """Each item's CONNER scores (``scores["conner"]`` of the folder's samples.jsonl; a torn line is skipped).
    :class:`VericiteError` for a folder without samples.jsonl or without any CONNER score."""
    records = folder_samples(folder, "a `vericite evaluate --task conner` folder")
    found = [c for c in (family_scores(r, "conner") for r in records) if c is not None]
    if not found:
        raise VericiteError(f"{folder}: no item has CONNER scores (not a `--task conner` evaluation)")
    return found


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def correlations(groups: Mapping[str, Sequence[Mapping[str, Any]]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Per group, per extrinsic measure, per intrinsic measure: Somers' D of the extrinsic given the intrinsic,
    its ``n``, ``ci95`` and ``left_out`` (the group's items missing either value)."""
    out: dict[str, Any] = {}
    for group, items in groups.items():
        rows: dict[str, Any] = {}
        for e in EXTRINSIC:
            cells: dict[str, Any] = {}
            for m in INTRINSIC:
                pairs = [(x, y) for x, y in ((_number(i.get(m)), _number(i.get(e))) for i in items) if x is not None and y is not None]
                cell = agreement("somers_d", [x for x, _ in pairs], [y for _, y in pairs], resamples=resamples, seed=seed)
                cells[m] = {**cell, "left_out": len(items) - len(pairs)}
            rows[e] = cells
        out[group] = {"items": len(items), "somers_d": rows}
    return out


def markdown(result: Mapping[str, Any]) -> list[str]:
    """Tables 5–6's layout: a row per (group, extrinsic measure), a column per intrinsic measure."""
    lines = ["| group (items) | extrinsic | " + " | ".join(INTRINSIC) + " |", "|---|---|" + "---|" * len(INTRINSIC)]
    for group, g in result.items():
        for e in EXTRINSIC:
            cells = []
            for m in INTRINSIC:
                c = g["somers_d"][e][m]
                d, (lo, hi) = c["somers_d"], c["ci95"]
                if d is None:
                    cells.append(f"— (n {c['n']})")
                    continue
                mark = "†" if lo is not None and hi is not None and (lo > 0 or hi < 0) else ""
                cells.append(f"{d:+.2f}{mark} [{lo:+.2f}, {hi:+.2f}] (n {c['n']})" if lo is not None else f"{d:+.2f} (n {c['n']})")
            lines.append(f"| {group} ({g['items']}) | {e} | " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vericite.bench.conner_extrinsic", description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="CONNER evaluation folders (each with its samples.jsonl)")
    ap.add_argument("--group", action="append", default=[], help="a folder's group, one per folder in order; folders of one group are pooled [default: each folder its own]")
    ap.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help=f"bootstrap samples of the items for each 95%% CI (default {DEFAULT_RESAMPLES})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the bootstrap's seed (default {DEFAULT_SEED})")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the Markdown table")
    a = ap.parse_args(argv)
    if a.group and len(a.group) != len(a.folders):
        print(f"error: --group: {len(a.group)} groups for {len(a.folders)} folders; give one per folder, in order", file=sys.stderr)
        return 2
    if a.resamples < 1:
        print("error: --resamples must be at least 1", file=sys.stderr)
        return 2
    names = a.group or [str(f) for f in a.folders]
    groups: dict[str, list[dict[str, Any]]] = {}
    try:
        for name, folder in zip(names, a.folders):
            groups.setdefault(name, []).extend(read_scores(folder))
    except VericiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    result = correlations(groups, resamples=a.resamples, seed=a.seed)
    if a.json:
        print(json.dumps({"statistic": "Somers' D of the extrinsic measure given the intrinsic one", "groups": result}, indent=2))
    else:
        print("\n".join(markdown(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
