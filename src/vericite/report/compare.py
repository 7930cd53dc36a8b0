"""The HTML page of a comparison folder (``vericite compare A B --out DIR``; ``vericite report DIR`` writes it).

It reuses the run report's stylesheet, charts and escaping (report/page.py, sections.py, charts.py), and holds: the two runs' identity
and what differs between them; the metric table (A, B, B − A, 95 % paired bootstrap CI, permutation p, n,
which run is better or why a metric was not compared); bar charts of the differences with their CIs, one per
metric family, as the run report groups them (report/presentation.py: the ``family`` each metric entry of
compare.json carries from the runs' results.json, the legacy table for a file written before); and one
collapsible entry per paired sample — its per-sample metric values and both answers side by side — the
samples that changed most first. The page has no script: every part works with plain HTML.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import jsonl
from ..errors import DataError
from ..jsonl import read_json_object as _read_json_object
from ..runs.compare_output import COMPARE_JSON, COMPARE_SAMPLES, folded_lines, folded_not_computed, n_text
from .charts import bar_chart
from .format import clip as _clip
from .format import esc, fmt
from .format import num as _num
from .page import CSS, DEFAULT_MAX_SAMPLES
from .presentation import families, ordered_metrics
from .sections import kv_table, section

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
COMPARE_CSS = """.diff-pos{color:var(--ok)}.diff-neg{color:var(--bad)}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.pair .answer{margin:0}
tr.better td.verdict{font-weight:600}
"""


def is_comparison(folder: str | Path) -> bool:
    """A folder written by ``vericite compare --out`` (and not a run folder)."""
    folder = Path(folder)
    return (folder / COMPARE_JSON).is_file() and not (folder / "results.json").exists()


def _signed(x: Any, higher_is_better: Any = True) -> str:
    v = _num(x)
    if v is None:
        return "—"
    cls = "" if v == 0 else ("diff-pos" if (v > 0) == (higher_is_better is not False) else "diff-neg")
    return f'<span class="{cls}">{v:+.3f}</span>' if cls else f"{v:+.3f}"


def _ci_text(ci: Any) -> str:
    if isinstance(ci, Sequence) and len(ci) == 2 and _num(ci[0]) is not None and _num(ci[1]) is not None:
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"
    return '<span class="muted">none</span>'


def _p_text(p: Any) -> str:
    v = _num(p)
    if v is None:
        return "—"
    return "&lt;0.001" if v < 0.001 else f"{v:.3f}"


def header_section(folder: Path, cmp: Mapping[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    for side in ("a", "b"):
        r = cmp.get(side) or {}
        model = r.get("model") if isinstance(r.get("model"), Mapping) else {}
        ident = " · ".join(esc(x) for x in (model.get("name"), r.get("prompt"), r.get("judge")) if x)
        rows.append((f"run {side.upper()}", f"<code>{esc(r.get('path'))}</code> {ident} <span class='muted'>{esc(r.get('created') or '')}</span>"))
    s, bs = cmp.get("samples") or {}, cmp.get("bootstrap") or {}
    paired = f"{fmt(s.get('paired'))}"
    if s.get("only_a") or s.get("only_b"):
        paired += f' <span class="warn">(--intersect: {fmt(s.get("only_a"))} only in A and {fmt(s.get("only_b"))} only in B left out)</span>'
    if s.get("same_questions"):
        paired += f' <span class="warn" id="same-questions">(--same-questions: paired by id and question; the {esc(s.get("evidence"))} differ in {fmt(s.get("evidence_differs"))} of them)</span>'
    rows += [
        ("paired samples", paired),
        ("95% CI", esc(bs.get("ci"))),
        ("p-value", esc(bs.get("p_value"))),
        ("resamples, seed", f"{fmt(bs.get('resamples'))}, {fmt(bs.get('seed'))}"),
        ("vericite", esc(cmp.get("vericite_version") or "—")),
        ("date", esc(cmp.get("created") or "—")),
    ]
    for d in cmp.get("differences") or []:
        if isinstance(d, Mapping):
            rows.append((f"differs: {d.get('what')}", f"A <code>{esc(d.get('a'))}</code> · B <code>{esc(d.get('b'))}</code>"))
    from ..runs.compare_judges import notes  # two judge-evals: how the pairs were paired, the judges' agreement

    rows += [("judge-eval", f'<span class="judge-eval-note">{esc(line)}</span>') for line in notes(cmp)]
    body = f'<h1>vericite comparison <span class="muted">— {esc(folder.resolve().name)}</span></h1>' + kv_table(rows)
    return f'<header id="header">{body}</header>'


def metrics_section(metrics: Mapping[str, Any]) -> str:
    head = "<tr><th>metric</th><th>A</th><th>B</th><th>B − A</th><th>95% CI of B − A</th><th>p</th><th>n (A/B)</th><th>better / note</th></tr>"
    body = []
    ordered = {name: metrics[name] for name in ordered_metrics(metrics)}
    folded = {name for names in folded_not_computed(ordered).values() for name in names}  # one line per reason, below
    for name, m in ordered.items():
        if not isinstance(m, Mapping) or name in folded:
            continue
        n = esc(n_text(m))
        if _num(m.get("diff")) is None:
            body.append(
                f'<tr class="metric not-computed" data-metric="{esc(name)}"><td>{esc(name)}</td><td class="num">{fmt(m.get("a"))}</td>'
                f'<td class="num">{fmt(m.get("b"))}</td><td class="num">—</td><td>—</td><td>—</td><td class="num">{n}</td>'
                f'<td class="reason">{esc(m.get("reason") or "not compared")}</td></tr>'
            )
            continue
        verdict = str(m.get("verdict") or "")
        cls = "metric better" if verdict.endswith("better") else "metric"
        body.append(
            f'<tr class="{cls}" data-metric="{esc(name)}"><td>{esc(name)}</td><td class="num">{fmt(m.get("a"))}</td>'
            f'<td class="num">{fmt(m.get("b"))}</td><td class="num diff">{_signed(m.get("diff"), m.get("higher_is_better"))}</td>'
            f'<td class="num">{_ci_text(m.get("ci"))}</td><td class="num p">{_p_text(m.get("p_value"))}</td>'
            f'<td class="num">{n}</td><td class="verdict">{esc(verdict or "—")}</td></tr>'
        )
    note = '<p class="muted">A run is called better where the CI of B − A excludes 0 and p &lt; 0.05.</p>'
    for (_reason, names), line in zip(folded_not_computed(ordered).items(), folded_lines(ordered)):
        note += f'<p class="not-computed folded" data-metrics="{esc(" ".join(names))}">{esc(line)}</p>'
    table = f'<table class="grid-table" id="compare-table"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
    return section("metrics", "Metrics", table + note)


def charts_section(metrics: Mapping[str, Any]) -> str:
    charts = []
    shown = {n: m for n, m in metrics.items() if isinstance(m, Mapping)}
    for family, names, _range in families(shown):
        title = f"B − A: {family}"
        rows = [(n, {"value": shown[n].get("diff"), "ci": shown[n].get("ci"), "reason": shown[n].get("reason")}) for n in names]
        if not any(_num(m["value"]) is not None for _, m in rows):
            continue
        top = max([abs(v) for _, m in rows for v in [m["value"], *(m["ci"] or [])] if _num(v) is not None] + [0.05])
        charts.append(bar_chart(title, rows, (-top, top)))
    if not charts:
        return ""
    return section("charts", "Differences", f'<div class="charts">{"".join(charts)}</div>')


def _sample_html(index: int, row: Mapping[str, Any], directions: Mapping[str, Any]) -> str:
    vals = row.get("metrics") if isinstance(row.get("metrics"), Mapping) else {}
    better = {"A": 0, "B": 0}
    cells = []
    for name, v in vals.items():
        if not isinstance(v, Mapping) or (_num(v.get("a")) is None and _num(v.get("b")) is None):
            continue
        d = _num(v.get("diff"))
        if d:
            better["B" if (d > 0) == (directions.get(name) is not False) else "A"] += 1
        cells.append(f"<tr><td>{esc(name)}</td><td class='num'>{fmt(v.get('a'))}</td><td class='num'>{fmt(v.get('b'))}</td><td class='num'>{_signed(d, directions.get(name))}</td></tr>")
    badges = "".join(f'<span class="flag">{k} ahead on {n} metric{"s" if n > 1 else ""}</span>' for k, n in better.items() if n) or '<span class="flag">same scores</span>'
    table = f'<table class="grid-table small"><thead><tr><th>metric</th><th>A</th><th>B</th><th>B − A</th></tr></thead><tbody>{"".join(cells)}</tbody></table>'
    answers = (
        '<div class="pair">'
        f'<div><span class="sub">answer A</span><div class="answer">{esc(row.get("output_a"))}</div></div>'
        f'<div><span class="sub">answer B</span><div class="answer">{esc(row.get("output_b"))}</div></div></div>'
    )
    return (
        f'<details class="sample" id="sample-{index}" data-id="{esc(row.get("id"))}">'
        f'<summary><span class="sid">{esc(_clip(row.get("id"), 40))}</span> <span class="q">{esc(_clip(row.get("question"), 160))}</span>{badges}</summary>'
        f'<div class="sample-body">{answers}{table}</div></details>'
    )


def _change(row: Mapping[str, Any]) -> float:
    vals = row.get("metrics") if isinstance(row.get("metrics"), Mapping) else {}
    return sum(abs(_num(v.get("diff")) or 0.0) for v in vals.values() if isinstance(v, Mapping))


def samples_section(folder: Path, metrics: Mapping[str, Any], max_samples: int) -> str:
    path = folder / COMPARE_SAMPLES
    if not path.is_file():
        return section("samples", "Samples", f'<p class="muted">No {COMPARE_SAMPLES} in this folder.</p>')
    stats = jsonl.ReadStats()
    rows = sorted(jsonl.read_appended(path, stats, errors="replace"), key=lambda r: (-_change(r), str(r.get("id"))))
    directions = {n: m.get("higher_is_better") for n, m in metrics.items() if isinstance(m, Mapping)}
    shown = [_sample_html(i, r, directions) for i, r in enumerate(rows[:max_samples], 1)]
    note = "<p class='muted'>Per-sample values are each metric computed on that sample alone; the samples that changed most come first.</p>"
    if stats.unreadable:
        note += f'<p class="warn">{stats.unreadable} lines of {COMPARE_SAMPLES} could not be read.</p>'
    if len(rows) > len(shown):
        note += f'<p class="warn" id="sample-cap">Showing {len(shown):,} of {len(rows):,} samples (vericite report --max-samples N shows more).</p>'
    return section("samples", f"Samples ({len(rows):,})", note + f'<div id="sample-list">{"".join(shown)}</div>')


def build_compare_report(folder: str | Path, *, max_samples: int = DEFAULT_MAX_SAMPLES) -> str:
    """The comparison page for a ``vericite compare --out`` folder, as an HTML string."""
    folder = Path(folder)
    cmp = _read_json_object(folder / COMPARE_JSON, "a comparison")
    if cmp.get("kind") != "compare" or not isinstance(cmp.get("metrics"), Mapping):
        raise DataError(f"{folder / COMPARE_JSON} is not a comparison written by vericite compare")
    metrics = cmp["metrics"]
    sections = [("header", "Runs"), ("metrics", "Metrics"), ("charts", "Differences"), ("samples", "Samples")]
    charts = charts_section(metrics)
    nav = "".join(f'<a href="#{i}">{t}</a>' for i, t in sections if i != "charts" or charts)
    body = header_section(folder, cmp) + metrics_section(metrics) + charts + samples_section(folder, metrics, max_samples)
    from .. import __version__

    title = f"vericite comparison — {folder.resolve().name}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{esc(title)}</title>'
        f"<style>{CSS}{COMPARE_CSS}</style></head><body><nav>{nav}</nav><main>{body}"
        f"<footer>written by vericite {esc(__version__)} report; self-contained, nothing fetched</footer></main></body></html>\n"
    )
