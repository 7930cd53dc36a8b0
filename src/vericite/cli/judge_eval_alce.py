"""``vericite judge-eval --task alce-human``: a judge measured against ALCE's human citation labels, beside ALCE's
own judge (TRUE T5-11B, the file's automatic labels). The work is ``judges/meta_alce.py``; this prints it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import click

from .options import check_judge_fits
from .output import ci_text, echo_json, md_cell


def _num(x: Any) -> str:
    if isinstance(x, bool) or x is None:
        return "n/a"
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def _cell(value: Any, ci: Any) -> str:
    text = _num(value)
    c = ci_text(ci)
    return f"{text} {c}" if c else text


def summary_line(results: Mapping[str, Any], scope: str | None = None) -> str:
    """"our judge: recall κ 0.320 (BA 0.638); ALCE's TRUE T5-11B: κ 0.578 (BA 0.786)" for the whole file or one
    dataset."""
    judge = results if scope is None else results["datasets"].get(scope, {})
    ref = results.get("reference") or {}
    ref = ref if scope is None else (ref.get("datasets") or {}).get(scope, {})
    line = (
        f"{scope + ': ' if scope else ''}{results.get('judge')}: recall κ {_num(judge.get('recall_cohen_kappa'))} "
        f"(BA {_num(judge.get('recall_balanced_accuracy'))}, n {judge.get('recall_n')}), precision κ full-vs-rest "
        f"{_num(judge.get('precision_cohen_kappa'))}, any-vs-none {_num(judge.get('precision_any_cohen_kappa'))} (n {judge.get('precision_n')})"
    )
    if ref:
        line += (
            f"; ALCE's TRUE T5-11B: recall κ {_num(ref.get('recall_cohen_kappa'))} (BA {_num(ref.get('recall_balanced_accuracy'))}), "
            f"precision κ {_num(ref.get('precision_cohen_kappa'))} / {_num(ref.get('precision_any_cohen_kappa'))}"
        )
    return line


def print_alce_human(results: Mapping[str, Any], out_dir: Path, fmt: str) -> None:
    """The judge's figures beside the reference row's, whole file then per dataset, as ``fmt`` says."""
    from ..judges.meta_alce_figures import comparison_rows

    c = results["counts"]
    from .judge_eval_usage import usage_fields, usage_line

    wrote = f"wrote {Path(out_dir) / 'results.json'}, items.jsonl and judgements.jsonl"
    if "judge_usage" in results:
        wrote = usage_line(results) + "\n" + wrote
    scopes: list[str | None] = [None, *sorted(results.get("datasets") or {})]
    left_out = f"{c['sentences_without_citations']} of {c['sentences']} sentences have no citation and are left out"
    if fmt == "json":
        echo_json(
            {
                "kind": "judge-eval",
                "task": "alce-human",
                "results": str(Path(out_dir) / "results.json"),
                **{k: results.get(k) for k in ("judge", "judge_kind", "judge_version", "model", "data", "limit", "counts", "unparseable", "failed")},
                "figures": {scope or "all": {r["metric"]: {k: r[k] for k in ("value", "ci", "reference", "reference_ci")} for r in comparison_rows(results, scope)} for scope in scopes},
                "reference": (results.get("reference") or {}).get("judge"),
                **usage_fields(results),
            }
        )
        click.echo(wrote, err=True)
        return
    ref_name = (results.get("reference") or {}).get("judge") or f"no reference: {results.get('reference_note')}"
    if fmt == "markdown":
        click.echo(f"judge `{md_cell(results['judge'], code=True)}` on ALCE's human citation labels (`{md_cell(results.get('data'), code=True)}`), {c['answers']} answers\n")
        for scope in scopes:
            click.echo(f"**{scope or 'all'}**\n")
            click.echo("| figure | judge | 95% CI | ALCE's TRUE | 95% CI |\n|---|---:|---|---:|---|")
            for r in comparison_rows(results, scope):
                click.echo(f"| {md_cell(r['figure'])} | {_num(r['value'])} | {ci_text(r['ci'])} | {_num(r['reference'])} | {ci_text(r['reference_ci'])} |")
            click.echo("")
        click.echo(f"- {md_cell(summary_line(results))}\n- reference: {md_cell(ref_name)}\n- {left_out}")
        click.echo(wrote, err=True)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(width=120)
    for scope in scopes:
        table = Table(title=f"{results['judge']} vs ALCE's human labels — {scope or 'both datasets'}", show_header=True)
        for col, just in (("figure", "left"), ("judge [95% CI]", "right"), ("ALCE's TRUE T5-11B [95% CI]", "right")):
            table.add_column(col, justify=just)  # type: ignore[arg-type]
        for r in comparison_rows(results, scope):
            table.add_row(r["figure"], _cell(r["value"], r["ci"]), _cell(r["reference"], r["reference_ci"]))
        console.print(table)
    for line in (summary_line(results), f"reference: {ref_name}", left_out,
                 f"unparseable {_num(results.get('unparseable'))}, failed {_num(results.get('failed'))} of {c['distinct_pairs']} distinct pairs"
                 + (f" ({results['resumed_pairs']} resumed)" if results.get("resumed_pairs") else ""),
                 "ROC AUC: " + str(results.get("recall_roc_auc_note")) if results.get("recall_roc_auc") is None else "",
                 wrote):  # fmt: skip
        if line:
            console.print(line, markup=False, highlight=False)


def judge_eval_alce(
    judge_spec: str,
    data: Path | None,
    limit: int | None,
    batch_size: int,
    model_opts: Mapping[str, Any],
    out_dir: Path,
    show_progress: bool,
    fmt: str,
    resume: bool,
    wrap: Callable[[Any], Any] = lambda judge: judge,
) -> None:
    """``judge-eval --task alce-human``: read the file (before any model is loaded), build the judge, judge every
    distinct pair once, print and write the figures."""
    from ..errors import VericiteError
    from ..judges import load_judge
    from ..judges.meta_alce import default_file, read_alce_human, run_alce_human_eval
    from ..progress import progress_bar
    from ..protocols import Judge

    from .judge_eval_usage import UsageCounter, add_to_results

    f = read_alce_human(data if data is not None else default_file(), limit)
    counter = UsageCounter(model_opts)
    judge = wrap(load_judge(judge_spec, ctx=counter.ctx))  # --ray: its judging on actors
    if not isinstance(judge, Judge):
        raise VericiteError(f"{judge_spec!r} did not build a judge")
    check_judge_fits(judge, [(p.evidence, p.claim, "supports") for p in f.pairs()], f.path)
    with progress_bar(len(f.pairs()), f"judging with {judge.id}", enabled=show_progress) as advance:
        results = run_alce_human_eval(judge, f, out_dir, batch_size, progress=advance, resume=resume)
    used = counter.fields(judge, resumed=int(results.get("resumed_pairs") or 0))
    add_to_results(out_dir, used)
    print_alce_human({**results, **used}, out_dir, fmt)
