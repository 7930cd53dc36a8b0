"""VTG's cost against rerank's on the same questions (the paper's Figure 4: VTG spends fewer tokens than rerank),
from run folders written by ``vericite generate`` (no model is loaded here):

    python benchmarks/bench_vtg.py --vtg runs/vtg/eli5 --baseline runs/alce/eli5-rerank [--baseline runs/alce/eli5-vanilla ...]

Per method, over the questions every folder answered: tokens per question (prompt + completion, every model call,
the judges' included, as the run loop metered them; median and mean), calls per question, and wall time per
question (the records' ``seconds``); the judge's share of those tokens (VTG: its trace's ``verify`` component;
rerank: its records' ``rerank.judge_usage``); for VTG, the share of its time in sentence generation, citation,
query generation, verification (the judge) and retrieval, its tokens by component (``vtg`` trace), and the
simplifier's checks, judge calls and removals (``benchmarks/bench_vtg_cost.py`` measures what its batching and
llama.cpp's prefix reuse change).

Runs written before next-token judge calls reported their tokens count those calls with 0 tokens (VTG's
``verify`` has calls but no tokens; rerank's records have no ``judge_usage``): the script says so for each such
run, since its totals then leave the judge out. Calls whose tokens are unknown (``uncounted_calls``, e.g. judgements
read from a cache entry written before usage was stored) are counted and said: the totals are then a lower bound."""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def records(folder: Path) -> dict[str, dict]:
    out = {}
    for line in (folder / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["id"]] = r
    return out


def tokens(r: dict) -> int:
    u = r.get("usage") or {}
    return int(u.get("prompt_tokens", 0)) + int(u.get("completion_tokens", 0))


def judge_usage(r: dict) -> dict | None:
    """The judge's model calls of one answer: VTG's ``verify`` component, rerank's ``judge_usage``; None when the
    record has none (another method, or a run written before judge tokens were reported)."""
    if isinstance(r.get("vtg"), dict):
        return ((r["vtg"].get("components") or {}).get("verify")) or None
    if isinstance(r.get("rerank"), dict):
        return r["rerank"].get("judge_usage")
    return None


def judge_note(name: str, recs: list[dict]) -> str:
    """What the judge cost in these answers, or why it is not known."""
    used = [judge_usage(r) for r in recs]
    if all(u is None for u in used):
        if any(isinstance(r.get("rerank"), dict) for r in recs):
            return f"{name}: the judge's tokens are not recorded (a run written before judges reported tokens): its totals leave them out"
        return ""
    calls = sum(int((u or {}).get("calls", 0)) for u in used)
    t = sum(int((u or {}).get("prompt_tokens", 0)) + int((u or {}).get("completion_tokens", 0)) for u in used)
    if calls and not t:
        return f"{name}: {calls} judge calls with no tokens recorded (a run written before judges reported tokens): its totals leave them out"
    whole = sum(tokens(r) for r in recs) or 1
    unknown = sum(int((u or {}).get("uncounted_calls", 0)) for u in used)
    return f"{name}: judge {t:,} tokens in {calls} calls ({t / len(recs):,.0f} per question, {t / whole:.0%} of its tokens)" + (
        f"; {unknown} judge calls of unknown tokens (a lower bound)" if unknown else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vtg", required=True, type=Path)
    ap.add_argument("--baseline", action="append", type=Path, default=[], help="a baseline's run folder (repeatable)")
    args = ap.parse_args()
    runs = {"vtg": records(args.vtg), **{f"{b.name}": records(b) for b in args.baseline}}
    common = sorted(set.intersection(*(set(r) for r in runs.values())))
    if not common:
        raise SystemExit("the run folders answered no question in common")
    print(f"{len(common)} questions answered by every run: {', '.join(common)}")
    print(f"{'method':<24}{'tokens p50':>12}{'tokens mean':>13}{'calls mean':>12}{'seconds p50':>13}")
    med = {}
    for name, recs in runs.items():
        t = [tokens(recs[i]) for i in common]
        c = [int((recs[i].get("usage") or {}).get("calls", 0)) for i in common]
        s = [float(recs[i].get("seconds", 0.0)) for i in common]
        med[name] = statistics.median(t)
        print(f"{name:<24}{statistics.median(t):>12,.0f}{statistics.mean(t):>13,.0f}{statistics.mean(c):>12.1f}{statistics.median(s):>13.1f}")
    for name in runs:
        if name != "vtg" and med[name]:
            print(f"VTG / {name} tokens (medians): {med['vtg'] / med[name]:.2f}")
    for name, recs in runs.items():
        unknown = sum(int((recs[i].get("usage") or {}).get("uncounted_calls", 0)) for i in common)
        note = judge_note(name, [recs[i] for i in common])
        if note:
            print(note)
        if unknown:
            print(f"{name}: {unknown} calls of unknown tokens in its usage: its totals are a lower bound")
    traces = [runs["vtg"][i].get("vtg") or {} for i in common]
    secs: dict[str, float] = {}
    comp: dict[str, list[int]] = {}
    for t in traces:
        for k, v in (t.get("seconds") or {}).items():
            secs[k] = secs.get(k, 0.0) + float(v)
        for k, v in (t.get("components") or {}).items():
            comp.setdefault(k, [0, 0, 0])
            comp[k][0] += v.get("prompt_tokens", 0)
            comp[k][1] += v.get("completion_tokens", 0)
            comp[k][2] += v.get("calls", 0)
    total = sum(secs.values()) or 1.0
    print("VTG time by component: " + ", ".join(f"{k} {v / total:.0%}" for k, v in secs.items()))
    print("VTG tokens by component (prompt + completion, calls): " + ", ".join(f"{k} {p:,} + {c:,} ({n})" for k, (p, c, n) in comp.items()))
    judge_calls = sum((t.get("judge") or {}).get("calls", 0) for t in traces)
    print(f"VTG judge calls: {judge_calls} ({judge_calls / len(traces):.1f} per question); trials {sum(t.get('trials', 0) for t in traces)}, evidence rounds {sum(t.get('evidence_rounds', 0) for t in traces)}")
    simp = [tr.get("simplifier") or {} for t in traces for s in t.get("sentences", []) for tr in s.get("trials", [])]
    simp = [x for x in simp if "checks" in x]
    if simp:
        traced = [x for x in simp if "calls" in x]  # runs written before the simplifier counted its calls lack them
        calls = f", {sum(x['calls'] for x in traced)} judge calls" if len(traced) == len(simp) else ""
        spec = sum(x.get("speculative", 0) for x in simp)
        print(f"VTG simplifier: {len(simp)} runs, {sum(x['checks'] for x in simp)} checks{calls}, {sum(len(x.get('removed', [])) for x in simp)} removals"
              + (f", {spec} speculative checks (batched)" if spec else ""))


if __name__ == "__main__":
    main()
