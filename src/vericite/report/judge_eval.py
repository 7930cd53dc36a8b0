"""The report page of a ``vericite judge-eval`` folder (report/page.py draws answer runs): the judge (id, kind,
version, options, its model and sha256), its figures with bootstrap 95 % CIs, the confusion counts, how often it
said "supported" for each gold label, and the data (file, pairs, bad lines, pairs it cannot judge and why).

Results written before judge-eval recorded ``kind``, CIs and confusion counts are recognised by their figures
and shown with what they hold ("not recorded" for the rest). Every value read from the files is escaped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from ..judges.llm import prompt_id
from ..judges.meta_figures import judge_eval_rows
from ..types import NOT_SUPPORTED, SUPPORTED
from .format import clip as _clip
from .format import esc, fmt
from .format import num as _num
from .sections import config_section, header_section, kv_table, section

NOT_RECORDED = '<span class="muted">not recorded</span>'
FIGURE_NAMES = {
    "balanced_accuracy": "balanced accuracy",
    "roc_auc": "ROC AUC",
    "accuracy": "accuracy",
    "f1_supports": "F1 supports",
    "f1_not_supports": "F1 not_supports",
    "unparseable": "unparseable",
    "failed": "failed",
    "pairs_per_second": "pairs/s",
    "balanced_accuracy_3way": "balanced accuracy (3-way)",
    "f1_supports_3way": "F1 supports (3-way)",
    "f1_refutes_3way": "F1 refutes (3-way)",
    "f1_not_enough_info_3way": "F1 not_enough_info (3-way)",
}


def is_judge_eval(results: Mapping[str, Any]) -> bool:
    """A judge-eval results.json: by its kind, or (older ones) by its figures and no metrics."""
    if results.get("kind") == "judge-eval":
        return True
    return results.get("kind") is None and not results.get("metrics") and "balanced_accuracy" in results and "per_class_f1" in results


def _ci_html(ci: Any) -> str:
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and _num(ci[0]) is not None and _num(ci[1]) is not None:
        return f"[{fmt(float(ci[0]))}, {fmt(float(ci[1]))}]"
    return ""


def judge_block(results: Mapping[str, Any]) -> str:
    model = results.get("model")
    rows: list[tuple[str, str]] = [
        ("judge", f"<code>{esc(results.get('judge'))}</code>" if results.get("judge") else NOT_RECORDED),
        ("kind", esc(results["judge_kind"]) if results.get("judge_kind") else NOT_RECORDED),
        ("version", esc(results["judge_version"]) if results.get("judge_version") else NOT_RECORDED),
    ]
    if results.get("prompt") or results.get("prompt_version"):  # a file written before name@N: judge.support.v2
        rows.append(("prompt", esc(prompt_id(results.get("prompt") or results.get("prompt_version")))))
    if isinstance(results.get("judge_options"), Mapping) and results["judge_options"]:
        rows.append(("options", esc(", ".join(f"{k}={v}" for k, v in results["judge_options"].items()))))
    prior = (results.get("calibration") or {}).get("content_free_prior") if isinstance(results.get("calibration"), Mapping) else None
    if isinstance(prior, Mapping):  # llm3c: the label prior divided out of every pair's probabilities
        rows.append(("content-free prior", esc(", ".join(f"{k} {fmt(v)}" for k, v in prior.items() if _num(v) is not None))))
    bias = (results.get("calibration") or {}).get("bias") if isinstance(results.get("calibration"), Mapping) else None
    if isinstance(bias, Mapping):  # llm3f: the log-biases added to every pair's label log-probabilities
        data = results["calibration"].get("data") or {}
        what = f"CAQA {data.get('split')} items, four classes read as three," if data.get("kind") == "caqa" else "pairs"
        where = f" (fitted on {data.get('n')} {what} after the first {data.get('skip')} of {data.get('path')})" if data.get("n") else ""
        rows.append(("fitted log-bias", esc(", ".join(f"{k} {fmt(v)}" for k, v in bias.items() if _num(v) is not None) + where)))
    if isinstance(model, Mapping):
        rows.append(("model", esc(" · ".join(str(model[k]) for k in ("name", "backend", "model") if model.get(k))) or "—"))
        sha = model.get("sha256")
        rows.append(("model sha256", f"<code>{esc(sha)}</code>" if sha else NOT_RECORDED))
        if model.get("commit"):
            rows.append(("model commit", f"<code>{esc(model['commit'])}</code>"))
    elif "model" in results and model is None and results.get("kind") == "judge-eval":
        rows.append(("model", '<span class="muted">none (the judge uses no model)</span>'))
    else:
        rows.append(("model", NOT_RECORDED))
    rows.append(("threshold", fmt(results.get("threshold"), 2) if results.get("threshold") is not None else NOT_RECORDED))
    if isinstance(results.get("judge_usage"), Mapping):  # written since judge-eval counts its judge's tokens
        rows.append(("judge tokens", _usage_html(results["judge_usage"], results.get("judge_usage_note"))))
    return "<h3>The judge</h3>" + kv_table(rows, "kv judge-identity")


def _usage_html(usage: Mapping[str, Any], note: Any) -> str:
    """results.json's ``judge_usage`` (per model name) and ``judge_usage_note``, as one cell."""
    parts = []
    for name, u in usage.items():
        u = u if isinstance(u, Mapping) else {}
        unknown = f" ({fmt(u['uncounted_calls'])} of unknown tokens)" if u.get("uncounted_calls") else ""
        parts.append(f"{esc(name)}: {fmt(u.get('prompt_tokens'))} prompt + {fmt(u.get('completion_tokens'))} completion tokens in {fmt(u.get('calls'))} calls{unknown}")
    text = "; ".join(parts) if parts else '<span class="muted">none (no language model called)</span>'
    return text + (f'<br><span class="muted">{esc(note)}</span>' if note else "")


def figures_block(results: Mapping[str, Any]) -> str:
    trs = []
    for r in judge_eval_rows(results):
        name = FIGURE_NAMES.get(r["metric"], r["metric"])
        digits = 2 if r["metric"] == "pairs_per_second" else 3
        if r["value"] is None:
            trs.append(
                f'<tr class="figure not-computed" data-figure="{esc(r["metric"])}"><td>{esc(name)}</td><td class="num">—</td>'
                f'<td class="num"></td><td class="num">{fmt(r["n"])}</td><td class="reason">{esc(_clip(r["reason"], 300))}</td></tr>'
            )
            continue
        direction = "" if r["higher_is_better"] else "lower is better"
        trs.append(
            f'<tr class="figure" data-figure="{esc(r["metric"])}"><td>{esc(name)}</td><td class="num">{fmt(float(r["value"]), digits)}</td>'
            f'<td class="num">{_ci_html(r["ci"])}</td><td class="num">{fmt(r["n"])}</td><td class="muted">{direction}</td></tr>'
        )
    level = results.get("ci_level")
    note = (
        f'<p class="muted">95% CIs: percentile bootstrap over pairs, {fmt(results.get("resamples"))} resamples, seed '
        f'{esc(results.get("seed"))}. Unparseable and failed judgements: {esc(results.get("unparseable_policy") or "—")}.</p>'
        if level
        else '<p class="muted">No confidence intervals recorded (results written by an older vericite).</p>'
    )
    return (
        '<h3>Figures</h3><table class="grid-table" id="judge-eval-figures"><thead><tr><th>figure</th><th>value</th>'
        f'<th>95% CI</th><th>n</th><th></th></tr></thead><tbody>{"".join(trs)}</tbody></table>' + note
    )


def confusion_block(results: Mapping[str, Any]) -> str:
    conf = results.get("confusion")
    if not isinstance(conf, Mapping) or not conf:
        return f"<h3>Confusion counts</h3><p>{NOT_RECORDED}</p>"
    cols = [SUPPORTED, NOT_SUPPORTED, "abstained"]
    trs = []
    for gold in ("supports", "not_supports"):
        row = conf.get(gold) if isinstance(conf.get(gold), Mapping) else {}
        cells = "".join(f'<td class="num">{fmt(row.get(c))}</td>' for c in cols)
        total = sum(_num(row.get(c)) or 0 for c in cols)
        trs.append(f'<tr data-gold="{gold}"><th>gold {gold}</th>{cells}<td class="num">{fmt(int(total))}</td></tr>')
    head = "".join(f"<th>judge: {c}</th>" for c in cols[:2]) + "<th>abstained</th>"
    return (
        '<h3>Confusion counts</h3><table class="grid-table" id="judge-confusion"><thead><tr><th>gold</th>'
        f'{head}<th>total</th></tr></thead><tbody>{"".join(trs)}</tbody></table>'
    )


def three_way_confusion_block(results: Mapping[str, Any]) -> str:
    """A three-way judge on three-way gold labels (``three_way``): gold class -> the judge's label, with CIs."""
    three = results.get("three_way")
    if not isinstance(three, Mapping) or not isinstance(three.get("confusion"), Mapping):
        return ""
    labels = [str(x) for x in three.get("labels") or ()]
    cols = [*labels, "abstained"]
    cis = (three.get("ci") or {}).get("confusion") or {}
    trs = []
    for gold in labels:
        row = three["confusion"].get(gold) if isinstance(three["confusion"].get(gold), Mapping) else {}
        ci = cis.get(gold) if isinstance(cis.get(gold), Mapping) else {}
        cells = "".join(f'<td class="num">{fmt(row.get(c))} {_ci_html(ci.get(c))}</td>' for c in cols)
        trs.append(f'<tr data-gold="{esc(gold)}"><th>gold {esc(gold)}</th>{cells}</tr>')
    head = "".join(f"<th>judge: {esc(c)}</th>" for c in cols[:-1]) + "<th>abstained</th>"
    return (
        '<h3>Three-way confusion counts (95% CI)</h3><table class="grid-table" id="judge-confusion-3way"><thead><tr>'
        f'<th>gold</th>{head}</tr></thead><tbody>{"".join(trs)}</tbody></table>'
    )


def by_label_block(results: Mapping[str, Any]) -> str:
    pc = results.get("per_class_f1")
    by = pc.get("by_label") if isinstance(pc, Mapping) else None
    if not isinstance(by, Mapping) or not by:
        return ""
    trs = []
    for label, b in by.items():
        b = b if isinstance(b, Mapping) else {}
        share = _num(b.get("predicted_supports_share"))
        trs.append(
            f'<tr><td>{esc(label)}</td><td class="num">{fmt(b.get("n"))}</td><td class="num">{fmt(b.get("predicted_supports"))}</td>'
            f'<td class="num">{f"{share:.1%}" if share is not None else "—"}</td><td class="num">{fmt(b.get("abstained"))}</td></tr>'
        )
    return (
        '<h3>By gold label</h3><table class="grid-table" id="judge-by-label"><thead><tr><th>gold label</th><th>n</th>'
        f'<th>judge: supported</th><th>share</th><th>abstained</th></tr></thead><tbody>{"".join(trs)}</tbody></table>'
    )


def data_block(results: Mapping[str, Any]) -> str:
    rows: list[tuple[str, str]] = [
        ("data", f"<code>{esc(results.get('data'))}</code>" if results.get("data") else NOT_RECORDED),
        ("pairs judged", fmt(results.get("n"))),
        ("limit", fmt(results.get("limit")) if results.get("limit") is not None else '<span class="muted">none</span>'),
        ("bad lines skipped", f'<span class="{"warn" if _num(results.get("bad_lines")) else ""}">{fmt(results.get("bad_lines"))}</span>'),
        ("batch size", fmt(results.get("batch_size"))),
        ("seconds judging", fmt(results.get("seconds"), 2)),
    ]
    body = "<h3>Data</h3>" + kv_table(rows, "kv judge-data")
    fit = results.get("data_fit")
    if isinstance(fit, Mapping) and _num(fit.get("unfit")):
        body += (
            f'<p class="warn" id="judge-data-fit">{fmt(fit.get("unfit"))} of {fmt(fit.get("pairs"))} pairs cannot be judged '
            f'by this judge: {esc(fit.get("reason"))} (first such claim: <q>{esc(_clip(fit.get("example_claim"), 200))}</q>). '
            "They count as unparseable.</p>"
        )
    examples = results.get("bad_line_examples")
    if isinstance(examples, list) and examples:
        items = "".join(f"<li><code>{esc(_clip(json.dumps(e, ensure_ascii=False), 300))}</code></li>" for e in examples)
        body += f"<details><summary>bad lines ({fmt(results.get('bad_lines'))})</summary><ul class='problems'>{items}</ul></details>"
    return body


def alce_human_block(results: Mapping[str, Any]) -> str:
    """``judge-eval --task alce-human``: per scope (both datasets, then each), the judge's figures beside ALCE's
    TRUE T5-11B's (the file's automatic labels), and what was read."""
    from ..judges.meta_alce_figures import comparison_rows

    ref = results.get("reference")
    ref_name = ref.get("judge") if isinstance(ref, Mapping) else f"no reference ({results.get('reference_note') or 'not recorded'})"
    parts = [f'<h3>Agreement with ALCE\'s human citation labels</h3><p class="muted">Reference: {esc(ref_name)}.</p>']
    datasets = results.get("datasets") if isinstance(results.get("datasets"), Mapping) else {}
    for scope in [None, *sorted(datasets)]:
        trs = []
        for r in comparison_rows(results, scope):
            def cell(v: Any, ci: Any) -> str:
                n = _num(v)
                if n is None:
                    return '<td class="num">—</td><td class="num"></td>'
                return f'<td class="num">{fmt(float(n)) if isinstance(v, float) else fmt(v)}</td><td class="num">{_ci_html(ci)}</td>'

            trs.append(f'<tr class="figure" data-figure="{esc(r["metric"])}"><td>{esc(r["figure"])}</td>{cell(r["value"], r["ci"])}{cell(r["reference"], r["reference_ci"])}</tr>')
        parts.append(
            f'<h4>{esc(scope or "both datasets")}</h4><table class="grid-table alce-human" data-scope="{esc(scope or "all")}"><thead><tr><th>figure</th>'
            f'<th>judge</th><th>95% CI</th><th>ALCE\'s TRUE</th><th>95% CI</th></tr></thead><tbody>{"".join(trs)}</tbody></table>'
        )
    c = results.get("counts") if isinstance(results.get("counts"), Mapping) else {}
    rows: list[tuple[str, str]] = [
        ("data", f"<code>{esc(results.get('data'))}</code>" if results.get("data") else NOT_RECORDED),
        ("limit (answers per run)", fmt(results.get("limit")) if results.get("limit") is not None else '<span class="muted">none</span>'),
        *((k.replace("_", " "), fmt(c.get(k))) for k in ("answers", "sentences", "sentences_without_citations", "recall_items", "precision_items", "distinct_pairs")),
        ("unparseable / failed", f"{fmt(results.get('unparseable'))} / {fmt(results.get('failed'))}"),
        ("seconds judging", fmt(results.get("seconds"), 2)),
    ]
    return "".join(parts) + "<h3>Data</h3>" + kv_table(rows, "kv judge-data")


def judge_eval_section(results: Mapping[str, Any]) -> str:
    if results.get("task") == "alce-human":
        return section("judge-eval", "Judge evaluation", judge_block(results) + alce_human_block(results))
    body = judge_block(results) + figures_block(results) + confusion_block(results) + three_way_confusion_block(results) + by_label_block(results) + data_block(results)
    return section("judge-eval", "Judge evaluation", body)


def judge_eval_page(run_dir: Path, results: Mapping[str, Any], manifest: Mapping[str, Any] | None, manifest_problem: str | None) -> tuple[str, str]:
    """(nav, body) of the page of a judge-eval folder."""
    sections = [("header", "Run"), ("judge-eval", "Judge"), ("config", "Configuration")]
    nav = "".join(f'<a href="#{i}">{t}</a>' for i, t in sections)
    body = header_section(run_dir, results, manifest, manifest_problem) + judge_eval_section(results) + config_section(results, manifest)
    return nav, body
