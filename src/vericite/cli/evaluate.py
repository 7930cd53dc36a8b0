"""``vericite evaluate``: score answers produced anywhere (JSONL in), write results.json + samples.jsonl; print
what results.json holds (the metrics grouped by family, the judges, the counts)."""

from __future__ import annotations

import sys
import textwrap
from typing import Any

import click
from pydantic import ValidationError

from ..errors import VericiteError, validation_message
from .output import format_options, resolve_format, status_words
from .options import ray_options, ray_settings, server_options


def summary_lines(results: dict[str, Any]) -> list[str]:
    """The lines under the metric table: each judge and how far it can be trusted, then the counts."""
    lines = []
    for purpose, j in results.get("judges", {}).items():
        from ..judges.trust import trust_words

        trust = trust_words(j.get("measured"))
        lines.append(f"judge for {purpose}: {j['id']} — {trust}")
    alce = (results.get("evaluation") or {}).get("alce") or {}
    if alce.get("reader"):
        failed = alce.get("reader_failures", 0)
        lines.append(f"reader of final answers (answer_em, answer_f1): {alce['reader']} ({alce.get('reader_prompt')}), {failed} failed" + (" (their EM and F1 not computed: scores.alce.not_computed in samples.jsonl)" if failed else ""))
    c = results.get("counts", {})
    line = (
        f"samples {c.get('samples', 0)}, bad lines {c.get('bad_lines', 0)}, empty outputs {c.get('unparseable_outputs', 0)}, "
        f"failed calls {c.get('failed_calls', 0)}, unparseable judgements {c.get('unparseable_judgements', 0)}"
    )
    if "failed_judgements" in c:  # a task whose judgements can fail (a pair missing from a table judge)
        line += f", failed judgements {c['failed_judgements']}"
    if "citation_status" in c:  # answers with citations: their parse statuses
        line += f"; citations: {status_words(c['citation_status']) or 'none'}"
    lines.append(line)
    return lines


def results_json(results: dict[str, Any], out: str | None = None, gate: dict[str, Any] | None = None) -> dict[str, Any]:
    """What ``--format json`` prints: the metrics (value, ci, n, judge, higher_is_better, reason), the judges,
    the counts, where results.json is, and with a gate (--fail-under, --max-bad-lines) whether it passed."""
    from .output import metric_rows, rows_json

    doc = {
        "kind": results.get("kind"),
        "results": f"{out}/results.json" if out else None,
        "metrics": rows_json(metric_rows(results.get("metrics", {}))),
        "judges": results.get("judges", {}),
        "counts": results.get("counts", {}),
    }
    if gate is not None:
        doc["gate"] = gate
    return doc


def print_results(results: dict[str, Any], out: str | None = None, fmt: str = "table", gate: dict[str, Any] | None = None) -> None:
    """The metric table on stdout as ``fmt`` says (cli/output.py): table, json or markdown."""
    from .output import echo_json, markdown_table, md_cell, metric_rows

    if fmt == "json":
        echo_json(results_json(results, out, gate))
        return
    if fmt == "markdown":
        click.echo(markdown_table(metric_rows(results.get("metrics", {}))) + "\n")
        for line in summary_lines(results):
            click.echo(f"- {md_cell(line)}")
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from ..report.presentation import families

    console = Console()
    metrics = results.get("metrics") or {}
    table = Table(title="metrics" + (f" — {out}" if out else ""), show_lines=False)
    for col, just in (("metric", "left"), ("value", "right"), ("95% CI", "right"), ("n", "right")):
        table.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
    table.add_column("judge / reason", overflow="fold")
    width = max([len("metric"), *map(len, metrics)])  # a family's title wraps within the metric names' width
    for i, (family, names, _) in enumerate(families(metrics)):  # as the report groups them
        if i:
            table.add_section()
        table.add_row(f"[bold]{escape(textwrap.fill(family, width))}[/bold]", "", "", "", "")
        for name in names:
            m = metrics[name]
            if m.get("value") is None:
                table.add_row(name, "[dim]—[/dim]", "", str(m.get("n", 0)), f"[dim]not computed: {escape(str(m.get('reason')))}[/dim]")
                continue
            ci = m.get("ci") or [None, None]
            ci_s = f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci and ci[0] is not None else ""
            table.add_row(name, f"{m['value']:.3f}", escape(ci_s), str(m.get("n", "")), escape(m.get("judge") or ""))
    console.print(table)
    for line in summary_lines(results):
        console.print(line, markup=False, highlight=False)


def input_warnings(results: dict[str, Any], out: str) -> None:
    """One line on stderr for each kind of input trouble: lines not evaluated, bytes that are not UTF-8."""
    c = results.get("counts", {})
    if c.get("bad_lines"):
        dup = f" ({c['duplicate_ids']} duplicate ids)" if c.get("duplicate_ids") else ""
        click.secho(f"{c['bad_lines']} input lines could not be evaluated{dup}: see {out}/bad_lines.jsonl", fg="yellow", err=True)
    if c.get("invalid_utf8_lines"):
        lines = sorted({w["line"] for w in results.get("warnings", []) if "UTF-8" in str(w.get("reason"))})
        shown = ", ".join(map(str, lines[:10])) + (", …" if len(lines) > 10 or c["invalid_utf8_lines"] > len(lines) else "")
        click.secho(
            f"warning: {c['invalid_utf8_lines']} input lines hold bytes that are not UTF-8 "
            f"({c.get('invalid_utf8_bytes', 0)} bytes replaced by U+FFFD; lines {shown})",
            fg="yellow",
            err=True,
        )


#: how the settings only some tasks read are spelled here (``evaluate.pipeline.TASK_SETTINGS``)
FLAGS = {"evidence_index": "--index", "lm": "--lm", "relevance_model": "--relevance-model", "geval_model": "--geval-model"}


@click.command()
@click.option("--input", "-i", "input_path", required=True, help="JSONL of answers, a run folder (its samples.jsonl), or for alce an ALCE result file ({args, data})")
@click.option("--task", "-t", help="what the answers are read and scored as: a task's input fields, citation format and metrics (kalma; alce, alce-asqa|qampari|eli5|short; conner, with options conner:aggregation=min|mean|max,sentence_context=paragraph|sentence,shuffles=K,unrelated=U,evidence_k=N,gamma=a/b/c/d,coherence_model=<pair scorer>; see docs/extending.md) [default: kalma]")
@click.option("--out", "-o", required=True, help="folder for results.json, samples.jsonl, bad_lines.jsonl")
@click.option("--judge", "-j", help="the task's judge: triple, llm:<model>[@<prompt number>], nli:<model dir or hub id>, table:<file.jsonl>, none; conner: llm3:<model>, llm3c:<model> (llm3 calibrated on content-free inputs), llm3f:<fit file> (llm3 with biases fitted by `vericite train llm3f`), nli3:<model>, fake-3way [default: triple; alce, conner: none]")
@click.option(
    "--attribution-judge",
    "attribution_judge",
    metavar="SPEC",
    help="kalma, alce: a four-class judge (llm4:<model>, nli4:<model>, autois:<binary judge>, caqa:<folder>) that classifies "
    "every (sentence, citation) pair as supportive, insufficient, contradictory or irrelevant: the attribution_* shares "
    "per answer and per run (metrics.md §3) [default: none]",
)
@click.option(
    "--reader",
    metavar="llm:<model>",
    help="alce (short-answer sets: NQ, WebQuestions, 2WikiMultihopQA): a model that reads each output's final short "
    "answer (prompt alce-final-answer@1, greedy, first line), which answer_em and answer_f1 then score instead of the "
    "whole output, as VTG does; answer_hit stays on the whole output [default: none]",
)
@click.option("--metrics", "metric_names", metavar="A,B,C", help="compute only these metrics of the task (e.g. str_em,str_hit,output_length,rouge_lsum)")
@click.option("--index", "evidence_index", help="conner: an index folder (vericite docs index); each knowledge sentence's evidence is its top passages when the line has none (another task does not read it: one warning line, and it is only recorded)")
@click.option("--lm", help="conner: the causal LM of coherence, informativeness, helpfulness and validity's reader [default: the llm3 judge's model]")
@click.option("--relevance-model", "relevance_model", help="conner: the relevance scorer (ms-marco, hf:<model>, fake, none), loaded before any answer is judged (one that cannot be loaded fails at once) [default: ms-marco]")
@click.option("--geval-model", help="LLM for G-Eval text quality (e.g. qwen2.5-coder-1.5b); without it G-Eval is not computed")
@server_options
@click.option("--hypothesis", type=click.Choice(["property", "entity"]), help='judge claim: "{property}: {value}" (paper) or "{entity} {property}: {value}"')
@click.option("--match", type=click.Choice(["exact", "normalised"]), help="citation correctness matching [default: exact]")
@click.option("--resamples", type=int, help="bootstrap resamples for the 95% CIs [default: 1000]")
@click.option("--seed", type=int, help="bootstrap seed [default: 0]")
@click.option("--threads", type=int, help="CPU threads for local models")
@click.option("--no-cache", "no_cache", is_flag=True, help="do not read or write the call cache")
@click.option("--fail-under", "fail_under", multiple=True, metavar="METRIC=VALUE", help="exit 1 when METRIC is below VALUE (or not computed); repeatable")
@click.option(
    "--max-bad-lines",
    "max_bad_lines",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    metavar="FRACTION",
    help="exit 1 when more than FRACTION of the input lines could not be evaluated (not JSON, a field missing, a "
    "duplicate id); applies whenever --fail-under or this option is given [default with --fail-under: 0, any bad "
    "line fails]; without either, bad lines are reported and the exit code stays 0",
)
@ray_options
@click.option(
    "--resume",
    is_flag=True,
    help="continue an interrupted evaluate into the same --out: the answers it scored (OUT/.evaluate-answers.jsonl) are "
    "not judged again, when the task (as resolved over the input: alce over ASQA answers is alce-asqa) and its options, judges "
    "and metric options, and the documents of --index (its corpus's sha256 and passages: an index rebuilt in place is another "
    "evaluation), are the same (else one line says what differs); the input may have grown since (generate --resume): "
    "the answers added are scored, those scored are kept when their records are unchanged, and an answer scored that changed "
    "or is no longer in the input is refused in one line naming it; a checkpoint that cannot be read is one line "
    "(its torn last line, from a crash, is dropped with a note); the same with --ray, whose actors score the answers and send back their lines",
)
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
@format_options
def evaluate(
    input_path: str,
    out: str,
    no_cache: bool,
    fail_under: tuple[str, ...],
    max_bad_lines: float | None,
    resume: bool,
    quiet: bool,
    fmt: str | None,
    as_json: bool,
    **opts: Any,
) -> None:
    """Score attributed answers with a task's metric suite (the default task, kalma: citation correctness,
    precision/recall/F1, alignment, [NA], G-Eval; alce: ALCE's citation recall/precision and correctness metrics;
    both, with --attribution-judge: the share of (sentence, citation) pairs in each of CAQA's four classes;
    conner: CONNER's six measures of the knowledge produced for a query, from lines {"id", "query", "knowledge",
    "answer"?, "evidence"?, "topic"?} or a conner-knowledge run).

    The metric table goes to stdout (--format table|json|markdown); progress, warnings and gate failures go to
    stderr."""
    from ..evaluate import DEFAULT_TASK, EvaluateConfig, check_bad_lines, check_thresholds, load_task, parse_thresholds
    from ..runs.results import evaluate_file

    fmt = resolve_format(fmt, as_json)
    ray, workers = ray_settings(opts)
    task = load_task(opts.get("task") or DEFAULT_TASK)
    thresholds = parse_thresholds(fail_under, task)
    names = opts.pop("metric_names", None)
    if names is not None:
        opts["metrics"] = [n.strip() for n in names.split(",") if n.strip()]
        if not opts["metrics"]:  # an empty shell variable must not silently mean "all of them"
            raise VericiteError(f"--metrics {names!r} names no metric: give A,B,C among task {task.name}'s ({', '.join(task.metric_names())}), or leave it out for all")
    if opts.get("judge") is None and getattr(task, "default_judge", None) is not None:
        opts["judge"] = task.default_judge
    try:
        cfg = EvaluateConfig(**{k: v for k, v in {**opts, "cache": False if no_cache else None}.items() if v is not None})
    except ValidationError as e:
        raise VericiteError(f"invalid {validation_message(e)}") from None
    from ..evaluate.pipeline import ignored_note, ignored_settings

    ignored = ignored_note(ignored_settings(cfg, task), task, FLAGS)
    if ignored:  # not an error: a setting this task does not read (--index for kalma) is said, not silently dropped
        click.secho(ignored, fg="yellow", err=True)
    results = evaluate_file(input_path, out, cfg, progress=not quiet, ray=ray, workers=workers, resume=resume)
    failures = check_thresholds(results, thresholds)
    gated = bool(fail_under) or max_bad_lines is not None
    if gated:  # a gate: unreadable input must not pass it unnoticed
        bad = check_bad_lines(results, 0.0 if max_bad_lines is None else max_bad_lines)
        failures += [bad] if bad else []
    print_results(results, out, fmt, {"passed": not failures, "failures": failures} if gated else None)
    input_warnings(results, out)
    failed = int(results.get("counts", {}).get("failed_judgements", 0) or 0)
    if failed:  # a judgement that could not be made (a pair missing from a table judge, a prompt past a model's context) is never a default verdict
        failures.append(f"{failed} judgements failed (see the judgements with status 'failed' in {out}/samples.jsonl); the metrics that needed them left them out")
    if failures:
        for f in failures:
            click.secho(f"FAIL {f}", fg="red", err=True)
        sys.exit(1)
