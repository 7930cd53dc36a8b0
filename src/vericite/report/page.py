"""The page: read the run folder, render every section and answer, and put them in one self-contained HTML file
whose Content-Security-Policy allows only the page's own script, by its sha256."""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path
from typing import Any, Mapping

from .. import jsonl
from ..errors import DataError
from ..jsonl import read_json_object
from ..runs.cost import read_samples
from ..runs.rundir import load_results
from ..totals import token_totals
from .answers import sample_html
from .assets import read_asset
from .charts import CHART_CSS
from .conner import FactualityItems, conner_section
from .format import esc
from .token_figure import experiment_token_section
from .vtg_trace import VtgTraces, level_traces, vtg_trace_section
from .sections import (
    charts_section,
    config_section,
    counts_section,
    experiments_section,
    header_section,
    judges_section,
    metrics_section,
    samples_section,
    tokens_section,
)

DEFAULT_MAX_SAMPLES = 500

#: the page's stylesheet: its own rules, then the charts' (assets/report.css, assets/chart.css)
CSS = "\n" + read_asset("report.css") + CHART_CSS
#: the script that filters the answers (assets/report.js), inlined exactly as hashed
JS = read_asset("report.js").rstrip("\n")


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(JS.encode("utf-8")).digest()).decode("ascii")
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'"


def build_report(run_dir: str | Path, *, max_samples: int = DEFAULT_MAX_SAMPLES) -> str:
    """The report page for ``run_dir`` as an HTML string."""
    from .judge_eval import is_judge_eval, judge_eval_page

    run_dir = Path(run_dir)
    results = load_results(run_dir)
    manifest: dict[str, Any] | None = None
    manifest_problem = None
    if (run_dir / "manifest.json").is_file():
        try:
            manifest = read_json_object(run_dir / "manifest.json", "the run's manifest")
        except DataError as e:
            manifest_problem = str(e)

    samples_path = run_dir / "samples.jsonl"
    has_samples = samples_path.is_file()
    sstats = jsonl.ReadStats()
    rendered: list[str] = []
    total = 0
    judgement_stats: dict[str, dict[str, int]] = {}
    usages: list[Any] = []
    knowledge = FactualityItems()  # CONNER §4.4's analyses, when the samples have CONNER scores
    traces = VtgTraces()  # what VTG's traces say, when the answers are VTG's
    for sample in jsonl.read_appended(samples_path, sstats, errors="replace"):
        total += 1
        knowledge.add(sample)
        traces.add(sample)
        if len(rendered) < max_samples:
            rendered.append(sample_html(total, sample))
        for j in sample.get("judgements") or []:
            if isinstance(j, Mapping):
                st = judgement_stats.setdefault(str(j.get("judge") or "—"), {})
                status = str(j.get("status") or "ok")
                status = status if status in ("ok", "unparseable") else "failed"
                st[status] = st.get(status, 0) + 1
        usages.append(sample.get("usage"))
    sample_tokens = token_totals(usages)

    metrics = results.get("metrics") or {}
    title = f"vericite report — {run_dir.resolve().name}"
    sections = [("header", "Run"), ("metrics", "Metrics")]
    if metrics:
        sections.append(("charts", "Charts"))
    read_level = functools.cache(read_samples)  # each level's samples.jsonl read once: its figure and its trace
    token_figure = experiment_token_section(run_dir, results.get("experiments") or {}, read=read_level)
    if results.get("experiments"):
        sections.append(("experiments", "Experiments"))
    if token_figure:
        sections.append(("token-figure", "Tokens per question"))
    if knowledge:
        sections.append(("conner", "Long tail / form"))
    experiments = results.get("experiments") or {}
    if experiments:
        trace_rows = level_traces(run_dir, experiments, read=read_level)
    else:
        trace_rows = [(run_dir.resolve().name, traces)] if traces else []
    if trace_rows:
        sections.append(("vtg-trace", "VTG trace"))
    sections += [("judges", "Judges"), ("counts", "Counts"), ("tokens", "Tokens"), ("samples", "Answers")]
    nav = "".join(f'<a href="#{i}">{t}</a>' for i, t in sections)
    body = "".join(
        [
            header_section(run_dir, results, manifest, manifest_problem),
            metrics_section(metrics),
            charts_section(metrics),
            experiments_section(results.get("experiments") or {}),
            token_figure,
            conner_section(knowledge),
            vtg_trace_section(trace_rows),
            judges_section(results, judgement_stats),
            counts_section(run_dir, results, sstats, total, has_samples),
            tokens_section(results, (sample_tokens["prompt"], sample_tokens["completion"]), total),
            samples_section(rendered, total, max_samples, has_samples),
            config_section(results, manifest),
        ]
    )
    if is_judge_eval(results):  # a judge-eval folder: the judge's own page (report/judge_eval.py)
        nav, body = judge_eval_page(run_dir, results, manifest, manifest_problem)
    from .. import __version__

    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(_csp())}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><nav>{nav}</nav><main>{body}"
        f"<footer>written by vericite {esc(__version__)} report; self-contained, nothing fetched</footer></main>"
        f"<script>{JS}</script></body></html>\n"
    )


def write_report(run_dir: str | Path, out: str | Path | None = None, *, max_samples: int = DEFAULT_MAX_SAMPLES) -> Path:
    """Write the report for ``run_dir`` to ``out`` (default ``run_dir/report.html``) and return its path.
    A missing or malformed ``results.json`` raises :class:`~vericite.errors.DataError`."""
    if max_samples < 0:
        raise DataError("max_samples must be 0 or more")
    run_dir = Path(run_dir)
    from .compare import build_compare_report, is_comparison  # a `vericite compare --out` folder

    page = (build_compare_report if is_comparison(run_dir) else build_report)(run_dir, max_samples=max_samples)
    path = Path(out) if out is not None else run_dir / "report.html"
    if path.is_dir():
        raise DataError(f"--out {path} is a folder; give a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        jsonl.write_text_atomic(path, page)
    except OSError as e:
        raise DataError(f"cannot write {path}: {e.strerror or e}") from None
    return path
