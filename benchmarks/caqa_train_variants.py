"""Does `vericite train caqa` learn? Small fine-tunings of the four-class all-MiniLM-L6-v2 classifier on a prefix
of a CAQA train split, each scored on a held-out slice of the SAME train split (its last queries; the test split
is never read), one variant per call. Prints one JSON line: the variant, steps, seconds, the training loss
(first and last 10 steps, and every step), held-out accuracy, the majority baseline and the predicted classes.

    OMP_NUM_THREADS=1 nice -n 19 python benchmarks/caqa_train_variants.py --data datasets/caqa-bio.jsonl \
        --head mean --lr 5e-5 --head-lr 1e-3 --batches query --train-items 640 --steps 40 --heldout-queries 40
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import time

from vericite.bench.train_caqa import base_model_dir, build_classifier, fit, predict, query_key
from vericite.judges.meta_caqa import CLASSES, gold_class, read_items
from vericite.judges.trained import pair_text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--head", default="mean", choices=["mean", "cls"])
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--batches", default="query", choices=["query", "shuffle"])
    ap.add_argument("--layout", default="qa", choices=["qa", "a"], help="first text: question + answer (qa) or the answer statement (a)")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--train-items", type=int, default=640)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=float, default=0.1)
    ap.add_argument("--heldout-queries", type=int, default=40)
    ap.add_argument("--max-length", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    items = read_items(a.data, "train", None).items
    order: list[str] = []
    for it in items:
        if query_key(it) not in order:
            order.append(query_key(it))
    held = set(order[-a.heldout_queries:])
    train = [it for it in items if query_key(it) not in held][: a.train_items]
    test = [it for it in items if query_key(it) in held]

    def first(it):
        return pair_text(it["question"], it["answer"]) if a.layout == "qa" else it["answer"]

    from transformers import AutoTokenizer

    base = base_model_dir()
    tok = AutoTokenizer.from_pretrained(str(base))
    model = build_classifier(base, a.head)
    y = [CLASSES.index(gold_class(it["label"])) for it in train]
    t0 = time.perf_counter()
    losses = fit(model, tok, [first(it) for it in train], [it["citation"] for it in train], y, [query_key(it) for it in train],
                 epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, head_lr=a.head_lr, max_length=a.max_length,
                 batches=a.batches, warmup=a.warmup, seed=a.seed, max_steps=a.steps)
    train_s = time.perf_counter() - t0
    gold = [CLASSES.index(gold_class(it["label"])) for it in test]
    probs = predict(model, tok, [first(it) for it in test], [it["citation"] for it in test], max_length=a.max_length)
    pred = probs.argmax(1).tolist()
    acc = sum(p == g for p, g in zip(pred, gold)) / len(gold)
    majority = max(collections.Counter(gold).values()) / len(gold)
    out = {k: v for k, v in vars(a).items() if k != "data"} | {
        "train_items_used": len(train), "steps_run": len(losses), "train_s": round(train_s, 1),
        "loss_first10": round(sum(losses[:10]) / len(losses[:10]), 4), "loss_last10": round(sum(losses[-10:]) / len(losses[-10:]), 4),
        "heldout_items": len(gold), "heldout_accuracy": round(acc, 4), "majority_baseline": round(majority, 4),
        "predicted": dict(collections.Counter(CLASSES[p] for p in pred)),
        "per_class_recall": {c: round(sum(p == g == i for p, g in zip(pred, gold)) / max(1, gold.count(i)), 3) for i, c in enumerate(CLASSES)},
        "losses": losses}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
