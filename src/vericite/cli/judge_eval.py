"""``vericite judge-eval``: measure a judge on labelled evidence/claim pairs (``--task pairs``, VitaminC by default)
or on ALCE's human citation labels (``--task alce-human``, ``cli/judge_eval_alce.py``)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import click

from ..errors import VericiteError
from .output import ci_text, echo_json, format_options, markdown_table, md_cell, resolve_format, rows_json
from ..printable import printable
from .options import check_judge_fits, on_ray, ray_options, server_options


def _fmt(x: object, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def default_pairs_data() -> Path:
    """The shared VitaminC dev pairs (judge-eval's default --data; for evaluation only: train llm3f refuses them)."""
    from ..paths import shared_data_dir

    return shared_data_dir() / "vitaminc" / "dev.jsonl"  # type: ignore[operator]


#: --task: what a judge is measured on, and its default --data
TASKS: dict[str, str] = {
    "pairs": "labelled (evidence, claim, label) pairs, JSONL (default --data: the shared VitaminC dev pairs)",
    "alce-human": "ALCE's human citation labels: sentence recall and per-citation precision, beside ALCE's TRUE "
    "(default --data: the shared alce/human_eval/human_eval_citations_completed.json)",
    "caqa": "CAQA's four classes on a `vericite build caqa` file (--data, --split), or --predictions made elsewhere",
}


@click.command("judge-eval")
@click.option("--judge", "judge_spec", default=None, help="(required but with --predictions) triple, nli:<model dir or hub id>, llm:<model name>[@<prompt number>], table:<file.jsonl>; three-way (VitaminC's three labels): llm3:<model>, llm3c:<model> (calibrated), llm3f:<fit file> (biases fitted by `vericite train llm3f`), nli3:<model>; --task caqa takes four-class judges only: llm4:<model>, autois:<binary judge>, nli4:<model>, caqa:<folder>")
@click.option(
    "--task",
    type=click.Choice(sorted(TASKS)),
    default="pairs",
    show_default=True,
    help="pairs: labelled evidence/claim pairs; alce-human: ALCE's human citation labels; caqa: CAQA's four classes",
)
@click.option(
    "--data",
    type=click.Path(dir_okay=True, path_type=Path),
    default=None,
    help="pairs: JSONL with evidence, claim, label per line (default: the shared VitaminC dev pairs); alce-human: "
    "a file shaped as ALCE's human_eval_citations_completed.json (default: the shared copy)",
)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="pairs: judge only the first N pairs; alce-human: the first N answers of each system's run")
@click.option("--split", default=None, help="caqa: judge the items of this split only (train or test)")
@click.option("--predictions", type=click.Path(dir_okay=False, path_type=Path), default=None, help="caqa: score a file of {label, prediction, complexity, human_label?} lines instead of running a judge")
@click.option(
    "--resume",
    is_flag=True,
    help="alce-human, caqa: keep the judge's judgements already in --out/judgements.jsonl (an interrupted run's) and judge "
    "only the rest; with --ray also the parts of a call the actors finished (--out/.ray-calls.jsonl). Not for --task pairs",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="model threads (default: the backend's)")
@click.option("--cache/--no-cache", default=True, show_default=True, help="use the model call cache")
@server_options
@ray_options
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="folder for results.json and judgements.jsonl")
@click.option("--progress/--no-progress", default=True, show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="no progress bar (same as --no-progress)")
@format_options
def judge_eval(
    judge_spec: str | None,
    task: str,
    split: str | None,
    predictions: Path | None,
    data: Path | None,
    limit: int | None,
    resume: bool,
    batch_size: int,
    threads: int | None,
    cache: bool,
    out_dir: Path,
    progress: bool,
    quiet: bool,
    fmt: str | None,
    as_json: bool,
    **server: Any,
) -> None:
    """Judge labelled pairs and report balanced accuracy, ROC AUC, per-class F1, unparseable share and speed,
    each with a bootstrap 95% CI; results.json also records the judge's kind, version and model sha256.

    A judge that cannot judge the data by its nature (the triple judge reads only "property: value" claims) is
    refused when it can judge none of the pairs, and warned about up front when it cannot judge some. The table
    goes to stdout (--format table|json|markdown); progress and warnings go to stderr.

    Example: vericite judge-eval --judge llm:qwen2.5-coder-1.5b --data ../shared/data/vitaminc/dev.jsonl
    --limit 500 --out runs/j1

    A three-way judge (llm3:, nli3:) on three-way gold labels (VitaminC's) also gets three-way balanced accuracy,
    per-class F1 and confusion counts. llm3c:<model> is llm3 with contextual calibration: its label prior, asked
    on content-free pairs ("N/A", "", "[MASK]"), divided out of every pair's probabilities; results.json records
    that prior under calibration.

    Example: vericite judge-eval --judge llm3c:qwen2.5-coder-1.5b --limit 500 --out runs/j3c

    llm3f:<fit file> is llm3 with per-label biases fitted on other labelled pairs (`vericite train llm3f`, on
    pairs of your own or a `vericite build caqa` dataset's split, never the shared VitaminC pairs); results.json
    records the biases under calibration, and a run that would judge pairs the biases were fitted on is refused
    (--task caqa refuses it, as every judge that is not four-class).

    Example: vericite judge-eval --judge llm3f:runs/llm3f-qwen.json --limit 500 --out runs/j3f

    --task alce-human measures the judge against ALCE's human citation labels: per sentence with citations (its
    cited passages as ALCE formats them, the sentence without markers) against the human sentence_recall_score,
    and per citation (that passage alone) against citation_precision_score, full-vs-rest and any-vs-none:
    balanced accuracy, Cohen's kappa, ROC AUC (graded judges), per dataset (asqa, eli5), each with a bootstrap
    95% CI, printed beside the same figures of the file's own automatic labels (ALCE's TRUE T5-11B). It writes
    results.json, items.jsonl and judgements.jsonl; --resume reuses the judgements already in --out.

    Example: vericite judge-eval --task alce-human --judge llm:qwen2.5-coder-1.5b --limit 2 --out runs/h1

    --task caqa measures a four-class judge on CAQA items (--data, a `vericite build caqa` file; --split test):
    per-class F1, micro_f1 (accuracy), macro_f1, micro_f1 per complexity, binary_micro_f1 (supportive vs the
    rest), the unparseable share (counted wrong), pairs/s and, where items carry human_label, Cohen's kappa of
    the dataset's labels against it; --predictions scores an evaluator's outputs made elsewhere instead. The
    judge's labels must be CAQA's four classes (llm4:, autois:<binary judge>, nli4:, caqa:<folder>): a binary or
    three-way judge (llm:, nli:, triple, llm3:, llm3c:, llm3f:, nli3:) is refused in one line. Each
    judgement is written to judgements.jsonl as it comes; --resume after an interruption keeps them.

    Example: vericite judge-eval --task caqa --judge llm4:qwen2.5-coder-1.5b --data datasets/caqa-bio.jsonl
    --split test --out runs/c1
    """
    from ..judges import load_judge
    from ..judges.meta import load_pairs, run_judge_eval
    from ..outputs import check_out_dir

    fmt = resolve_format(fmt, as_json)
    check_out_dir(out_dir)
    def pooled(judge: Any) -> Any:  # --ray: the judge's judging on Ray actors, for every task
        return on_ray(judge, str(judge_spec), {"threads": threads, "cache": cache, **server}, out_dir, resume)

    if task == "caqa":
        from ..models import model_options
        from .judge_eval_caqa import judge_eval_caqa

        opts = model_options(SimpleNamespace(threads=threads, cache=cache, **server))
        judge_eval_caqa(judge_spec, data, split, predictions, limit, batch_size, opts, out_dir, progress and not quiet, fmt, wrap=pooled, resume=resume)
        return
    if split or predictions:
        raise VericiteError("--split and --predictions work with --task caqa only")
    if judge_spec is None:
        raise VericiteError("give the judge to measure: --judge SPEC")
    if task == "alce-human":
        from ..models import model_options
        from .judge_eval_alce import judge_eval_alce

        opts = model_options(SimpleNamespace(threads=threads, cache=cache, **server))
        judge_eval_alce(judge_spec, data, limit, batch_size, opts, out_dir, progress and not quiet, fmt, resume, wrap=pooled)
        return
    if resume:
        raise VericiteError("--resume works with --task alce-human and caqa only (a pairs run is judged whole)")
    data_path = data if data is not None else default_pairs_data()
    # read the data before loading a model, so a bad path fails in a second, not after a model load
    pairs = load_pairs(data_path, limit)
    from ..models import model_options

    from .judge_eval_usage import UsageCounter, add_to_results

    counter = UsageCounter(model_options(SimpleNamespace(threads=threads, cache=cache, **server)))
    judge = load_judge(judge_spec, ctx=counter.ctx)
    fitted_on = getattr(judge, "overlap", None)  # llm3f: never measured on the pairs its biases were fitted on
    if callable(fitted_on):
        from ..paths import file_sha256

        why = fitted_on(file_sha256(pairs.path), 0, len(pairs))
        if why:
            raise VericiteError(f"{why}: measure it on other pairs (a smaller --limit, or fit with --skip past them)")
    judge = pooled(judge)
    from ..protocols import Judge

    if not isinstance(judge, Judge):
        raise VericiteError(f"{judge_spec!r} did not build a judge")
    check_judge_fits(judge, pairs.pairs, pairs.path)

    from ..progress import progress_bar

    with progress_bar(len(pairs), f"judging with {judge.id}", enabled=progress and not quiet) as advance:
        figures = run_judge_eval(judge, data_path, out_dir, limit, batch_size, progress=advance, pairs=pairs)
    used = counter.fields(judge)
    add_to_results(out_dir, used)
    print_judge_eval({**figures, **used}, out_dir, fmt)


def unparseable_why(figures: dict[str, Any]) -> str | None:
    """Why pairs were unparseable, when the judge said (data that does not fit it)."""
    fit = figures.get("data_fit")
    if figures.get("unparseable") and fit and fit.get("unfit"):
        return f"unparseable {figures['unparseable']:.3f}: {fit['unfit']} of {fit['pairs']} pairs cannot be judged: {fit['reason']}"
    return None


def print_judge_eval(figures: dict[str, Any], out_dir: Path, fmt: str) -> None:
    from ..judges.meta_figures import judge_eval_rows

    rows = judge_eval_rows(figures)
    three = figures.get("three_way")
    wrote = f"wrote {Path(out_dir) / 'results.json'} and {Path(out_dir) / 'judgements.jsonl'}"
    from .judge_eval_usage import usage_fields, usage_line

    notes = [f"skipped line {bad['line']}: {printable(bad['reason'])}" for bad in figures["bad_line_examples"]]
    if "judge_usage" in figures:
        notes.append(usage_line(figures))
    if fmt == "json":
        echo_json(
            {
                "kind": "judge-eval",
                "results": str(Path(out_dir) / "results.json"),
                **{k: figures.get(k) for k in ("judge", "judge_kind", "judge_version", "model", "data", "n")},
                "metrics": rows_json(rows),
                "confusion": figures.get("confusion"),
                "data_fit": figures.get("data_fit"),
                "bad_lines": figures.get("bad_lines"),
                **usage_fields(figures),
                **({"three_way_confusion": three["confusion"]} if three else {}),
            }
        )
        for line in notes + [wrote]:
            click.echo(line, err=True)
        return
    why = unparseable_why(figures)
    if fmt == "markdown":
        click.echo(f"judge `{md_cell(figures['judge'], code=True)}` on {figures['n']} pairs of `{md_cell(figures.get('data'), code=True)}`\n")
        click.echo(markdown_table(rows) + "\n")
        pc = figures["per_class_f1"]
        click.echo(f"- gold labels: {', '.join(f'{k} {v}' for k, v in pc['label_counts'].items())}; bad lines skipped: {figures['bad_lines']}")
        if why:
            click.echo(f"- {md_cell(why)}")
        if three:
            click.echo("\n" + three_way_confusion_markdown(three))
        for line in notes + [wrote]:
            click.echo(line, err=True)
        return

    from rich.console import Console
    from rich.table import Table

    pc = figures["per_class_f1"]
    ci = {r["metric"]: ci_text(r["ci"]) for r in rows}
    table = Table(title=f"judge {figures['judge']} on {figures['n']} pairs", show_header=True)
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("95% CI", justify="right")
    table_rows = [
        ("balanced accuracy", _fmt(figures["balanced_accuracy"]), ci["balanced_accuracy"]),
        ("ROC AUC", _fmt(figures["roc_auc"]), ci["roc_auc"]),
        ("F1 supports", _fmt(pc["supports"]["f1"]), ci["f1_supports"]),
        ("F1 not_supports", _fmt(pc["not_supports"]["f1"]), ci["f1_not_supports"]),
        ("unparseable", _fmt(figures["unparseable"]), ci["unparseable"]),
        ("pairs/s", _fmt(figures["pairs_per_second"], 2), ""),
        ("threshold", _fmt(figures["threshold"], 2), ""),
        ("gold labels", ", ".join(f"{k} {v}" for k, v in pc["label_counts"].items()), ""),
        ("bad lines skipped", str(figures["bad_lines"]), ""),
    ]
    if three:  # a three-way judge on three-way gold labels: its own figures (argmax label, not the threshold)
        table_rows[5:5] = [(r["metric"].replace("_3way", "").replace("_", " ") + " (3-way)", _fmt(r["value"]), ci_text(r["ci"]))
                           for r in rows if r["metric"].endswith("_3way")]
    for row in table_rows:
        table.add_row(*row)
    console = Console(width=100)
    console.print(table)
    if three:
        console.print(three_way_confusion_table(three))
    if figures["roc_auc"] is None:
        console.print(f"ROC AUC {figures['roc_auc_note']}", markup=False)
    if why:
        console.print(why, markup=False, highlight=False)
    for line in notes + [wrote]:
        console.print(line, markup=False, highlight=False)


def _three_cells(three: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the three-way confusion counts: gold class, then what the judge said, each count with
    its bootstrap 95% CI."""
    said = [*three["labels"], "abstained"]
    cis = (three.get("ci") or {}).get("confusion") or {}
    body = []
    for g in three["labels"]:
        cells = []
        for p in said:
            ci = (cis.get(g) or {}).get(p)
            cells.append(f"{three['confusion'][g][p]}" + (f" [{ci[0]:g}, {ci[1]:g}]" if ci else ""))
        body.append([g, *cells])
    return ["gold / said", *said], body


def three_way_confusion_markdown(three: dict[str, Any]) -> str:
    head, body = _three_cells(three)
    lines = ["three-way confusion counts (95% CI):", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in body])


def three_way_confusion_table(three: dict[str, Any]) -> Any:
    from rich.table import Table

    head, body = _three_cells(three)
    table = Table(title="three-way confusion counts (95% CI)", show_header=True)
    for h in head:
        table.add_column(h, justify="left" if h == head[0] else "right")
    for row in body:
        table.add_row(*row)
    return table
