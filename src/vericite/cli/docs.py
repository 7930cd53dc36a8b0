"""``vericite docs``: index a corpus of documents, search it.

    vericite docs index FILE|DATASET --index DIR [--retriever bm25|dense|hybrid] [--passage-words 100]
    vericite docs search "QUERY" --index DIR [-k 5] [--retriever bm25|dense|hybrid] [--rerank] [--json]

FILE is JSONL ``{id, title, text}``, DPR's TSV, an ALCE file (its documents) or CONNER's NQ test set; DATASET a
registered dataset that has a corpus (``nq-500``). Passage text from the corpus is printed as text, never as
rich markup.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import VericiteError
from ..printable import printable

RETRIEVER_CHOICE = click.Choice(["bm25", "dense", "hybrid"])
#: how many bad corpus items the command lists on stderr (all of them are in DIR/bad_items.jsonl)
SHOW_BAD = 5


class NothingFound(VericiteError):
    """A search that found nothing: not a failure of the tool, but scripts should see it (exit 1, like grep)."""

    exit_code = 1


def _index_option(f: Any) -> Any:
    return click.option("--index", "index_dir", required=True, type=click.Path(path_type=Path), help="Index folder.")(f)


def _threads_option(f: Any) -> Any:
    return click.option("--threads", type=click.IntRange(min=1), help="CPU threads for the ONNX models [default: onnxruntime's]")(f)


@click.group("docs")
def docs() -> None:
    """Documents: index a corpus into passages (BM25, dense, hybrid), search it."""


def _corpus_file(corpus: str) -> Path:
    """A file, or a registered dataset that provides its corpus (nq-500)."""
    p = Path(corpus)
    if p.is_file():
        return p
    from .. import registry
    from ..protocols import CorpusProviding

    if registry.datasets.split(corpus)[0] in registry.datasets:
        dataset = registry.create("datasets", corpus)
        if isinstance(dataset, CorpusProviding):
            return Path(dataset.corpus_file())
        raise VericiteError(f"dataset {corpus!r} has no corpus of its own to index: give a corpus file")
    if p.exists():
        raise VericiteError(f"{p} is a folder: give a corpus file")
    raise VericiteError(f"corpus not found: {corpus} is neither a file nor a dataset with a corpus (e.g. nq-500)")


@docs.command("index")
@click.argument("corpus")
@_index_option
@click.option("--retriever", type=RETRIEVER_CHOICE, default="bm25", show_default=True, help="What to build (hybrid: bm25 and dense); an index gains what it lacks.")
@click.option("--passage-words", type=click.IntRange(min=0), default=100, show_default=True, help="Words per passage (DPR's 100; 0: documents kept whole).")
@click.option("--format", "fmt", type=click.Choice(["auto", "jsonl", "dpr", "alce", "conner"]), default="auto", show_default=True, help="Corpus file format.")
@click.option("--embedder", default="bge-small", show_default=True, help="Embedder of the dense vectors: bge-small (embedded), hf:<hub id or folder>.")
@_threads_option
@click.option("--json", "as_json", is_flag=True, help="Print what was built as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress.")
def index(corpus: str, index_dir: Path, retriever: str, passage_words: int, fmt: str, embedder: str, threads: int | None, as_json: bool, quiet: bool) -> None:
    """Split CORPUS (a file, or nq-500, wow-seen-500, wow-unseen-500) into passages and index them in --index. Run again after an
    interruption to resume; run with another --retriever to add it."""
    from ..knowledge.docs import build_from_file
    from ..outputs import check_out_dir
    from ..registry import BuildContext

    path = _corpus_file(corpus)
    check_out_dir(index_dir, "--index")

    def say(line: str) -> None:
        if not quiet:
            click.echo(printable(line), err=True)

    try:
        result = build_from_file(path, index_dir, format=fmt, retrievers=[retriever], passage_words=passage_words, embedder=embedder,
                                 ctx=BuildContext(threads=threads, cache=False), progress=not quiet, say=say)
    except KeyboardInterrupt:
        click.secho("interrupted: run the same command again to resume (the dense vectors made so far are kept)", fg="yellow", err=True)
        raise SystemExit(130) from None
    report = result.report
    if as_json:
        click.echo(json.dumps({"index": str(index_dir), "passages": result.passages, "built": result.built, "kept": result.kept,
                               "resumed_vectors": result.resumed, "seconds": {k: round(v, 3) for k, v in result.seconds.items()},
                               "corpus": report.to_dict() if report else None}))
    else:
        if report is not None:
            click.echo(f"{report.documents:,} documents, {result.passages:,} passages from {printable(str(path))} ({report.format})"
                       + (f"; {report.merged:,} repeated documents read once" if report.merged else ""))
        timing = ", ".join(f"{r} ({result.seconds.get(r, 0):.1f} s)" for r in result.built)
        click.echo(f"index {printable(str(index_dir))}: built {timing or 'nothing new'}" + (f"; already there: {', '.join(result.kept)}" if result.kept else ""))
        if result.resumed:
            click.echo(f"resumed: {result.resumed:,} dense vectors kept from the interrupted build")
    if report is not None and report.n_bad:
        # bytes that are not UTF-8 are read as U+FFFD: the item is indexed (unless it has another problem too)
        left_out = {k: n for k, n in report.problems.items() if k != "not UTF-8"}
        replaced = report.problems.get("not UTF-8", 0)
        parts = []
        if left_out:
            kinds = ", ".join(f"{n:,} {k}" for k, n in left_out.items())
            parts.append(f"{sum(left_out.values()):,} corpus items not indexed ({kinds})")
        if replaced:
            parts.append(f"{replaced:,} not UTF-8 (read as U+FFFD)")
        click.secho(f"warning: {'; '.join(parts)}; listed in {printable(str(index_dir / 'bad_items.jsonl'))}", fg="yellow", err=True)
        for item in report.bad[:SHOW_BAD]:
            click.echo(printable(f"  {item['where']}: {item['problem']}: {item['detail']}"), err=True)


@docs.command("search")
@click.argument("query")
@_index_option
@click.option("-k", type=click.IntRange(min=1), default=5, show_default=True, help="How many passages.")
@click.option("--retriever", type=RETRIEVER_CHOICE, default="bm25", show_default=True)
@click.option("--rerank", is_flag=True, help="Re-rank with the embedded ms-marco cross-encoder.")
@click.option("--rerank-depth", type=click.IntRange(min=1), default=20, show_default=True, help="How many first-stage passages are re-ranked.")
@_threads_option
@click.option("--json", "as_json", is_flag=True, help="Print the passages as JSON.")
def search(query: str, index_dir: Path, k: int, retriever: str, rerank: bool, rerank_depth: int, threads: int | None, as_json: bool) -> None:
    """The best passages of --index for QUERY, best first."""
    from ..knowledge.docs import IndexRetriever
    from ..registry import BuildContext

    if not query.strip():
        raise VericiteError("the query is empty: give the words to search for")
    ctx = BuildContext(threads=threads, cache=False)
    r = IndexRetriever(index_dir, retriever, k=k, rerank="ms-marco" if rerank else None, rerank_depth=max(rerank_depth, k), ctx=ctx)
    found = r.search(query)
    if as_json:
        click.echo(json.dumps({"query": query, "retriever": r.id, "options": r.options(),
                               "passages": [{"rank": i, "id": p.id, "title": p.title, "text": p.text, "score": s} for i, (p, s) in enumerate(found, 1)]},
                              ensure_ascii=False))
    else:
        for i, (p, s) in enumerate(found, 1):
            click.echo(printable(f"{i}. [{p.id}] {p.title}  ({s:.4g})"))
            text = p.text if len(p.text) <= 300 else p.text[:297] + "..."
            click.echo("   " + printable(text))
    if not found:
        raise NothingFound(f"no passage of {index_dir} matches the query ({r.id})")
