"""``vericite build``: make KaLMA-style datasets with minimum knowledge sets, describe them, rate them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import click

from .options import server_options


def builder_run_options(verbose_help: str) -> Callable[[Any], Any]:
    """What every builder command takes besides its own options: --seed, --threads, the model-server options,
    --no-cache, --resume, --verbose (``verbose_help`` says what it prints) and --quiet."""

    def wrap(f: Any) -> Any:
        for option in reversed(
            [
                click.option("--seed", type=int, default=0, show_default=True),
                click.option("--threads", type=int, help="CPU threads for llama.cpp [default: $VERICITE_THREADS or 2]"),
                server_options,
                click.option("--no-cache", "no_cache", is_flag=True, help="do not read or write the call cache"),
                click.option("--resume", is_flag=True, help="continue an interrupted build"),
                click.option("--verbose", "-v", is_flag=True, help=verbose_help),
                click.option("--quiet", "-q", is_flag=True, help="no progress bar"),
            ]
        ):
            f = option(f)
        return f

    return wrap


def run_builder(name: str, opts: dict[str, Any], *, no_cache: bool, resume: bool, verbose: bool, quiet: bool, **extra: Any) -> tuple[str, dict[str, Any]]:
    """Build with the registered builder ``name`` from a command's options (``opts``: its own, ``--out`` and the
    model-server ones of :func:`builder_run_options`; ``extra``: fields the command shaped itself); its ``out`` and
    the build log. An option the builder rejects is a user's error, said as the flag."""
    from ..errors import InvalidOptionsError, VericiteError, validation_message
    from ..printable import printable
    from ..registry import BuildContext, create

    out = opts.pop("out")
    ctx = BuildContext(threads=opts.pop("threads"), cache=not no_cache, base_url=opts.pop("base_url"),
                       timeout=opts.pop("timeout"), retries=opts.pop("request_retries"))  # fmt: skip
    fields: dict[str, Any] = {k: v for k, v in opts.items() if v is not None} | extra
    echo = (lambda m: click.echo(printable(m), err=True)) if verbose else None
    try:
        builder = create("builders", name, ctx, progress=not quiet, echo=echo, **fields)
    except InvalidOptionsError as e:
        raise VericiteError(f"invalid {validation_message(e.error, as_flag=True)}") from None
    return out, builder.build(out, resume=resume)


@click.group()
def build() -> None:
    """Build attribution benchmarks from a knowledge graph (KaLMA's evolutionary question generation)."""


@build.command("biokalma")
@click.option("--pool", help="graph file to build from: BioKaLMA question graphs (.json), .jsonl, .nt or .ttl")
@click.option("--store", help="or an on-disk graph store (see `vericite kg load`)")
@click.option("--out", "-o", required=True, help="dataset file to write (.jsonl); NAME.md, NAME.log.json, NAME.skipped.jsonl beside it")
@click.option("--n", "n", type=int, default=100, show_default=True, help="entries to build")
@click.option("--iterations", type=int, default=5, show_default=True, help="rounds of paragraph growth (round 1 = the first sentence)")
@click.option("--alpha", type=float, default=0.5, show_default=True, help="weight of specificity against coherence (Eq. 1)")
@click.option("--model", "-m", default="qwen2.5-coder-1.5b", show_default=True, help="model that writes sentences and questions")
@click.option("--scorer", help="model whose log-probabilities give the perplexities [default: --model]")
@click.option("--scoring", type=click.Choice(["auto", "prefix", "batch", "single"]), default="auto", show_default=True, help="how candidates are scored: shared-prefix, one batched call, or one call each")
@click.option("--relation", "relations", multiple=True, help="person-to-person relation to pair people by (repeatable) [default: father, mother, child, spouse, sibling, ...]")
@click.option("--count-scope", type=click.Choice(["graph", "pool"]), default="graph", show_default=True, help="count Count_r and N over the whole graph or the pair's pool")
@click.option("--min-gold", type=int, default=3, show_default=True, help="fewest triples a minimum knowledge set may have")
@builder_run_options("print each entry and each skip as it happens")
def biokalma(relations: tuple[str, ...], no_cache: bool, resume: bool, verbose: bool, quiet: bool, **opts: Any) -> None:
    """Evolutionary question generation with minimum knowledge sets (KaLMA App. A)."""
    from ..bench.builders.biokalma.build import side_paths

    extra = {"relations": list(relations)} if relations else {}
    out, log = run_builder("biokalma", opts, no_cache=no_cache, resume=resume, verbose=verbose, quiet=quiet, **extra)
    paths = side_paths(out)
    click.echo(f"{log['entries']} entries in {out} ({log['status']}); {log['pairs_tried']} pairs tried of {log['pair_selection']['pairs']} eligible")
    if log.get("skipped"):
        click.echo("skipped pairs: " + ", ".join(f"{k} {v}" for k, v in log["skipped"].items()))
    if log.get("events"):
        click.echo("events: " + ", ".join(f"{k} {v}" for k, v in log["events"].items()))
    dropped = log["pair_selection"].get("dropped") or {}
    if dropped:
        click.echo("pair selection dropped: " + ", ".join(f"{k} {v}" for k, v in dropped.items()))
    t = log.get("timing", {})
    if t.get("median_total_s") is not None:
        click.echo(
            f"median per entry {t['median_total_s']} s: first sentence {t['median_first_s']}, scoring {t['median_scoring_s']},"
            f" extension {t['median_extension_s']}, questions {t['median_questions_s']}"
        )
    click.echo(f"card: {paths['card']}   log: {paths['log']}")


@build.command("caqa")
@click.option("--store", help="on-disk graph store to build from (see `vericite kg load`)")
@click.option("--pool", help="or a graph file: BioKaLMA question graphs (.json), .jsonl, .nt or .ttl")
@click.option("--out", "-o", required=True, help="dataset file to write (.jsonl); NAME.md, NAME.log.json, NAME.skipped.jsonl beside it")
@click.option("--n", "n", type=int, default=2000, show_default=True, help="items to build (a query's items are written together, so up to 3 more)")
@click.option("--verbalise", type=click.Choice(["llm", "template"]), default="llm", show_default=True, help="who writes questions, answers and citations: --model with the paper's prompts, or deterministic templates")
@click.option("--model", "-m", default="qwen2.5-coder-1.5b", show_default=True, help="model that writes the text (--verbalise llm)")
@click.option("--max-tokens", type=int, default=96, show_default=True, help="most tokens of one model reply")
@click.option("--provenance", help="where the graph's facts come from, said in the card (e.g. \"Wikidata, via BioKaLMA's released graphs\")")
@click.option("--test-share", type=float, default=0.15, show_default=True, help="share of queries in the test split")
@builder_run_options("print each query as it is built or skipped")
def caqa(no_cache: bool, resume: bool, verbose: bool, quiet: bool, **opts: Any) -> None:
    """Four-class attribution items (supportive, insufficient, contradictory, irrelevant) from logical queries
    over a graph (CAQA §4, Table 3, App. A)."""
    from ..bench.builders.caqa.build import side_paths

    out, log = run_builder("caqa", opts, no_cache=no_cache, resume=resume, verbose=verbose, quiet=quiet)
    paths = side_paths(out)
    c = log["counts"]
    click.echo(f"{log['items']} items from {log['queries']} queries in {out} ({log['status']}; {log['verbalisation']['mode']} verbalisation)")
    click.echo("classes: " + ", ".join(f"{k} {v['total']}" for k, v in c["classes"].items()))
    click.echo("complexity: " + ", ".join(f"{k} {v['total']}" for k, v in c["complexity"].items()))
    click.echo(f"splits: train {c['splits'].get('train', 0)}, test {c['splits'].get('test', 0)} (by query)")
    g = log["graph"]["values"]
    click.echo("values resolved to entities: " + ", ".join(f"{k} {v}" for k, v in g.items()))
    if log.get("query_drops"):
        click.echo("queries dropped: " + ", ".join(f"{k} {v}" for k, v in log["query_drops"].items()))
    if log.get("item_drops"):
        click.echo("items dropped: " + ", ".join(f"{k} {v}" for k, v in log["item_drops"].items()))
    t = log["timing"]
    click.echo(f"{t['items_per_minute']} items per minute; median SPARQL grounding {t['median_grounding_ms']} ms a query")
    click.echo(f"card: {paths['card']}   log: {paths['log']}")


def _is_caqa(dataset: str) -> bool:
    """Whether a dataset file holds CAQA items (its first record has a label and a complexity)."""
    from ..jsonl import read_appended

    for r in read_appended(dataset):
        return isinstance(r, dict) and "label" in r and "complexity" in r
    return False


@build.command("stats")
@click.argument("dataset", type=click.Path(dir_okay=False))
@click.option("--pool", help="graph file to check every minimum-set triple against")
@click.option("--store", help="or a graph store to check against")
@click.option("--json", "as_json", is_flag=True, help="print the statistics as JSON")
@click.option("--card", "write_card_too", is_flag=True, help="(re)write the dataset card NAME.md from the file and NAME.log.json")
def stats(dataset: str, pool: str | None, store: str | None, as_json: bool, write_card_too: bool) -> None:
    """Statistics of a built dataset (KaLMA §2.3; a CAQA file: classes x complexity per split, Table 4) and its
    quality checks."""
    import json

    from ..errors import DataError

    if not Path(dataset).is_file():
        raise DataError(f"dataset file not found: {dataset}")
    if _is_caqa(dataset):
        _caqa_stats(dataset, as_json, write_card_too)
        return

    from ..bench.builders.biokalma.build import side_paths
    from ..bench.builders.biokalma.card import write_card

    from ..bench.builders.biokalma.card import check_entries, dataset_stats, format_stats, read_entries
    from ..bench.builders.biokalma.graph import GraphPool

    entries = read_entries(dataset)
    graph = GraphPool.from_file(pool) if pool else GraphPool.from_store(store) if store else None
    try:
        s = dataset_stats(entries)
        chk = check_entries(entries, graph)
    finally:
        if graph is not None:
            graph.close()
    if write_card_too:
        _card(side_paths(dataset), write_card, entries)
    if as_json:
        click.echo(json.dumps({"stats": s, "checks": chk}, indent=2, ensure_ascii=False))
        return
    for line in format_stats(s):
        click.echo(line)
    where = " (minimum sets checked against the graph)" if chk["checked_against_graph"] else ""
    back = chk["warnings"]["first_sentence_reads_relation_backwards"]
    if back:
        click.echo(f"warning: {len(back)} first sentences read the relation backwards (pattern check): {', '.join(back[:10])}")
    if chk["ok"]:
        # "all pass" only when nothing was flagged: a warning printed above must not be followed by it
        click.echo(f"checks: no problems, {len(back)} warning{'s' if len(back) != 1 else ''} (see above){where}" if back else f"checks: all pass{where}")
    else:
        click.echo(f"checks: {chk['n_problems']} problems{where}")
        for p in chk["problems"][:20]:
            click.echo(f"  {p}")
        raise SystemExit(1)


def _card(paths: dict, write_card: Any, items: list) -> None:
    """Write a built dataset's card beside it (from its build log, when it has one) and say where, on stderr."""
    import json

    try:
        log = json.loads(paths["log"].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        log = {}
    click.echo(f"card: {write_card(paths['card'], items, log)}", err=True)


def _caqa_stats(dataset: str, as_json: bool, write_card_too: bool) -> None:
    import json

    from ..bench.builders.caqa.build import counts, side_paths
    from ..bench.builders.caqa.card import check_items, format_stats, write_card
    from ..jsonl import read_appended

    items = list(read_appended(dataset))
    chk = check_items(items)
    if write_card_too:
        _card(side_paths(dataset), write_card, items)
    if as_json:
        click.echo(json.dumps({"stats": counts(items), "checks": chk}, indent=2, ensure_ascii=False))
        return
    for line in format_stats(items):
        click.echo(line)
    if chk["classes_missing"]:
        click.echo(f"warning: no item of class {', '.join(chk['classes_missing'])}")
    if chk["ok"]:
        click.echo("checks: all pass (answers where each class needs them, no question in both splits)")
    else:
        click.echo(f"checks: {chk['n_problems']} problems")
        for p in chk["problems"][:20]:
            click.echo(f"  {p}")
        raise SystemExit(1)


@build.command("export-annotation")
@click.argument("dataset", type=click.Path(dir_okay=False))
@click.option("--sample", type=int, default=50, show_default=True, help="entries to sample (each gives a general and a specific row)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", "-o", required=True, help="CSV file to write")
def export_annotation_cmd(dataset: str, sample: int, seed: int, out: str) -> None:
    """Write a random sample for human rating on KaLMA's four criteria (Table 2)."""
    from ..bench.builders.biokalma.annotation import export_annotation
    from ..bench.builders.biokalma.card import read_entries
    from ..errors import VericiteError
    from ..outputs import check_out_file

    if sample < 1:
        raise VericiteError("--sample must be at least 1")
    check_out_file(out)
    n = export_annotation(read_entries(dataset), out, sample=sample, seed=seed)
    click.echo(f"{n} rows ({n // 2} entries x general/specific) in {out}")
    click.echo("fill in: authenticity 0/1, relevance 0/1, naturalness 1-5, significance 1-5 (blank = not rated)")


@build.command("import-annotation")
@click.argument("csv_file", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="print the means as JSON")
def import_annotation_cmd(csv_file: str, as_json: bool) -> None:
    """Validate rated annotations and print KaLMA's Table 2 (means per criterion and phrasing)."""
    import json

    from ..bench.builders.biokalma.annotation import import_annotation, table2

    result = import_annotation(csv_file)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    for line in table2(result):
        click.echo(line)
    click.echo(f"{result['rows']} rows; {result['unrated']} cells not rated")
