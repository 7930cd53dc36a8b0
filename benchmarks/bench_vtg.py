"""VTG's cost against rerank's on the same questions (the paper's Figure 4: VTG spends fewer tokens than rerank),
from run folders written by ``vericite generate`` (no model is loaded here):

    python benchmarks/bench_vtg.py --vtg runs/vtg/eli5 --baseline runs/alce/eli5-rerank [--baseline runs/alce/eli5-vanilla ...]
        [--svg docs/img/vtg-eli5-tokens.svg --eval runs/vtg/eval-eli5 --eval runs/alce/eval-eli5-rerank ... [--metric NAME]]

Per method, over the questions every folder answered: tokens per question (prompt + completion, every model call,
the judges' included, as the run loop metered them; median and mean), calls per question, and wall time per
question (the records' ``seconds``); the judge's share of those tokens (VTG: its trace's ``verify`` component;
rerank: its records' ``rerank.judge_usage``); for VTG, the share of its time in sentence generation, citation,
query generation, verification (the judge) and retrieval, its tokens by component (``vtg`` trace), and the
simplifier's checks, judge calls and removals (``benchmarks/bench_vtg_cost.py`` measures what its batching and
llama.cpp's prefix reuse change).

``--svg FILE`` also draws the paper's Figure 4 as an SVG file (``vericite.report.token_figure``, the figure
``vericite report`` draws for a ``vtg-methods`` experiment folder): each method's median tokens per question
(whiskers: the interquartile range) against a metric of its evaluation (``--eval``, one per run in the order
``--vtg``, ``--baseline``...; ``--metric``, citation F1 by default, its 95 % CI as a vertical whisker); a method
whose tokens are a lower bound is drawn hollow with an arrow. Without ``--eval`` no point can be placed: the
figure says so.

Runs written before next-token judge calls reported their tokens count those calls with 0 tokens (VTG's
``verify`` has calls but no tokens; rerank's records have no ``judge_usage``): the script says so for each such
run, since its totals then leave the judge out. Calls whose tokens are unknown (``uncounted_calls``, e.g. judgements
read from a cache entry written before usage was stored) are counted and said: the totals are then a lower bound."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vericite.errors import VericiteError
from vericite.report.charts import standalone_svg
from vericite.report.token_figure import DEFAULT_METRIC, FigureRun, token_figure
from vericite.runs.cost import common_ids, cost, judge_note, records
from vericite.runs.runner import read_manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vtg", required=True, type=Path)
    ap.add_argument("--baseline", action="append", type=Path, default=[], help="a baseline's run folder (repeatable)")
    ap.add_argument("--svg", type=Path, help="write the token figure (the paper's Figure 4) to this SVG file")
    ap.add_argument("--eval", action="append", type=Path, default=[],
                    help="each run's evaluation folder, in the order --vtg, --baseline... (repeatable; for --svg's metric)")
    ap.add_argument("--metric", default=DEFAULT_METRIC, help=f"the figure's quality metric (default {DEFAULT_METRIC})")
    args = ap.parse_args()
    try:
        report(args)
    except VericiteError as e:
        sys.exit(f"error: {e}")


def label(folder: Path) -> str:
    """A baseline's name: its folder's, with the method its manifest names for an experiment's ``level-<x>``
    folder (``rerank/level-3``), so a table and the figure say which baseline a level is."""
    if folder.name.startswith("level-"):
        method = str((read_manifest(folder).get("config") or {}).get("method") or "")
        if method:
            return f"{method}/{folder.name}"
    return folder.name


def report(args: argparse.Namespace) -> None:
    folders = {"vtg": args.vtg, **{label(b): b for b in args.baseline}}
    if len(folders) != 1 + len(args.baseline):
        raise VericiteError("two runs have the same folder name; give folders with different names")
    if args.eval and len(args.eval) != len(folders):
        raise VericiteError(f"--eval: {len(args.eval)} folders for {len(folders)} runs; give one per run, in the order --vtg, --baseline...")
    runs = {name: records(folder) for name, folder in folders.items()}
    common = common_ids(runs)
    print(f"{len(common)} questions answered by every run: {', '.join(common)}")
    print(f"{'method':<24}{'tokens p50':>12}{'tokens mean':>13}{'calls mean':>12}{'seconds p50':>13}")
    costs = {name: cost(name, recs, common, folders[name]) for name, recs in runs.items()}
    for name, c in costs.items():
        print(f"{name:<24}{c.median:>12,.0f}{c.mean:>13,.0f}{c.calls_mean:>12.1f}{c.seconds_median:>13.1f}")
    for name, c in costs.items():
        if name != "vtg" and c.median:
            print(f"VTG / {name} tokens (medians): {costs['vtg'].median / c.median:.2f}")
    for name, c in costs.items():
        note = judge_note(name, [runs[name][i] for i in common])
        if note:
            print(note)
        if c.uncounted_calls:
            print(f"{name}: {c.uncounted_calls} calls of unknown tokens in its usage: its totals are a lower bound")
        if c.no_usage:
            print(f"{name}: {c.no_usage} answers without usage (counted as 0 tokens): its totals are a lower bound")
    if args.svg:
        evals = args.eval or [None] * len(folders)
        fig = token_figure([FigureRun(n, f, e) for (n, f), e in zip(folders.items(), evals)], args.metric)
        try:
            args.svg.parent.mkdir(parents=True, exist_ok=True)
            args.svg.write_text(standalone_svg(fig.svg), encoding="utf-8")
        except OSError as e:
            raise VericiteError(f"cannot write {args.svg}: {e.strerror or e}") from None
        print(f"token figure ({args.metric}, whiskers: the interquartile range) written to {args.svg}:")
        print(fig.markdown(), end="")
        for note in fig.notes[1:] + [f"{p.label}: not plotted ({p.why})" for p in fig.points if p.value is None]:
            print(note)
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
