"""VTG's citation simplifier, greedy (the paper's, one check per citation) against halving
(``simplifier_strategy: halving``), on the memories ``configs/vtg-kg-removal.yaml`` hands it: every triple a
biokalma-mini question carries (level 0, no store), all of them the sentence's citations, as when only the memory
verifier verifies it. No model is loaded:

    python benchmarks/bench_vtg_simplifier.py [--questions 10] [--needed 1,2] [--json out.json]

The judge is VTG's default, ``llm:<model>`` (``judges.llm.LLMJudge``, its real prompts), over a fake model that says
Yes exactly when the premise holds the triples a sentence needs: the first ``k`` triples of the question's minimum
knowledge set, in the memory's order (``--needed``: the values of k). That judge is monotone, so both strategies
keep the same triples (checked: ``same kept``). Per strategy, summed over the questions: checks (each a judge
call here), the words of the judge's prompts (the fake model's metered prompt tokens: the chat messages' words),
and the words llama.cpp would evaluate keeping only the last prompt's tokens (llama-cpp-python's rule: a prompt's
longest common prefix with the previous one is not evaluated again; counted here in words over the messages, not
in the model's tokens, and without the chat template's own tokens; the first check counted whole, though in a run
it follows the memory verifier's prompt); ``other order``: the same, each premise's triples listed the other way
round (greedy's last to first, halving's first to last: what its premise order saves). A judge call reads one token's distribution,
so its time is its prompt's evaluation (docs/benchmarks.md, "Generation": Qwen 23.8 s for 588 tokens evaluated on
the loaded 2-core machine): the evaluated words, not the calls, are the measure of the simplifier's time."""

from __future__ import annotations

import argparse
import json
from typing import Any

from vericite.datasets import load_samples
from vericite.generate import vtg_kg as K
from vericite.generate import vtg_steps as S
from vericite.generate.vtg_memory import Memory
from vericite.generate.vtg_trace import Tracer
from vericite.judges.llm import LLMJudge
from vericite.models.fake import FakeBackend, last_user_message

STRATEGIES = ("greedy", "halving")


def words(messages: Any) -> list[str]:
    return [w for m in messages for w in str(m.get("content", "")).split()]


def evaluated(prompts: list[Any]) -> int:
    """Words evaluated when each prompt reuses its longest common prefix with the previous one."""
    total, last = 0, []
    for p in prompts:
        now = words(p)
        same = 0
        while same < min(len(now), len(last)) and now[same] == last[same]:
            same += 1
        total += len(now) - same
        last = now
    return total


class NeedsModel(FakeBackend):
    """Yes (every spelling of it at log-prob -0.05, the rest at -6) when the prompt holds every needed triple, else
    No: a monotone judge (the plain fake's hash-based log-probs of the other candidates can outweigh its reply)."""

    def __init__(self, needed: list[str]) -> None:
        super().__init__("needs")
        self.needed = needed

    def next_token_logprobs(self, prompts: Any, candidates: Any) -> list[dict[str, float]]:
        out = []
        for messages in prompts:
            self.calls["next_token_logprobs"] += 1
            self.prompts.append([dict(m) for m in messages])
            yes = all(n in last_user_message(messages) for n in self.needed)
            out.append({c: -0.05 if (c.strip().lower() == "yes") == yes else -6.0 for c in candidates})
        return out


def reordered(messages: Any) -> list[dict[str, Any]]:
    """The prompt with its evidence's documents (each from a ``Title:`` line to the next) in the other order."""
    out = []
    for m in messages:
        text = str(m.get("content", ""))
        if "Evidence: " in text and "\n\nClaim: " in text:
            head, rest = text.split("Evidence: ", 1)
            evidence, tail = rest.split("\n\nClaim: ", 1)
            docs: list[list[str]] = []
            for line in evidence.split("\n"):
                if line.startswith("Title: ") or not docs:
                    docs.append([])
                docs[-1].append(line)
            text = f"{head}Evidence: {chr(10).join(line for d in docs[::-1] for line in d)}\n\nClaim: {tail}"
        out.append({**m, "content": text})
    return out


def simplify(docs: list[Any], needed: list[str], claim: str, strategy: str) -> dict[str, Any]:
    model = NeedsModel(needed)
    verifier = S.Verifier(LLMJudge(model), Tracer(), claim)
    kept, trace = verifier.simplify(Memory(docs), list(range(len(docs))), claim, strategy=strategy)
    return {"kept": kept, "checks": trace["checks"], "calls": model.calls["next_token_logprobs"], "prompt_words": sum(len(words(p)) for p in model.prompts),
            "evaluated_words": evaluated(model.prompts), "evaluated_words_other_order": evaluated([reordered(p) for p in model.prompts])}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=10, help="biokalma-mini's first N questions (default 10, the run's --limit)")
    ap.add_argument("--needed", default="1,2", help="the triples a sentence needs, comma-separated counts (default 1,2)")
    ap.add_argument("--json", help="write the rows and totals here")
    a = ap.parse_args()
    rows = []
    for s in load_samples("biokalma-mini", "specific", None)[: a.questions]:
        docs, _ = K.triples_for(s, None)
        gold = {t.key for t in s.gold or []}
        minimum = [d for d in docs if K.doc_triple(d).key in gold]
        for k in (int(x) for x in a.needed.split(",")):
            if len(minimum) < k:
                continue
            needed = [S.premise([d]) for d in minimum[:k]]
            got = {name: simplify(docs, needed, s.question, name) for name in STRATEGIES}
            rows.append({"id": s.id, "triples": len(docs), "needed": k, "same_kept": got["greedy"]["kept"] == got["halving"]["kept"], **{n: {x: v for x, v in g.items() if x != "kept"} for n, g in got.items()}})
    print(f"biokalma-mini, first {a.questions} questions: every triple each carries (level 0) given to the simplifier; the judge llm:<fake> says Yes when the premise holds the needed triples")
    print(f"{'needed':>6} {'questions':>9} {'triples':>8} {'strategy':>8} {'checks':>7} {'prompt words':>13} {'evaluated words':>16} {'other order':>12} {'same kept':>9}")
    totals = {}
    for k in sorted({r["needed"] for r in rows}):
        rs = [r for r in rows if r["needed"] == k]
        for name in STRATEGIES:
            t = {x: sum(r[name][x] for r in rs) for x in ("checks", "calls", "prompt_words", "evaluated_words", "evaluated_words_other_order")}
            totals[f"{k}:{name}"] = t
            same = "yes" if all(r["same_kept"] for r in rs) else "NO"
            print(f"{k:>6} {len(rs):>9} {sum(r['triples'] for r in rs):>8} {name:>8} {t['checks']:>7,} {t['prompt_words']:>13,} {t['evaluated_words']:>16,} {t['evaluated_words_other_order']:>12,} {same:>9}")
        g, h = totals[f"{k}:greedy"], totals[f"{k}:halving"]
        print(f"{'':>6} {'':>9} {'':>8} {'ratio':>8} {g['checks'] / h['checks']:>6.1f}x {g['prompt_words'] / h['prompt_words']:>12.1f}x {g['evaluated_words'] / h['evaluated_words']:>15.1f}x")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"rows": rows, "totals": totals}, f, indent=2)


if __name__ == "__main__":
    main()
