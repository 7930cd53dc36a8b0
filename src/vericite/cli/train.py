"""``vericite train``: fine-tune a judge on a built benchmark (``train caqa``: CAQA's fine-tuning setting)."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def train() -> None:
    """Fine-tune a small judge on a built benchmark, on this CPU."""


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
