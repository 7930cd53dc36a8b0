"""What VTG's traces say, as a Markdown table for the results docs: a row per run folder (an experiment's folder:
a row per level), the same figures as the report page's "VTG trace" section (``report/vtg_trace.py``). Read-only.

    python scripts/vtg_trace.py runs/vtg-trials runs/vtg/eli5-s3m3 [...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from vericite.report.vtg_trace import level_traces, summary_markdown, traces_of
from vericite.runs.cost import read_samples


def rows_of(folder: Path) -> list:
    results = folder / "results.json"
    experiments = json.loads(results.read_text(encoding="utf-8")).get("experiments") if results.is_file() else None
    if experiments:
        return level_traces(folder, experiments)
    traces = traces_of(read_samples(folder))
    return [(str(folder), traces)] if traces else []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    args = ap.parse_args(argv)
    rows = [row for folder in args.folders for row in rows_of(folder)]
    if not rows:
        print("no VTG answers in " + ", ".join(map(str, args.folders)), file=sys.stderr)
        return 1
    print(summary_markdown(rows), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
