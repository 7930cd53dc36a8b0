"""CONNER §4.4's two figures as SVG files of their own, from CONNER evaluation folders (``vericite evaluate --task
conner``, or a level's ``eval/`` of ``vericite run``): factuality by the topic's page views (long tail: quartiles of
the items' page views, WoW) and by the knowledge's number of sentences (long form). They are the figures of the
report page's "Long tail and long form" section (``vericite.report.conner``); with several folders, a bar per
folder in each bucket (each folder's quartiles its own, matched by rank) and a legend of their labels. Read-only:
no model is loaded. The buckets' numbers are printed as a Markdown table.

    python scripts/conner_figures.py runs/ck1 [runs/ck2 ...] [--label L1 --label L2 ...] [--img docs/img] [--prefix conner]

writes IMG/PREFIX-longtail.svg (when an item carries page views) and IMG/PREFIX-longform.svg."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vericite.errors import VericiteError
from vericite.report.charts import standalone_svg
from vericite.report.conner import buckets_markdown, figures, read_items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="CONNER evaluation folders (each with its samples.jsonl)")
    ap.add_argument("--label", action="append", default=[], help="a folder's name in the legend and the table, one per folder in order [default: the folder]")
    ap.add_argument("--img", type=Path, default=Path("docs/img"), help="folder for the SVG files [default: docs/img]")
    ap.add_argument("--prefix", default="conner", help="the files' names: PREFIX-longtail.svg, PREFIX-longform.svg [default: conner]")
    args = ap.parse_args(argv)
    if args.label and len(args.label) != len(args.folders):
        print(f"error: --label: {len(args.label)} labels for {len(args.folders)} folders; give one per folder, in order", file=sys.stderr)
        return 2
    labels = args.label or [str(f) for f in args.folders]
    try:
        runs = [(label, read_items(folder)) for label, folder in zip(labels, args.folders)]
        for label, found in runs:
            if not found:
                raise VericiteError(f"{label}: no item has CONNER scores (not a `--task conner` evaluation)")
        drawn = figures(runs)
        args.img.mkdir(parents=True, exist_ok=True)
        for name, svg in drawn.items():
            path = args.img / f"{args.prefix}-{name}.svg"
            path.write_text(standalone_svg(svg), encoding="utf-8")
            print(f"wrote {path}")
    except VericiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: cannot write to {args.img}: {e.strerror or e}", file=sys.stderr)
        return 1
    if "longtail" not in drawn:
        print("no long-tail figure: no item with factuality carries page views (only WoW's dialogues do)")
    if "longform" not in drawn:
        print("no long-form figure: no item with factuality records its number of sentences (evaluations before n_sentences)")
    for label, found in runs:
        print(f"{label} — {len(found.items)} items with factuality, {found.without} without, "
              f"{sum(1 for it in found.items if 'page_views' in it)} with page views")
    print(buckets_markdown(runs), end="")
    return 0 if drawn else 1


if __name__ == "__main__":
    sys.exit(main())
