"""``vericite train``: fine-tune a judge on a built benchmark (``train caqa``: CAQA's fine-tuning setting), or fit
the three-way LLM judge's class biases on labelled pairs (``train llm3f``: the ``llm3f:<file>`` judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .options import server_options


@click.group()
def train() -> None:
    """Fine-tune a small judge on a built benchmark (caqa), or fit the three-way LLM judge's class biases on
    labelled pairs (llm3f), on this CPU."""


@train.command("caqa")
@click.option("--data", required=True, type=click.Path(dir_okay=False, path_type=Path), help="a `vericite build caqa` file")
@click.option("--split", default="train", show_default=True, help="the items to train on")
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False, path_type=Path), help="folder for model.onnx, tokenizer.json, caqa_judge.json (judge: caqa:<folder>)")
@click.option("--epochs", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--lr", type=float, default=1e-4, show_default=True, help="the encoder's learning rate")
@click.option("--head-lr", type=float, default=1e-3, show_default=True, help="the new classification layer's learning rate")
@click.option("--head", type=click.Choice(["mean", "cls"]), default="mean", show_default=True,
              help="mean: a linear layer on mean-pooled token states (recipe 2); cls: BertForSequenceClassification's head on the [CLS] pooler (recipe 1 with --batches shuffle and --head-lr equal to --lr: it did not learn)")
@click.option("--batches", type=click.Choice(["query", "shuffle"]), default="query", show_default=True,
              help="query: a batch holds whole queries (all classes of a question side by side); shuffle: items in random order")
@click.option("--first", type=click.Choice(["question+answer", "answer"]), default="question+answer", show_default=True,
              help="the first text of each input: the question then the answer statement, or the answer statement alone (it learned faster in docs/results-caqa.md's variants)")
@click.option("--max-length", type=click.IntRange(min=16), default=160, show_default=True, help="most tokens of one (question + answer, citation) input")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="train on the first N items only")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def caqa(data: Path, split: str, out: Path, epochs: int, batch_size: int, lr: float, head_lr: float, head: str, batches: str,
         first: str, max_length: int, limit: int | None, seed: int, threads: int, quiet: bool) -> None:
    """Fine-tune all-MiniLM-L6-v2 as a four-class cross-encoder on CAQA items, export it to ONNX, and write a
    folder the `caqa:<folder>` judge runs (judge-eval --task caqa --judge caqa:<folder>).

    The input is (question + answer statement, citation); the default head is a linear layer on the mean of the
    token states (as all-MiniLM-L6-v2 was trained to pool), trained in batches of whole queries."""
    from ..bench.train_caqa import train_caqa
    from ..judges.meta_caqa import read_items
    from ..outputs import check_out_dir
    from ..progress import progress_bar

    check_out_dir(out)
    n = len(read_items(data, split, limit).items)
    with progress_bar(n * epochs, "fine-tuning", enabled=not quiet) as advance:
        card = train_caqa(data, out, split=split, epochs=epochs, batch_size=batch_size, lr=lr, head_lr=head_lr, head=head,
                          batches=batches, first=first, max_length=max_length,
                          limit=limit, seed=seed, threads=threads, progress=advance, log=lambda m: click.echo(m, err=True))
    t = card["training"]
    click.echo(f"trained on {t['items']} {split} items, {epochs} epoch{'s' if epochs != 1 else ''} in {t['seconds']} s (loss per epoch {t['mean_loss_per_epoch']})")
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    click.echo(f"wrote {out} ({size / 1e6:.1f} MB); judge: caqa:{out}")


@train.command("llm3f")
@click.option("--model", "model_name", required=True, help="the model the llm3:<model> judge asks (see `vericite models`)")
@click.option("--data", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="labelled pairs, JSONL with evidence, claim and a three-way label (supports, refutes, not_enough_info), "
                   "or a `vericite build caqa` dataset (told by its fields: question, answer, citation, label), its four classes "
                   "mapped to three; not the shared VitaminC pairs, which are for evaluation only")
@click.option("--split", default=None, help="a CAQA dataset's split to fit on  [default: train]; not for a pairs file")
@click.option("--skip", type=click.IntRange(min=0), default=0, show_default=True, help="leave out the first N readable pairs (of a CAQA dataset: of the split's items)")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True, help="fit on N pairs after those")
@click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None, help="model threads (default: the backend's)")
@click.option("--cache/--no-cache", default=True, show_default=True, help="use the model call cache (a second fit on the same pairs asks the model nothing)")
@server_options
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path), help="the fit file to write (judge: llm3f:<file>)")
@click.option("--force", is_flag=True, help="overwrite --out when it exists (a fit file's id is its content: judgements made with the old one keep its id)")
@click.option("--quiet", "-q", is_flag=True, help="no progress bar")
def llm3f(model_name: str, data: Path, split: str | None, skip: int, limit: int, batch_size: int, threads: int | None, cache: bool, out: Path,
          force: bool, quiet: bool, **server: Any) -> None:
    """Fit the class biases of the three-way LLM judge (llm3:<model>) on labelled pairs and write the fit file
    the llm3f:<file> judge reads: one log-bias per label (supports fixed at 0) added to the judge's label
    log-probabilities, minimising the class-balanced log loss on the fit pairs.

    --data is a JSONL file of labelled pairs (evidence, claim, label), or a `vericite build caqa` dataset, told
    apart by its fields: a CAQA item is judged as judge-eval --task caqa gives it (the citation as evidence, the
    answer statement as claim), items of --split (default train) only, and its four classes read as three:
    supportive -> supports, contradictory -> refutes, insufficient and irrelevant -> not_enough_info.

    The pairs are judged by llm3:<model> through the call cache; the file records the model's identity (its
    sha256), the data (its kind, pairs or caqa; its file's sha256; which pairs, --skip and --limit; for CAQA the
    split and the mapping), the biases, and the fit pairs' three-way balanced accuracy and log loss before and
    after. judge-eval refuses to measure llm3f on the pairs it was fitted on (and --task caqa, four-class, takes
    no llm3f judge). evaluate shows a fit's measured accuracy only when judges/measured.json registers that fit
    file's sha256. An existing --out is overwritten only with --force.

    The shared VitaminC pairs (judge-eval's default data) are refused: their README keeps them for evaluation
    only, never for training or tuning.

    Example: vericite train llm3f --model qwen2.5-coder-1.5b --data datasets/caqa-bio.jsonl --split train --limit
    200 --out runs/llm3f-qwen.json, then vericite judge-eval --judge llm3f:runs/llm3f-qwen.json --limit 500 --out
    runs/j3f"""
    import json
    from types import SimpleNamespace

    from ..errors import VericiteError
    from ..judges.fit_bias import fit_judged, read_fit_pairs
    from ..jsonl import write_json_atomic
    from ..models import load_model, model_options, release
    from ..progress import progress_bar
    from ..paths import shared_data_dir

    if out.exists() and out.is_dir():
        raise VericiteError(f"--out {out} is a folder: give the fit file's name (e.g. {out / 'llm3f.json'})")
    if out.exists() and not force:
        raise VericiteError(f"--out {out} exists: give --force to overwrite it, or another --out")
    data_path = data
    shared = shared_data_dir(required=False)
    if _same_file_content(data_path, None if shared is None else shared / "vitaminc" / "dev.jsonl"):
        raise VericiteError(f"--data {data_path} is the shared VitaminC dev pairs, which are for evaluation only (their README: never "
                            "train or tune on them): fit on other labelled pairs, and measure on these with judge-eval")
    chosen = read_fit_pairs(data_path, split=split, skip=skip, limit=limit)  # a bad file fails now, not after the model is loaded
    backend = load_model(model_name, **model_options(SimpleNamespace(threads=threads, cache=cache, **server)))
    try:
        with progress_bar(len(chosen.pairs), f"judging fit pairs with llm3:{model_name}", enabled=not quiet) as advance:
            record = fit_judged(backend, chosen, batch_size=batch_size, progress=advance)
    finally:
        release(backend)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out, record)
    b, before, after, d = record["bias"], record["before"], record["after"], record["data"]
    where = f" (CAQA split {d['split']}: " + ", ".join(f"{k} {v}" for k, v in d["classes"].items()) + ", read as three labels)" if d["kind"] == "caqa" else ""
    click.echo(f"fitted on {record['pairs']['used']} of {record['pairs']['n']} pairs{where}: bias " + ", ".join(f"{k} {v:+.3f}" for k, v in b.items()))
    click.echo(f"fit pairs' three-way balanced accuracy {before['balanced_accuracy_3way']} -> {after['balanced_accuracy_3way']}; "
               f"said {json.dumps(before['said'])} -> {json.dumps(after['said'])}")
    click.echo(f"wrote {out}; judge: llm3f:{out}")


def _same_file_content(a: Path, b: Path | None) -> bool:
    """Whether files ``a`` and ``b`` hold the same bytes (False when either cannot be read)."""
    import hashlib

    def digest(p: Path) -> str | None:
        try:
            return hashlib.sha256(p.read_bytes()).hexdigest()
        except (OSError, TypeError):
            return None

    da = digest(a)
    return da is not None and b is not None and da == digest(b)
