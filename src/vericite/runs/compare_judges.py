"""``vericite compare A B`` of two ``vericite judge-eval`` folders (``--task pairs``: results.json with ``kind``
"judge-eval" and judgements.jsonl): two judges on the same labelled pairs, paired by pair id (docs/compare.md).

Per figure, B − A with its paired bootstrap CI and paired permutation p (:func:`vericite.metrics.paired.
paired_difference`: the pairs drawn jointly for both judges; each permutation swaps the two judges' judgements
of a pair): the binary ``balanced_accuracy`` and ``accuracy`` at each run's own threshold, built by judge-eval's
own statistics (``judges.meta_figures.figure_statistics``), and, when both results.json hold ``three_way``,
``balanced_accuracy_3way`` (``judges.meta_three.balanced_statistic``). Besides, the judges' agreement: the share
of pairs where both said the same (binary: supports / not_supports / abstained at each threshold; three-way: the
label or abstained), with a bootstrap CI (``stats.bootstrap_cis``).

Refused, in one line: a judge-eval of another task (alce-human, caqa), a folder whose judgements.jsonl is
unreadable or no longer gives its results.json's balanced accuracy, pair ids that differ (unless ``intersect``),
and a pair id whose gold label or claim differs, or whose evidence does (unless ``same_questions``: then the
output says in how many). Judgements without unique ids (data without an ``id`` field) are paired by line.
Listed under the differences: the judge, its model, a calibration, the threshold and the data file, known by the
sha256 both record (:func:`same_data`: two paths of the same bytes are not a difference, one path whose bytes changed
is), else by its path (results written before the hash: two paths that name one file, a relative and an absolute
one, not a difference).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .. import __version__, jsonl
from ..errors import DataError, VericiteError
from ..judges.meta import THRESHOLD, binary_label, score_judgements
from ..judges.meta_figures import figure_statistics, predictions
from ..judges.meta_three import balanced_statistic, gold_three, predicted
from ..metrics.base import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, point
from ..metrics.paired import paired_difference
from ..stats import bootstrap_cis, ratio_of_sums
from ..types import Judgement
from .compare import SAME, verdict

JUDGE_EVAL = "judge-eval"
CI = "percentile interval of B - A over bootstrap samples of pairs, the same draw for both judges"
P_VALUE = "two-sided paired permutation test, each pair's two judgements swapped: (1 + #{r: |d'_r| >= |d|}) / (1 + R), d = B - A"
#: the compared figures: name -> (short name, what it is)
FIGURES = {
    "balanced_accuracy": ("bal. acc.", "binary balanced accuracy at each run's threshold, as judge-eval's"),
    "accuracy": ("acc.", "binary accuracy at each run's threshold, as judge-eval's"),
    "balanced_accuracy_3way": ("bal. acc. 3-way", "three-way balanced accuracy of the judges' labels, as judge-eval's"),
}
#: what the two runs may differ in, listed under differences: (label, path in results.json)
SHOWN = (("judge", ("judge",)), ("model sha256", ("model", "sha256")), ("calibration", ("calibration", "id")),
         ("threshold", ("threshold",)), ("data", ("data",)))  # fmt: skip


@dataclass
class JudgedRun:
    path: Path
    results: dict[str, Any]
    lines: list[dict[str, Any]]  # judgements.jsonl, in file order
    judgements: list[Judgement]
    ids_unique: bool  # every line has an id of its own (else the runs pair by line)

    @property
    def threshold(self) -> float:
        t = self.results.get("threshold")
        return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else THRESHOLD

    @property
    def three_way(self) -> bool:
        return isinstance(self.results.get("three_way"), Mapping)


def is_judge_eval(path: str | Path) -> bool:
    """Whether ``path`` (a folder or its results.json) holds a judge-eval's results.json (``kind`` "judge-eval")."""
    folder = Path(path)
    file = folder if folder.name == "results.json" and folder.is_file() else folder / "results.json"
    if not file.is_file():
        return False
    try:
        return jsonl.read_json_object(file, "the judge-eval's figures").get("kind") == JUDGE_EVAL
    except DataError:
        return False


def load_judge_eval(path: str | Path) -> JudgedRun:
    """A ``judge-eval --task pairs`` folder, checked: judgements.jsonl readable, one line per judged pair, and
    giving the balanced accuracies of results.json."""
    folder = Path(path)
    if folder.is_file() and folder.name == "results.json":
        folder = folder.parent
    results = jsonl.read_json_object(folder / "results.json", "the judge-eval's figures")
    task = results.get("task") or (results.get("config") or {}).get("task") or "pairs"
    if results.get("kind") != JUDGE_EVAL or task != "pairs":
        raise DataError(f"{folder} is a judge-eval of --task {task}: compare pairs judge-evals of labelled pairs (--task pairs) only")
    file = folder / "judgements.jsonl"
    if not file.is_file():
        raise DataError(f"{folder} has no judgements.jsonl: the judge's judgement of each pair is needed to pair the runs")
    stats = jsonl.ReadStats()
    lines = list(jsonl.read_appended(file, stats, errors="replace"))
    if stats.unreadable or stats.torn_last:
        what = f"{stats.unreadable} unreadable lines" if stats.unreadable else "a half-written last line"
        raise DataError(f"{file} has {what}: compare needs a complete judge-eval")
    judgements = []
    for n, rec in enumerate(lines, 1):
        try:
            binary_label(rec.get("gold"))
            judgements.append(Judgement.from_dict(rec))
        except (TypeError, ValueError) as e:
            raise DataError(f"{file}: line {n} is not a judged pair ({e})") from None
    ids = [rec.get("id") for rec in lines]
    unique = all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids)
    run = JudgedRun(folder, results, lines, judgements, unique)
    _check_consistent(run)
    return run


def _check_consistent(run: JudgedRun) -> None:
    """judgements.jsonl must give results.json's n and balanced accuracies (judge-eval's own code): else a file
    was changed."""
    golds = [rec["gold"] for rec in run.lines]
    got = {"n": len(golds), "balanced_accuracy": score_judgements(golds, run.judgements, run.threshold)["balanced_accuracy"]}
    want = {"n": run.results.get("n"), "balanced_accuracy": run.results.get("balanced_accuracy")}
    if run.three_way:
        g3 = [gold_three(g) for g in golds]
        got["three_way.balanced_accuracy"] = point(balanced_statistic(g3, predicted(run.judgements)), len(golds)) if golds else None
        want["three_way.balanced_accuracy"] = run.results["three_way"].get("balanced_accuracy")
    for k in got:
        x, y = got[k], want[k]
        if (x is None) != (y is None) or (x is not None and not (isinstance(y, (int, float)) and abs(x - y) <= SAME)):
            raise DataError(f"{run.path}: judgements.jsonl gives {k} = {x!r} but results.json says {y!r}; was one of them changed?")


def _keys(run: JudgedRun, by_line: bool) -> dict[str, int]:
    return {(f"line {i + 1}" if by_line else str(rec["id"])): i for i, rec in enumerate(run.lines)}


def _sha(*texts: Any) -> str:
    return hashlib.sha256(json.dumps(list(texts), ensure_ascii=False).encode("utf-8")).hexdigest()


def _said(j: Judgement, pred: bool | None, three: bool) -> str:
    if j.status != "ok" or pred is None:
        return f"abstained ({j.status})"
    label = j.label if three and j.label else ("supports" if pred else "not_supports")
    return f"{label} (P(supports) {j.probability:.3f})" if isinstance(j.probability, (int, float)) else str(label)


def compare_judge_evals(
    a: JudgedRun,
    b: JudgedRun,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    intersect: bool = False,
    same_questions: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the comparison as compare.json holds it, one record per paired pair); raises VericiteError when the runs
    cannot be paired (module docstring)."""
    if resamples < 0:
        raise VericiteError("--resamples must be 0 or more")
    by_line = not (a.ids_unique and b.ids_unique)
    ka, kb = _keys(a, by_line), _keys(b, by_line)
    only_a, only_b = [k for k in ka if k not in kb], [k for k in kb if k not in ka]
    if (only_a or only_b) and not intersect:
        example = (only_a or only_b)[0]
        raise VericiteError(
            f"the judge-evals hold different pairs: {len(only_a)} pair ids only in A, {len(only_b)} only in B (e.g. {example!r} "
            f"only in {'A' if only_a else 'B'}); pass --intersect to compare the {len(ka) - len(only_a)} common ones"
        )
    keys = sorted((k for k in ka if k in kb), key=lambda k: (int(k.split()[1]), k) if by_line else (0, k))
    if not keys:
        raise VericiteError("the judge-evals have no pair id in common")
    ia, ib = [ka[k] for k in keys], [kb[k] for k in keys]
    la, lb = [a.lines[i] for i in ia], [b.lines[i] for i in ib]
    gold_differs = [k for k, x, y in zip(keys, la, lb) if str(x["gold"]).strip().lower() != str(y["gold"]).strip().lower()]
    if gold_differs:
        k = gold_differs[0]
        raise VericiteError(f"{len(gold_differs)} pairs have the same id but other gold labels (first: {k!r}, A {la[keys.index(k)]['gold']!r} / B {lb[keys.index(k)]['gold']!r}): the judge-evals did not judge the same data")
    ja, jb = [a.judgements[i] for i in ia], [b.judgements[i] for i in ib]
    claim_differs = [k for k, x, y in zip(keys, ja, jb) if x.claim != y.claim]
    if claim_differs:
        raise VericiteError(f"{len(claim_differs)} pairs have the same id but other claims (first: {claim_differs[0]!r}): the judge-evals did not judge the same data")
    evidence_differs = [k for k, x, y in zip(keys, ja, jb) if x.evidence != y.evidence]
    if evidence_differs and not same_questions:
        raise VericiteError(
            f"{len(evidence_differs)} pairs have the same id and claim but other evidence (first: {evidence_differs[0]!r}); "
            "if that is meant, --same-questions pairs them by id and claim and says in how many the evidence differs"
        )
    n = len(keys)
    gold = [x["gold"] for x in la]
    pa, pb = predictions(ja, a.threshold), predictions(jb, b.threshold)
    binary = figure_statistics(gold + gold, ja + jb, pa + pb)  # judge-eval's statistics over A's pairs then B's
    joint = {"balanced_accuracy": binary["balanced_accuracy"], "accuracy": binary["accuracy"]}
    three = a.three_way and b.three_way
    g3 = [gold_three(g) for g in gold]
    p3a, p3b = predicted(ja), predicted(jb)
    if three:
        joint["balanced_accuracy_3way"] = balanced_statistic(g3 + g3, p3a + p3b)
    paired = paired_difference(joint, n, resamples=resamples, seed=seed)
    metrics: dict[str, Any] = {}
    for name, (short, _what) in FIGURES.items():
        shown = {"family": "judge-eval", "range": [0.0, 1.0], "short_name": short}
        r = paired.get(name)
        if r is not None and r.diff is not None:
            d = r.to_dict()
            metrics[name] = {**d, "n_a": n, "n_b": n, "only_in": None, "higher_is_better": True,
                             "verdict": verdict(d["ci"], d["p_value"], True), "reason": None, **shown}  # fmt: skip
        else:
            why = "undefined on the paired pairs (a gold class missing)" if r is not None else (
                "not computed in " + " and ".join(s for s, run in (("A", a), ("B", b)) if not run.three_way)
                + ": its results.json has no three_way figures (a judge or gold labels that are not three-way)")  # fmt: skip
            metrics[name] = {"a": None, "b": None, "diff": None, "ci": None, "p_value": None, "n_a": None, "n_b": None,
                             "only_in": None, "higher_is_better": True, "verdict": None, "reason": why, **shown}  # fmt: skip
    ones = np.ones(n)
    agree = {"binary": ratio_of_sums(np.array([x == y for x, y in zip(pa, pb)], dtype=float), ones)}
    if three:
        agree["three_way"] = ratio_of_sums(np.array([x == y for x, y in zip(p3a, p3b)], dtype=float), ones)
    cis = bootstrap_cis(agree, n, resamples=resamples, seed=seed)
    agreement = {k: {"value": point(s, n), "ci": list(cis[k]) if cis[k][0] is not None else None} for k, s in agree.items()}
    values = {"correct": np.array([p is not None and p == binary_label(g) for p, g in zip(pa + pb, gold + gold)], dtype=float)}
    if three:  # each pair's own value: 1 when the judge said its gold class (binary at its threshold; three-way)
        values["correct_3way"] = np.array([p is not None and p == g for p, g in zip(p3a + p3b, g3 + g3)], dtype=float)
    rows = []
    for k, key in enumerate(keys):
        x, y = ja[k], jb[k]
        vals = {m: {"a": float(v[k]), "b": float(v[n + k]), "diff": float(v[n + k] - v[k])} for m, v in values.items()}
        row = {"id": key, "question": x.claim, "input_sha256": _sha(x.claim, x.evidence), "gold": gold[k],
               "output_a": _said(x, pa[k], three), "output_b": _said(y, pb[k], three), "metrics": vals}  # fmt: skip
        if same_questions:
            row["evidence_differs"] = key in evidence_differs
        rows.append(row)
    cmp = {
        "kind": "compare",
        "compared": JUDGE_EVAL,
        "vericite_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "a": _identity(a),
        "b": _identity(b),
        "samples": {"paired": n, "only_a": len(only_a), "only_b": len(only_b), "intersect": intersect,
                    "paired_by": "line" if by_line else "id",
                    **({"same_questions": True, "evidence": "evidence", "evidence_differs": len(evidence_differs)} if same_questions else {})},  # fmt: skip
        "bootstrap": {"resamples": resamples, "permutations": resamples, "seed": seed, "ci_level": DEFAULT_LEVEL, "ci": CI, "p_value": P_VALUE},
        "differences": [_difference(w, a.results, b.results, p) for w, p in SHOWN if not _same(w, a.results, b.results, p)],
        "metrics": metrics,
        "agreement": agreement,
    }
    return cmp, rows


def notes(cmp: Mapping[str, Any]) -> list[str]:
    """The lines a judge-eval comparison adds under its table: how the pairs were paired, the judges' agreement."""
    if cmp.get("compared") != JUDGE_EVAL:
        return []
    lines = []
    if (cmp.get("samples") or {}).get("paired_by") == "line":
        lines.append("paired by line: the judgements have no unique pair ids (their gold labels and claims checked)")
    for k, agr in (cmp.get("agreement") or {}).items():
        value, ci = agr.get("value"), agr.get("ci")
        if isinstance(value, (int, float)) and math.isfinite(value):
            ci_text = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
            what = "the label or abstained" if k == "three_way" else "supports / not_supports / abstained, each at its threshold"
            lines.append(f"agreement of the judges ({k.replace('_', '-')}: {what}): {value:.3f}{ci_text} of the pairs")
    return lines


def same_data(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two judge-evals' results.json judged one data file: by the sha256 of its bytes when both record one
    (``data_sha256``: two paths of the same bytes are one file, one path whose bytes changed between the runs is two),
    else by the paths they record (:func:`same_path`: results written before the hash was recorded)."""
    ha, hb = a.get("data_sha256"), b.get("data_sha256")
    if isinstance(ha, str) and isinstance(hb, str) and ha and hb:
        return ha == hb
    return same_path(a.get("data"), b.get("data"))


def same_path(x: Any, y: Any) -> bool:
    """Whether two recorded data paths name one file: the same text, or the same path once resolved (a relative one
    from the current folder, where judge-eval read it from its own; ``~`` expanded, symlinks followed), or two paths
    of one existing file (``os.path.samefile``); a relative path that resolves elsewhere from here is another file."""
    if x == y:
        return True
    if not (isinstance(x, str) and isinstance(y, str) and x and y):
        return False
    px, py = Path(x).expanduser(), Path(y).expanduser()
    try:
        return px.resolve() == py.resolve() or (px.exists() and py.exists() and os.path.samefile(px, py))
    except (OSError, RuntimeError):  # a path that cannot be resolved (a symlink loop, a folder removed)
        return False


def _same(what: str, a: Mapping[str, Any], b: Mapping[str, Any], path: Sequence[str]) -> bool:
    return same_data(a, b) if what == "data" else _get(a, path) == _get(b, path)


def _difference(what: str, a: Mapping[str, Any], b: Mapping[str, Any], path: Sequence[str]) -> dict[str, Any]:
    """A listed difference: each side's value; for the data, a path with its sha256 when the two paths read alike."""
    x, y = _get(a, path), _get(b, path)
    if what == "data" and x == y and isinstance(a.get("data_sha256"), str) and isinstance(b.get("data_sha256"), str):
        x, y = f"{x} (sha256 {a['data_sha256'][:12]})", f"{y} (sha256 {b['data_sha256'][:12]})"  # the file changed between the runs
    return {"what": what, "a": x, "b": y}


def _get(d: Any, path: Sequence[str]) -> Any:
    for k in path:
        d = d.get(k) if isinstance(d, Mapping) else None
    return d


def _identity(run: JudgedRun) -> dict[str, Any]:
    r = run.results
    return {"path": str(run.path), "kind": JUDGE_EVAL, "created": r.get("created"), "judge": r.get("judge"),
            "judge_kind": r.get("judge_kind"), "model": r.get("model"), "threshold": run.threshold, "three_way": run.three_way,
            "data": r.get("data"), "data_sha256": r.get("data_sha256"), "samples": len(run.lines)}  # fmt: skip
