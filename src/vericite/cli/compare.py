"""``vericite compare RUN_A RUN_B``: two evaluations of the same samples side by side, with the paired
difference, its bootstrap CI and a permutation p-value (vericite.runs.compare; docs/compare.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import click

from .output import md_cell


def _p(p: Any) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _ci(ci: Any) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _folded(cmp: Mapping[str, Any]) -> dict[str, list[str]]:
    """The metrics not computed in A and B, by their reason (``runs.compare_output.folded_not_computed``)."""
    from ..runs.compare_output import folded_not_computed

    return folded_not_computed(cmp["metrics"])


def _folded_lines(cmp: Mapping[str, Any]) -> list[str]:
    """"not computed in A and B: m1, m2 (reason)", one line per reason."""
    from ..runs.compare_output import folded_lines

    return folded_lines(cmp["metrics"])


def _rows(cmp: Mapping[str, Any]) -> list[tuple[str, str, str, str, str, str, str, str]]:
    """(metric, A, B, B-A, CI, p, n A/B, verdict or reason) per metric, as text; the metrics neither run computed
    for one reason are left to :func:`_folded_lines`."""
    from ..runs.compare_output import n_text

    out = []
    folded = {name for names in _folded(cmp).values() for name in names}
    for name, m in cmp["metrics"].items():
        if name in folded:
            continue
        n = n_text(m)
        if m.get("diff") is None:  # a metric not paired still shows each run's own value (its results.json)
            own = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731
            out.append((name, own(m.get("a")), own(m.get("b")), "—", "", "", n, m.get("reason") or ""))
        else:
            out.append((name, f"{m['a']:.3f}", f"{m['b']:.3f}", f"{m['diff']:+.3f}", _ci(m.get("ci")), _p(m.get("p_value")), n, m.get("verdict") or ""))
    return out


def _notes(cmp: Mapping[str, Any]) -> list[str]:
    from ..runs.compare_judges import JUDGE_EVAL, notes

    s, bs = cmp["samples"], cmp["bootstrap"]
    lines = [f"A: {cmp['a']['path']}", f"B: {cmp['b']['path']}"]
    judged = cmp.get("compared") == JUDGE_EVAL
    paired = f"{s['paired']} " + ("labelled pairs judged by both" if judged else "paired samples")
    if s["only_a"] or s["only_b"]:
        paired += f" (--intersect: {s['only_a']} only in A and {s['only_b']} only in B left out)"
    if s.get("same_questions"):
        paired += f" (--same-questions: paired by id and {'claim; the evidence differs' if judged else 'question; the ' + str(s.get('evidence')) + ' differ'} in {s.get('evidence_differs')} of them)"
    lines.append(
        f"{paired}; 95% CI: paired bootstrap, p: two-sided paired permutation test; "
        f"{bs['resamples']} resamples, seed {bs['seed']}"
    )
    for d in cmp.get("differences") or []:
        lines.append(f"differs: {d['what']}: A {d['a']} / B {d['b']}")
    return lines + notes(cmp)


def format_markdown(cmp: Mapping[str, Any]) -> str:
    cell = md_cell

    head = "| metric | A | B | B − A | 95% CI | p | n (A/B) | verdict |\n|---|--:|--:|--:|--:|--:|--:|---|\n"
    body = "".join("| " + " | ".join(cell(c) for c in r) + " |\n" for r in _rows(cmp))
    notes = "".join(f"- {cell(line)}\n" for line in [*_notes(cmp), *_folded_lines(cmp)])
    return head + body + "\n" + notes


def print_table(cmp: Mapping[str, Any]) -> None:
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = Console()
    table = Table(title="vericite compare: B − A", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for col in ("metric", "A", "B", "B − A", "95% CI", "p"):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    table.add_column("better", no_wrap=True)
    reasons = []
    for name, a, b, d, ci, p, _n, verdict in _rows(cmp):  # no n column: the table fits 80 columns (n/c rows: their reason below)
        if d == "—":
            reasons.append(f"{name}: {verdict}")
            table.add_row(*(f"[dim]{escape(c)}[/dim]" for c in (name, a, b, d, ci, p, "n/c")))
        else:
            table.add_row(*map(escape, (name, a, b, d, ci, p)), f"[bold]{verdict[0]}[/bold]" if verdict.endswith("better") else "—")
    console.print(table)
    verdicts = "better: the better run where the CI excludes 0 and p < 0.05, else —" + ("; n/c: not computed, because:" if reasons else "")
    for line in [*_notes(cmp), verdicts, *reasons, *_folded_lines(cmp)]:
        console.print(escape(line), highlight=False, soft_wrap=True)


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), help="folder for compare.json and compare_samples.jsonl (per-sample differences); `vericite report OUT` renders them")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True, help="what stdout gets")
@click.option("--json", "as_json", is_flag=True, help="same as --format json: only the comparison, as JSON, on stdout")
@click.option("--resamples", type=click.IntRange(min=0), default=1000, show_default=True, help="bootstrap samples for the CI, and permutations for the p-value")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="seed of the bootstrap and the permutations")
@click.option("--intersect", is_flag=True, help="compare the sample ids both runs hold (else runs with different ids are refused)")
@click.option(
    "--same-questions", is_flag=True,
    help="pair samples by id and question alone, letting the evidence the answers cite differ (ALCE's passages: its summ and snippet "
    "methods answer from other passages than vanilla; KaLMA's knowledge); the output says in how many samples it does. "
    "Two judge-evals: pair by pair id and claim, letting the evidence differ. Default: every input must match",
)  # fmt: skip
def compare(run_a: Path, run_b: Path, out: Path | None, fmt: str, as_json: bool, resamples: int, seed: int, intersect: bool, same_questions: bool) -> None:
    """Compare two evaluations (folders of `vericite evaluate` or `vericite run`) of the same samples, or two
    judges' `vericite judge-eval` folders on the same labelled pairs.

    Per metric: A, B, the difference B − A, its 95 % paired bootstrap CI (sample ids drawn jointly for both
    runs, each metric recomputed on each draw as it is defined), a two-sided paired permutation p-value, and
    n. Any task's runs compare (the task each results.json records). Runs of different tasks, with different
    sample ids or inputs, or scored differently (metric version, or a setting the task's metrics declare, such as
    KaLMA's match or hypothesis, ALCE's sub-task or at_most_citations), are refused; a different judge or model is
    allowed and listed. --same-questions lets the evidence differ (ALCE's summ or snippet against vanilla).

    Two judge-eval folders (--task pairs) are paired by pair id (gold labels and claims must match): binary
    balanced accuracy and accuracy at each run's threshold, three-way balanced accuracy when both are three-way,
    each B − A with its paired CI and p, and the judges' agreement. A judge-eval and an evaluation are refused.

    Example: vericite compare runs/e1 runs/e2 --out runs/e1-vs-e2 && vericite report runs/e1-vs-e2
    """
    from ..errors import VericiteError
    from ..runs.compare import compare_runs, load_evaluated_run
    from ..runs.compare_judges import compare_judge_evals, is_judge_eval, load_judge_eval
    from ..runs.compare_output import check_out, write_comparison

    if as_json:
        fmt = "json"
    if out is not None:
        check_out(out)
    judged = is_judge_eval(run_a), is_judge_eval(run_b)
    if judged[0] != judged[1]:
        which = ("A", "B") if judged[0] else ("B", "A")
        raise VericiteError(f"{which[0]} is a judge-eval folder and {which[1]} is not: compare wants two judge-eval folders or two evaluations (vericite evaluate or run), not one of each")
    if all(judged):  # two judges on the same labelled pairs (runs/compare_judges.py)
        ja, jb = load_judge_eval(run_a), load_judge_eval(run_b)
        cmp, rows = compare_judge_evals(ja, jb, resamples=resamples, seed=seed, intersect=intersect, same_questions=same_questions)
    else:
        a, b = load_evaluated_run(run_a), load_evaluated_run(run_b)
        cmp, rows = compare_runs(a, b, resamples=resamples, seed=seed, intersect=intersect, same_questions=same_questions)
    if out is not None:
        path = write_comparison(out, cmp, rows)
        click.echo(f"wrote {path} and {path.parent / 'compare_samples.jsonl'}; `vericite report {out}` renders them", err=True)
    if fmt == "json":
        click.echo(json.dumps(cmp, indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo(format_markdown(cmp), nl=False)
    else:
        print_table(cmp)
