"""Does a four-class judge trained on template text hold up on LLM-written CAQA items? (docs/results-caqa.md)

A template build with the same seed as an LLM build samples the same queries in the same order, so each
LLM-written item has a template twin: the same query and class, other text. Two steps:

    python scripts/caqa_transfer.py match --llm datasets/caqa-bio-qwen.jsonl --pool /tmp/t7.jsonl --out runs/caqa/t7-matched.jsonl
    (judge both files with `vericite judge-eval --task caqa ... --out DIR`)
    python scripts/caqa_transfer.py compare --llm datasets/caqa-bio-qwen.jsonl --twins runs/caqa/t7-matched.jsonl \
        --llm-eval runs/caqa/minilm-on-qwen --twins-eval runs/caqa/minilm-on-t7matched --train datasets/caqa-bio.jsonl

`compare` prints the accuracy on both, their paired difference with a 95 % percentile bootstrap CI over queries
(vericite.stats: the query is the resampled unit, each draw recomputes both accuracies over the drawn queries'
items; 2,000 resamples, seed 0), per class, and the same without the queries that are also in the judge's train split.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import Any, Callable

import numpy as np

from vericite.stats import bootstrap_cis, ratio_of_sums

CLASSES = ("supportive", "insufficient", "contradictory", "irrelevant")


def read(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def key(item: dict[str, Any]) -> tuple[str, str]:
    return json.dumps(item["query"], sort_keys=True), item["label"]


def match(llm: str, pool: str, out: str) -> None:
    wanted = {key(it) for it in read(llm)}
    seen: set[tuple[str, str]] = set()
    with open(out, "w", encoding="utf-8") as f:
        for it in read(pool):
            k = key(it)
            if k in wanted and k not in seen:
                seen.add(k)
                f.write(json.dumps(it, ensure_ascii=False) + "\n")
    print(f"{len(seen)} of {len(wanted)} items have a template twin; wrote {out}")


def correct(eval_dir: str, items: list[dict[str, Any]]) -> dict[tuple[str, str], bool]:
    """Whether the judge got each item right: judgements.jsonl is in the data file's order."""
    judged = read(f"{eval_dir}/judgements.jsonl")
    if len(judged) != len(items):
        sys.exit(f"{eval_dir}: {len(judged)} judgements for {len(items)} items (judge the whole file, no --split)")
    return {key(it): j["label"] == it["label"] for it, j in zip(items, judged)}


def compare(a: argparse.Namespace) -> None:
    on_llm, on_twins = correct(a.llm_eval, read(a.llm)), correct(a.twins_eval, read(a.twins))
    train = {json.dumps(it["query"], sort_keys=True) for it in read(a.train) if it.get("split") == "train"} if a.train else set()
    subsets: list[tuple[str, Callable[[tuple[str, str]], bool]]] = [("all twins", lambda k: True)]
    if a.train:
        subsets.append(("queries not in the train split", lambda k: k[0] not in train))
    for name, keep in subsets:
        ks = [k for k in on_llm if k in on_twins and keep(k)]
        by_query: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for k in ks:
            by_query[k[0]].append(k)
        queries = sorted(by_query)
        if not ks:
            print(f"{name}: no item has both a judgement and a twin")
            continue
        n_q = np.array([len(by_query[q]) for q in queries], dtype=float)
        llm_q = np.array([sum(on_llm[k] for k in by_query[q]) for q in queries], dtype=float)
        tw_q = np.array([sum(on_twins[k] for k in by_query[q]) for q in queries], dtype=float)
        acc_llm_of, acc_tw_of = ratio_of_sums(llm_q, n_q), ratio_of_sums(tw_q, n_q)
        lo, hi = bootstrap_cis({"diff": lambda w: acc_llm_of(w) - acc_tw_of(w)}, len(queries), resamples=2000, seed=0)["diff"]
        ci = "[n/a]" if lo is None or hi is None else f"[{lo:+.3f}, {hi:+.3f}]"
        acc_llm, acc_tw = sum(on_llm[k] for k in ks) / len(ks), sum(on_twins[k] for k in ks) / len(ks)
        print(f"{name}: {len(ks)} items, {len(queries)} queries; accuracy template {acc_tw:.3f}, LLM {acc_llm:.3f}, "
              f"LLM - template {acc_llm - acc_tw:+.3f} {ci}")
        for c in CLASSES:
            kc = [k for k in ks if k[1] == c]
            if kc:
                print(f"  {c}: n {len(kc)}, template {sum(on_twins[k] for k in kc) / len(kc):.3f}, LLM {sum(on_llm[k] for k in kc) / len(kc):.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    m = sub.add_parser("match", help="the template twins of an LLM build's items")
    m.add_argument("--llm", required=True)
    m.add_argument("--pool", required=True, help="a template build with the LLM build's seed and a larger --n")
    m.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="a judge's accuracy on the LLM items against their twins")
    c.add_argument("--llm", required=True)
    c.add_argument("--twins", required=True)
    c.add_argument("--llm-eval", required=True, help="judge-eval --task caqa folder on --llm")
    c.add_argument("--twins-eval", required=True, help="judge-eval --task caqa folder on --twins")
    c.add_argument("--train", help="the judge's training file: its train-split queries are also left out")
    a = ap.parse_args(argv)
    if a.step == "match":
        match(a.llm, a.pool, a.out)
    else:
        compare(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
