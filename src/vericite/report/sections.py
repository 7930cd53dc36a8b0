"""The sections of the report page, each from results.json (and the counts gathered from samples.jsonl): the
run's identity, the metric table, bar charts, experiment curves, judges, counts, tokens, configuration, and the
frame of the answers list (the answers themselves: report.answers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import jsonl
from ..judges.trust import four_class_words, is_four_class, three_way_words
from ..versions import versioned
from .answers import SAMPLE_FLAGS
from .charts import bar_chart, line_chart
from .format import ci_of, clip, esc, fmt, fmt_level, level_key, metric_value, num
from .inputs import first_lines
from .presentation import curves, descending, families, ordered_metrics

MAX_LISTED_PROBLEMS = 20


def _section(id_: str, title: str, body: str) -> str:
    return f'<section id="{id_}"><h2>{esc(title)}</h2>{body}</section>'


def _kv_table(rows: Sequence[tuple[str, str]], cls: str = "kv") -> str:
    return f'<table class="{cls}">' + "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def header_section(run_dir: Path, results: Mapping[str, Any], manifest: Mapping[str, Any] | None, manifest_problem: str | None) -> str:
    man = manifest or {}
    model = results.get("model") if results.get("model") is not None else man.get("model")
    rows: list[tuple[str, str]] = [("kind", esc(results.get("kind") or "—"))]
    if isinstance(model, Mapping):
        ident = " · ".join(esc(model.get(k)) for k in ("name", "backend", "model") if model.get(k))
        sha = model.get("sha256")
        rows.append(("model", ident or "—"))
        rows.append(
            ("sha256", f'<code title="{esc(sha)}">{esc(str(sha)[:12])}</code>' if sha else '<span class="muted">not recorded</span>')
        )
    elif model:
        rows.append(("model", esc(model)))
    else:
        rows.append(("model", '<span class="muted">none</span>'))
    prompt = results.get("prompt") or man.get("prompt")
    rows.append(("prompt", esc(prompt) if prompt else '<span class="muted">none</span>'))
    if man.get("parser"):
        rows.append(("parser", esc(man.get("parser"))))
    rows.append(("vericite", esc(results.get("vericite_version") or man.get("vericite_version") or "—")))
    mv = results.get("metric_versions")
    if isinstance(mv, Mapping) and mv:
        rows.append(("metric versions", esc(", ".join(str(versioned(k, v)) for k, v in mv.items()))))
    seed = results.get("seed", man.get("seed"))
    rows.append(("seed", esc(seed) if seed is not None else "—"))
    rows.append(("date", esc(results.get("created") or man.get("finished") or man.get("started") or "—")))
    if manifest is not None:
        status = man.get("status")
        cls = "warn" if status != "complete" else ""
        note = " (the run had not finished when this was evaluated)" if status == "running" else ""
        rows.append(("status", f'<span class="{cls}">{esc(status or "—")}{esc(note)}</span>'))
    elif manifest_problem:
        rows.append(("manifest", f'<span class="warn">{esc(manifest_problem)}</span>'))
    body = f'<h1>vericite report <span class="muted">— {esc(run_dir.resolve().name)}</span></h1>' + _kv_table(rows, "kv meta")
    return f'<header id="header">{body}</header>'


def metrics_section(metrics: Mapping[str, Any]) -> str:
    if not metrics:
        return _section("metrics", "Metrics", '<p class="muted">results.json holds no metrics.</p>')
    head = "<tr><th>metric</th><th>value</th><th>n</th><th>95% CI</th><th>direction</th><th>judge</th><th>note</th></tr>"
    body = []
    for name in ordered_metrics(metrics):
        m = metrics[name]
        v, why = metric_value(m)
        mm = m if isinstance(m, Mapping) else {}
        ci = ci_of(mm)
        hib = mm.get("higher_is_better")
        direction = "↑ higher is better" if hib is True else "↓ lower is better" if hib is False else "—"
        judge = mm.get("judge")
        if v is None:
            body.append(
                f'<tr class="metric not-computed" data-metric="{esc(name)}"><td>{esc(name)}</td>'
                f'<td class="num"><span class="nc">not computed</span></td><td class="num">{fmt(mm.get("n"))}</td>'
                f"<td>—</td><td>{direction}</td><td>{esc(judge) if judge else '—'}</td>"
                f'<td class="reason">{esc(why)}</td></tr>'
            )
        else:
            ci_txt = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else '<span class="muted">none</span>'
            note = esc(mm.get("reason")) if mm.get("reason") else ""
            body.append(
                f'<tr class="metric" data-metric="{esc(name)}"><td>{esc(name)}</td><td class="num">{v:.3f}</td>'
                f'<td class="num">{fmt(mm.get("n"))}</td><td class="num">{ci_txt}</td><td>{direction}</td>'
                f"<td>{esc(judge) if judge else '—'}</td><td>{note}</td></tr>"
            )
    table = f'<table class="grid-table" id="metric-table"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
    return _section("metrics", "Metrics", table)


def charts_section(metrics: Mapping[str, Any]) -> str:
    if not metrics:
        return ""
    charts = [bar_chart(title, [(n, metrics[n]) for n in names], domain) for title, names, domain in families(metrics)]
    note = '<p class="muted">Bars: the value; whiskers: the 95% confidence interval.</p>'
    return _section("charts", "Charts", note + '<div class="charts">' + "".join(charts) + "</div>")


def experiments_section(experiments: Mapping[str, Any]) -> str:
    if not experiments:
        return ""
    parts = []
    for ename, exp in experiments.items():
        if not isinstance(exp, Mapping) or not isinstance(exp.get("rows"), list):
            parts.append(f'<div class="experiment"><h3>{esc(ename)}</h3><p class="warn">malformed experiment entry</p></div>')
            continue
        x_label = str(exp.get("x") or "level")
        rows = [r for r in exp["rows"] if isinstance(r, Mapping)]
        rows.sort(key=lambda r: level_key(r.get("level")), reverse=descending(exp, x_label))
        levels = [r.get("level") for r in rows]
        by_level = [r.get("metrics") if isinstance(r.get("metrics"), Mapping) else {} for r in rows]
        first: dict[str, Any] = {}  # each metric's first entry, which says how it is shown
        for m in by_level:
            for k, entry in m.items():
                first.setdefault(k, entry)
        present = ordered_metrics(first)
        charts = [
            line_chart(title, x_label, levels, [(n, [m.get(n) for m in by_level]) for n in names])
            for title, names in curves(exp, present)
        ]
        # the numbers behind the curves
        head = "<tr><th>metric</th>" + "".join(f"<th>{esc(fmt_level(lv))}</th>" for lv in levels) + "</tr>"
        trs = []
        for n in present:
            cells = []
            for m in by_level:
                v, why = metric_value(m.get(n)) if n in m else (None, "not reported")
                if v is None:
                    cells.append(f'<td class="nc" title="{esc(why)}">not computed</td>')
                else:
                    ci = ci_of(m[n])
                    cells.append(f'<td class="num" title="{esc(f"95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "no CI")}">{v:.3f}</td>')
            trs.append(f"<tr><td>{esc(n)}</td>{''.join(cells)}</tr>")
        table = f'<table class="grid-table exp-table"><thead>{head}</thead><tbody>{"".join(trs)}</tbody></table>'
        parts.append(
            f'<div class="experiment" data-experiment="{esc(ename)}"><h3>{esc(ename)} '
            f'<span class="muted">(x: {esc(x_label)})</span></h3><div class="charts">{"".join(charts)}</div>'
            f"<details><summary>numbers</summary>{table}</details></div>"
        )
    return _section("experiments", "Experiments", "".join(parts))


def judges_section(results: Mapping[str, Any], judgement_stats: Mapping[str, Mapping[str, int]]) -> str:
    judges = results.get("judges") or {}
    rows = []
    seen: set[str] = set()
    for purpose, j in judges.items():
        j = j if isinstance(j, Mapping) else {"id": j}
        jid = str(j.get("id") or "—")
        seen.add(jid)
        measured = j.get("measured")
        if is_four_class(measured):
            # a four-class judge (CAQA): no balanced accuracy or ROC AUC, its accuracy over the four classes instead
            trust = f'<td colspan="2" class="muted">four-class</td><td>{esc(four_class_words(dict(measured)))}</td>'
        elif isinstance(measured, Mapping):
            ba, auc = fmt(measured.get("balanced_accuracy")), fmt(measured.get("roc_auc"))
            src = esc(measured.get("data") or measured.get("source") or "")
            ref = measured.get("reference")
            if measured.get("cohen_kappa") is not None:  # ALCE's human labels: Cohen's kappa beside ALCE's own judge's
                src += f"; Cohen's κ {fmt(measured.get('cohen_kappa'))}"
                if isinstance(ref, Mapping):
                    src += esc(f" (ALCE's {ref.get('judge', 'TRUE T5-11B')}: κ ") + f"{fmt(ref.get('cohen_kappa'))})"
            three = three_way_words(measured)  # a three-way judge: its figures on three-way gold labels beside
            if three:
                src += esc(f"; {three}")
            trust = f'<td class="num">{ba}</td><td class="num">{auc}</td><td>{src}</td>'
        else:
            trust = '<td colspan="3" class="muted">not measured</td>'
        rows.append((esc(purpose), jid, trust))
    metrics = results.get("metrics") or {}
    for m in metrics.values():
        jid = m.get("judge") if isinstance(m, Mapping) else None
        if jid and str(jid) not in seen:
            seen.add(str(jid))
            rows.append(("—", str(jid), '<td colspan="3" class="muted">not measured</td>'))
    for jid in judgement_stats:
        if jid not in seen:
            seen.add(jid)
            rows.append(("—", jid, '<td colspan="3" class="muted">not measured</td>'))
    if not rows:
        return _section("judges", "Judges", '<p class="muted">No judge was used.</p>')
    head = (
        "<tr><th>purpose</th><th>judge</th><th>balanced accuracy</th><th>ROC AUC</th><th>measured on</th>"
        "<th>judgements in samples (ok / unparseable / failed)</th></tr>"
    )
    trs = []
    for purpose, jid, trust in rows:
        st = judgement_stats.get(jid)
        used = (
            f'{st.get("ok", 0):,} / <span class="{"warn" if st.get("unparseable") else ""}">{st.get("unparseable", 0):,}</span>'
            f' / <span class="{"warn" if st.get("failed") else ""}">{st.get("failed", 0):,}</span>'
            if st
            else '<span class="muted">—</span>'
        )
        trs.append(f'<tr class="judge"><td>{purpose}</td><td><code>{esc(jid)}</code></td>{trust}<td>{used}</td></tr>')
    note = (
        '<p class="muted">Trust: how the judge scored on labelled pairs (vericite judge-eval). '
        "A judge that is not measured gives numbers of unknown reliability.</p>"
    )
    return _section("judges", "Judges", note + f'<table class="grid-table" id="judge-table"><thead>{head}</thead><tbody>{"".join(trs)}</tbody></table>')


def counts_section(run_dir: Path, results: Mapping[str, Any], sstats: jsonl.ReadStats, n_samples_read: int, has_samples: bool) -> str:
    counts = results.get("counts") or {}
    rows: list[tuple[str, str]] = []
    for key, label in [
        ("samples", "samples"),
        ("bad_lines", "bad input lines"),
        ("unparseable_outputs", "unparseable outputs"),
        ("failed_calls", "failed model calls"),
        ("unparseable_judgements", "unparseable judgements"),
    ]:
        v = counts.get(key)
        cls = "warn" if key != "samples" and num(v) else ""
        rows.append((label, f'<span class="{cls}">{fmt(v)}</span>' if v is not None else '<span class="muted">not recorded</span>'))
    for key, v in counts.items():
        if key not in {"samples", "bad_lines", "unparseable_outputs", "failed_calls", "unparseable_judgements", "citation_status"}:
            rows.append((str(key).replace("_", " "), fmt(v) if not isinstance(v, (dict, list)) else esc(json.dumps(v))))
    body = '<div class="cols"><div>' + _kv_table(rows, "kv counts") + "</div>"
    cs = counts.get("citation_status")
    if isinstance(cs, Mapping) and cs:
        total = sum(num(v) or 0 for v in cs.values()) or 1
        trs = []
        for status, v in cs.items():
            cls = "st-ok" if status == "ok" else "st-bad"
            share = (num(v) or 0) / total
            trs.append(
                f'<tr><td><span class="dot {cls}"></span>{esc(status)}</td><td class="num">{fmt(v)}</td>'
                f'<td class="num">{share:.1%}</td></tr>'
            )
        body += (
            '<div><table class="grid-table" id="citation-status-table"><thead><tr><th>citation status</th><th>n</th>'
            f'<th>share</th></tr></thead><tbody>{"".join(trs)}</tbody></table></div>'
        )
    body += "</div>"
    notes = []
    if has_samples:
        notes.append(f"samples.jsonl: {n_samples_read:,} samples read")
        if sstats.unreadable:
            notes.append(f'<span class="warn">{sstats.unreadable:,} unreadable line{"s" if sstats.unreadable != 1 else ""} skipped</span>')
        if sstats.torn_last:
            notes.append('<span class="warn">an unfinished last line was ignored</span>')
    else:
        notes.append('<span class="muted">no samples.jsonl in the run folder</span>')
    body += "<p>" + "; ".join(notes) + "</p>"
    # the first few problem lines, when the run folder keeps them
    for fname, title in (("bad_lines.jsonl", "bad input lines"), ("errors.jsonl", "failed model calls")):
        shown, total = first_lines(run_dir / fname, MAX_LISTED_PROBLEMS)
        if shown:
            items = "".join(f"<li><code>{esc(clip(json.dumps(d, ensure_ascii=False), 400))}</code></li>" for d in shown)
            more = f"<p class='muted'>first {len(shown)} of {total:,}</p>" if total > len(shown) else ""
            body += f"<details><summary>{esc(fname)}: {total:,} {esc(title)}</summary><ul class='problems'>{items}</ul>{more}</details>"
    return _section("counts", "Counts", body)


def tokens_section(results: Mapping[str, Any], sample_tokens: tuple[int, int], n_samples: int) -> str:
    tokens = results.get("tokens")
    source = "results.json"
    if isinstance(tokens, Mapping) and tokens:
        p, c = tokens.get("prompt"), tokens.get("completion")
    elif n_samples:
        p, c = sample_tokens
        source = "summed from samples.jsonl"
    else:
        return _section("tokens", "Tokens", '<p class="muted">not recorded</p>')
    pn, cn = num(p), num(c)
    total = (pn or 0) + (cn or 0) if (pn is not None or cn is not None) else None
    rows = [("prompt", fmt(p)), ("completion", fmt(c)), ("total", fmt(int(total)) if total is not None else "—")]
    samples = num((results.get("counts") or {}).get("samples")) or n_samples
    if total is not None and samples:
        rows.append(("per sample", f"{total / samples:,.1f}"))
    if isinstance(tokens, Mapping) and num(tokens.get("uncounted_calls")):
        rows.append(("calls of unknown tokens", f"{fmt(tokens.get('uncounted_calls'))} (the counts are a lower bound)"))
    judged = results.get("judge_usage")
    for model, u in (judged.items() if isinstance(judged, Mapping) else ()):
        if isinstance(u, Mapping):
            unknown = f", {fmt(u.get('uncounted_calls'))} of unknown tokens" if num(u.get("uncounted_calls")) else ""
            rows.append((f"judging: {model}", f"{fmt(u.get('prompt_tokens'))} + {fmt(u.get('completion_tokens'))} in {fmt(u.get('calls'))} calls{unknown}"))
    note = "; judging: the evaluation's own model calls, not in the counts above (judge_usage)" if any(k.startswith("judging: ") for k, _ in rows) else ""
    return _section("tokens", "Tokens", _kv_table(rows, "kv tokens") + f'<p class="muted">source: {esc(source + note)}</p>')


def config_section(results: Mapping[str, Any], manifest: Mapping[str, Any] | None) -> str:
    parts = []
    for title, obj in (("results.json config", results.get("config")), ("manifest.json", manifest)):
        if obj:
            text = json.dumps(obj, indent=2, ensure_ascii=False, default=str)
            parts.append(f"<details><summary>{esc(title)}</summary><pre>{esc(clip(text, 200_000))}</pre></details>")
    # judge-eval and other kinds keep their figures at the top level
    extra = [
        (k, v)
        for k, v in results.items()
        if k not in {"kind", "vericite_version", "created", "config", "seed", "model", "prompt", "metric_versions",
                     "judges", "metrics", "counts", "tokens", "experiments", "judge_usage"}
    ]
    if extra:
        rows = [(k, fmt(v) if not isinstance(v, (dict, list)) else f"<code>{esc(clip(json.dumps(v, ensure_ascii=False), 600))}</code>") for k, v in extra]
        parts.insert(0, "<h3>Other figures in results.json</h3>" + _kv_table(rows, "kv extra"))
    if not parts:
        return ""
    return _section("config", "Configuration", "".join(parts))


def samples_section(rendered: list[str], total: int, max_samples: int, has_samples: bool) -> str:
    if not has_samples:
        return _section("samples", "Answers", '<p class="muted">No samples.jsonl in this run folder.</p>')
    options = '<option value="">all answers</option>' + "".join(f'<option value="{k}">{esc(v)}</option>' for k, v in SAMPLE_FLAGS)
    legend = (
        '<p class="legend-line">'
        '<span class="cite cite-correct">correct</span> '
        '<span class="cite cite-incorrect">not in the given knowledge</span> '
        '<span class="cite cite-bad">unknown entity / no property / no value / malformed</span> '
        '<span class="cite cite-na">NA</span> knowledge absent '
        '<span class="muted">— hover a citation for its status</span></p>'
    )
    if any('class="knowledge passages"' in r for r in rendered):  # answers citing documents (ALCE): the judge's verdicts
        legend = (
            '<p class="legend-line">'
            '<span class="cite cite-correct">entailed, needed</span> '
            '<span class="cite cite-incorrect">entailed, not needed</span> '
            '<span class="cite cite-unsupported">not entailed</span> '
            '<span class="cite cite-unused">not read (past the first 3)</span> '
            '<span class="cite cite-bad">out of range / malformed</span> '
            '<span class="cite cite-passage">no verdict</span> '
            '<span class="muted">— hover a citation for its document and verdict</span></p>'
        )
    controls = (
        '<div class="controls"><input id="sample-filter" type="search" placeholder="filter by text…" aria-label="filter answers">'
        f'<select id="sample-flag" aria-label="show only">{options}</select>'
        '<button type="button" id="expand-all">expand all</button><button type="button" id="collapse-all">collapse all</button>'
        '<span id="sample-count" class="muted"></span></div>'
    )
    cap = ""
    if total > len(rendered):
        cap = (
            f'<p class="warn" id="sample-cap">Showing the first {len(rendered):,} of {total:,} answers '
            f"(vericite report --max-samples N shows more).</p>"
        )
    return _section("samples", f"Answers ({total:,})", legend + controls + cap + f'<div id="sample-list">{"".join(rendered)}</div>')

