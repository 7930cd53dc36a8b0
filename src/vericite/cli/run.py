"""``vericite run CONFIG``: generate + evaluate (and an experiment's levels) from one YAML file."""

from __future__ import annotations

from typing import Any

import click

from .options import server_options
from .output import echo_json, format_options, hint, markdown_grid, md_cell, metric_rows, resolve_format, rows_json


@click.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--model", "-m", help="override the config's model")
@click.option("--limit", type=int, help="answer only the first N questions")
@click.option("--out", "-o", help="run folder [default: runs/<config name>]")
@click.option(
    "--resume",
    is_flag=True,
    help="continue an interrupted run: nothing generated is generated again (a level's generation only with its "
    "settings and method as its manifest.json records them, else one line says what differs), a level whose evaluation finished with "
    "the same evaluation settings is read back, a level cut while it was evaluated, or whose answers grew (a larger --limit), "
    "goes on from its checkpoint (level-<x>/eval/.evaluate-answers.jsonl), a level whose evaluation settings or answers scored "
    "changed is evaluated again",
)
@click.option("--judge", "-j", help="override the config's judge, and a judge of the generation that names the same (VTG configs' verifier_judge, rerank_judge)")
@click.option("--threads", type=int, help="CPU threads for llama.cpp")
@click.option("--max-failures", help="questions that may go unanswered (their model call, or a plugin's retriever, graph ..., failed) before the run fails, per level: a count or a percentage such as 10% [default: the config's, else 0]")
@server_options
@click.option("--no-cache", "no_cache", is_flag=True, help="do not read or write the call cache")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
@format_options
def run(config: str, out: str | None, resume: bool, no_cache: bool, quiet: bool, fmt: str | None, as_json: bool, **overrides: Any) -> None:
    """Generate answers and evaluate them as a YAML config says (see configs/).

    The metric table (and an experiment's levels) goes to stdout (--format table|json|markdown); progress and
    warnings go to stderr."""
    from ..runs.runner import load_run_config, run_config
    from .evaluate import print_results, results_json

    fmt = resolve_format(fmt, as_json)
    cfg = load_run_config(config, {**overrides, "cache": False if no_cache else None})
    out = out or f"runs/{cfg.name}"
    results = run_config(cfg, out, resume=resume, progress=not quiet)
    experiments = results.get("experiments") or {}
    if fmt == "json":
        doc = results_json(results, out)
        doc["experiments"] = {
            name: {"x": exp["x"], "rows": [{"level": row["level"], "n": row.get("n"), "metrics": rows_json(metric_rows(row["metrics"]))} for row in exp["rows"]]}
            for name, exp in experiments.items()
        }
        echo_json(doc)
    else:
        print_results(results, out, fmt)
        for name, exp in experiments.items():
            print_levels(name, exp, fmt)
    hint(f"\nresults: {out}/results.json  (HTML: vericite report {out})", fmt)


def level_columns(exp: dict[str, Any]) -> list[tuple[str, str]]:
    """(metric, column head) of an experiment's level table, from results.json: the metrics its curves draw, in
    the order of the metric entries (all of them when it declares no curve). A head is the metric's short name
    when that is one word, else its name, in lower case (the columns are 12 wide)."""
    entries: dict[str, Any] = next((row["metrics"] for row in exp.get("rows") or [] if row.get("metrics")), {})
    drawn = {n for c in exp.get("curves") or [] for n in c.get("metrics") or []}
    names = [n for n in entries if n in drawn] or list(entries)

    def head(name: str) -> str:
        short = str((entries.get(name) or {}).get("short_name") or name)
        return (short if " " not in short else name).lower()

    return [(n, head(n)) for n in names]


def print_levels(name: str, exp: dict[str, Any], fmt: str) -> None:
    """An experiment's levels, one row each, as text or a GitHub table."""
    columns = level_columns(exp)
    head = ["level", *(h for _, h in columns)]
    body = [[row["level"], *("—" if v is None else f"{v:.3f}" for v in ((row["metrics"] or {}).get(k, {}).get("value") for k, _ in columns))] for row in exp["rows"]]
    if fmt == "markdown":
        click.echo(f"\n**{md_cell(name)}** ({md_cell(exp['x'])}):\n")
        click.echo(markdown_grid(head, body))
        return
    click.echo(f"\n{name} ({exp['x']}):")
    click.echo("level  " + "  ".join(h.rjust(12) for h in head[1:]))
    for row in body:
        click.echo(f"{str(row[0]):>5}  " + "  ".join(str(v).rjust(12) for v in row[1:]))
