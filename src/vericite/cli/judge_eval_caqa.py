"""``vericite judge-eval --task caqa``: a four-class judge (or an evaluator's predictions made elsewhere) measured
on CAQA items, per class and per complexity (CAQA Tables 5-6); a judge whose labels are not the four classes is
refused (:func:`refuse_other_labels`). The work is ``judges/meta_caqa.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

import click

from ..errors import VericiteError
from .output import ci_text, echo_json, md_cell

FIGURES = (
    *(f"f1_{c}" for c in ("supportive", "insufficient", "contradictory", "irrelevant")),
    "micro_f1",
    "macro_f1",
    *(f"micro_f1_{k}" for k in ("single", "union", "intersection", "concatenation")),
    "binary_micro_f1",
    "unparseable",
)


def _num(x: Any) -> str:
    return "n/a" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def judge_eval_caqa(judge_spec: str | None, data: Path | None, split: str | None, predictions: Path | None,
                    limit: int | None, batch_size: int, model_opts: dict[str, Any], out_dir: Path, progress: bool, fmt: str,
                    wrap: Callable[[Any], Any] = lambda judge: judge, resume: bool = False) -> None:
    """``judge-eval --task caqa``; ``wrap`` is applied to the judge once built (``--ray``: its judging on actors);
    ``resume``: keep the judge's judgements already in ``out_dir/judgements.jsonl`` (an interrupted run's) and judge
    only the rest."""
    from .. import jsonl
    from ..judges import meta_caqa as M
    from ..paths import file_sha256

    if predictions is not None:
        if judge_spec or data:
            raise VericiteError("--predictions is scored as it is: give it without --judge and --data")
        if resume:
            raise VericiteError("--resume continues a judge's run: --predictions is scored whole, give it without --resume")
        scored, info = M.read_predictions(predictions)
        results: dict[str, Any] = {"kind": "judge-eval", "task": "caqa", "judge": None, "predictions": str(predictions), "predictions_sha256": file_sha256(predictions), **info}
        judgements: list[Any] = []
    else:
        if not judge_spec:
            raise VericiteError("give a judge (--judge llm4:<model>, autois:<judge>, ...) or --predictions FILE")
        if data is None:
            raise VericiteError("give the CAQA items to judge: --data FILE (a `vericite build caqa` file)")
        items = M.read_items(data, split, limit)
        from ..judges import load_judge
        from ..judges.meta_figures import judge_identity
        from ..progress import progress_bar

        from .judge_eval_usage import UsageCounter

        counter = UsageCounter(model_opts)
        judge = load_judge(judge_spec, ctx=counter.ctx)
        refuse_other_labels(judge)
        judge = wrap(judge)
        with progress_bar(len(items.items), f"judging with {judge.id}", enabled=progress) as advance:
            scored, judgements, timing = M.run_caqa_eval(judge, items.items, batch_size=batch_size, progress=advance, out=out_dir, resume=resume)
        results = {"kind": "judge-eval", "task": "caqa", "judge": judge.id, **judge_identity(judge), "data": str(data), "data_sha256": file_sha256(data),
                   "split": split, "limit": limit, "bad_lines": items.bad_lines, "unknown_labels": items.unknown_labels,
                   "other_split": items.other_split, **timing, **counter.fields(judge, resumed=timing["resumed_pairs"])}
        results["data_modes"] = sorted({str((it.get("meta") or {}).get("verbalisation")) for it in items.items})
    results["figures"] = M.score(scored)
    out_dir.mkdir(parents=True, exist_ok=True)
    jsonl.write_json_atomic(out_dir / "results.json", results)
    pairs = [] if predictions is not None else [M.item_pair(it) for it in items.items]
    jsonl.write_jsonl_atomic(out_dir / "judgements.jsonl", (M.judgement_line(j, p) for j, p in zip(judgements, pairs)))
    print_caqa(results, out_dir, fmt)


#: the judges --task caqa takes: their labels are CAQA's four classes
FOUR_CLASS_JUDGES = "llm4:<model>, autois:<binary judge>, nli4:<three-class NLI model>, caqa:<folder of vericite train caqa>"


def refuse_other_labels(judge: Any) -> None:
    """A judge whose labels are not CAQA's four classes is refused in one line, before any item is judged: its
    labels (a binary judge's supported / not_supported, a three-way judge's supports / refutes /
    not_enough_info) are none of the classes, so every item would be scored unparseable. Three labels do not
    map onto four (not_enough_info is both insufficient and irrelevant); a binary judge is read as AutoIS reads
    it under ``autois:<judge>``."""
    from ..judges.four_class import CAQA_LABELS, is_four_class

    if is_four_class(judge):
        return
    labels = tuple(str(x) for x in (getattr(judge, "labels", None) or ()))
    said = f"its labels are {' / '.join(labels)}" if labels else "it declares no labels"
    hint = "; a binary judge is read as four classes by autois:<judge>" if len(labels) == 2 else ""
    raise VericiteError(f"--task caqa measures four-class judges (labels {', '.join(CAQA_LABELS)}): {FOUR_CLASS_JUDGES}, "
                        f"or --predictions FILE; {getattr(judge, 'id', judge)} is not one ({said}){hint}")


def rows(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    f = results["figures"]
    out = []
    for k in FIGURES:
        n = f.get(f"n_{k.rpartition('_')[2]}") if k.startswith("micro_f1_") else f["n"]
        out.append({"metric": k, "value": f.get(k), "ci": f.get("ci", {}).get(k), "n": n})
    return out


def print_caqa(results: Mapping[str, Any], out_dir: Path, fmt: str) -> None:
    f = results["figures"]
    from .judge_eval_usage import usage_fields

    wrote = f"wrote {Path(out_dir) / 'results.json'} and judgements.jsonl"
    notes = []
    if results.get("unknown_labels"):
        notes.append("lines with unknown labels left out: " + ", ".join(f"{k!r} {v}" for k, v in results["unknown_labels"].items()))
    if results.get("bad_lines"):
        notes.append(f"bad lines skipped: {results['bad_lines']}")
    if fmt == "json":
        echo_json({"kind": "judge-eval", "task": "caqa", "judge": results.get("judge"), "n": f["n"],
                   "metrics": rows(results), "cohen_kappa": f.get("cohen_kappa"), "confusion": f["confusion"],
                   "pairs_per_second": results.get("pairs_per_second"),
                   **usage_fields(results)})
        for line in notes + [wrote]:
            click.echo(line, err=True)
        return
    who = results.get("judge") or f"predictions {results.get('predictions')}"
    head = f"{who} on {f['n']} CAQA items" + (f" ({results.get('split')} split)" if results.get("split") else "")
    if fmt == "markdown":
        click.echo(f"{md_cell(head)}\n\n| figure | value | 95% CI | n |\n|---|---:|---:|---:|")
        for r in rows(results):
            click.echo(f"| {r['metric']} | {_num(r['value'])} | {ci_text(r['ci'])} | {r['n']} |")
    else:
        click.echo(head)
        for r in rows(results):
            click.echo(f"  {r['metric']:<28} {_num(r['value']):>6}  {ci_text(r['ci']):<16} n {r['n']}")
    extra = [f"gold: " + ", ".join(f"{k} {v}" for k, v in f["label_counts"].items()),
             "predicted: " + ", ".join(f"{k} {v}" for k, v in f["prediction_counts"].items())]
    if results.get("pairs_per_second") is not None:
        extra.append(f"pairs/s {results['pairs_per_second']}")
    if results.get("resumed_pairs"):
        extra.append(f"resumed: {results['resumed_pairs']} judgements kept from an earlier run")
    if f.get("n_human"):
        extra.append(f"Cohen's kappa, dataset labels vs human_label: {_num(f['cohen_kappa'])} (n {f['n_human']})")
    if "judge_usage" in results:
        from .judge_eval_usage import usage_line

        extra.append(usage_line(results))
    for line in extra + notes + [wrote]:
        click.echo(line)
