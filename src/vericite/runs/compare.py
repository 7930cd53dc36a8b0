"""``vericite compare RUN_A RUN_B``: two evaluations of the same samples, metric by metric, with the paired
difference per sample, a paired bootstrap 95 % CI of the difference and a two-sided p-value (docs/compare.md).

A run is an evaluation folder (``results.json`` + ``samples.jsonl`` of ``vericite evaluate`` or ``vericite
run``) of any task: the task its results.json records serves the comparison from its declaration
(:mod:`vericite.runs.comparable`). Each metric is recomputed from the per-sample records with its family's own
statistics (``protocols.PairedStatistics``) — the one place a comparison gets a metric from is
:func:`run_statistics` — and the bootstrap draws sample ids jointly for both runs (:mod:`vericite.metrics.paired`).

Refused, in one line: runs of different tasks (one task with other options, ``alce:at_most_citations=1``, is
compared by the settings its families declare), runs whose sample ids differ (unless ``intersect``: then the
common ids are compared and the output says how many were left out), a sample id whose inputs (its question,
the evidence it cites and every field its metrics read) differ (unless ``same_questions``: then the evidence may
differ, and the output says in how many samples it does), runs scored differently (metric versions, or a
setting the task's families declare: KaLMA's match mode, judge hypothesis, entailment threshold, [NA]
off-topic rule), and a folder whose samples.jsonl no longer gives its results.json's numbers. The runs may
differ in their model and prompt and in what their families allow (a judge) — comparing two judges on the
same answers is a use — and each such difference is listed under ``differences``.

What it writes (compare.json, compare_samples.jsonl) and how its outputs show a metric are ``compare_output.py``'s.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import __version__, jsonl
from ..errors import DataError, VericiteError
from ..metrics.base import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, AllowedDifference, CorpusStatistics, point
from ..metrics.paired import paired_difference, per_item
from ..types import Triple
from ..versions import same_version, version_number
from .comparable import DEFAULT_TASK, FAILED, NOT_PAIRED, Comparable, comparable, task_name
from .compare_output import BOTH_NOT_COMPUTED

P_VALUE = "two-sided paired permutation test: (1 + #{r: |d'_r| >= |d|}) / (1 + R), d = B - A (docs/compare.md)"
CI = "percentile interval of B - A over bootstrap samples of sample ids, the same draw for both runs"
#: what any two runs may differ in besides what their metric families allow (listed in the output)
ALLOWED = (
    AllowedDifference("model", ("model", "name")),
    AllowedDifference("model sha256", ("model", "sha256")),
    AllowedDifference("prompt", ("prompt",)),
)
#: the fields of compare.json a run's metric entry gives each compared metric: how a reader groups and labels it
PRESENTATION = ("family", "range", "short_name")
#: two values of one metric (recomputed vs results.json) closer than this are the same number
SAME = 1e-9


@dataclass
class EvaluatedRun:
    path: Path
    results: dict[str, Any]
    records: dict[str, dict[str, Any]]  # sample id -> its samples.jsonl record, in file order
    task: str = DEFAULT_TASK  # the task results.json records, which reads it

    @cached_property
    def reader(self) -> Comparable:
        """The task as compare reads it (runs/comparable.py)."""
        return comparable(self.task)


def load_evaluated_run(path: str | Path) -> EvaluatedRun:
    """An evaluation folder (or its results.json), checked: every sample line readable, ids unique, and the
    samples giving the numbers of results.json."""
    from .rundir import load_results

    folder = Path(path)
    if folder.is_file() and folder.name == "results.json":
        folder = folder.parent
    results = load_results(folder)
    if results.get("kind") not in (None, "evaluate", "run") or not isinstance(results.get("metrics"), dict):
        raise DataError(f"{folder} is not an evaluation (results.json kind {results.get('kind')!r}): compare wants vericite evaluate or run folders")
    samples = folder / "samples.jsonl"
    if not samples.is_file():
        raise DataError(f"{folder} has no samples.jsonl: the per-sample scores are needed to pair the runs")
    stats = jsonl.ReadStats()
    records: dict[str, dict[str, Any]] = {}
    duplicates: list[str] = []
    for n, rec in enumerate(jsonl.read_appended(samples, stats, errors="replace"), 1):
        sid, scores = rec.get("id"), rec.get("scores")
        if not isinstance(sid, str) or not isinstance(scores, dict):
            raise DataError(f"{samples}: sample {n} has no {'id' if not isinstance(sid, str) else 'scores'}: not written by vericite evaluate")
        if sid in records:
            duplicates.append(sid)
        records[sid] = rec
    if stats.unreadable or stats.torn_last:
        what = f"{stats.unreadable} unreadable lines" if stats.unreadable else "a half-written last line"
        raise DataError(f"{samples} has {what}: compare needs a complete evaluation")
    if duplicates:
        raise DataError(f"{samples}: {len(duplicates)} sample ids appear more than once (first: {duplicates[0]!r}); runs with duplicate ids cannot be paired")
    run = EvaluatedRun(folder, results, records, task_name(results))
    try:
        _ = run.reader  # the task and its families, resolved now: an unknown one is one line
    except VericiteError as e:
        raise DataError(f"{folder}/results.json: {e}") from None
    _check_consistent(run)
    return run


def run_statistics(records: Sequence[Mapping[str, Any]], task: str = DEFAULT_TASK) -> CorpusStatistics:
    """Every metric of a run of ``task`` over ``records`` (samples.jsonl lines, in the order the comparison pairs
    them), as the metric code defines it: each family of the task's suite rebuilds its statistics from the
    records (``PairedStatistics``); a metric of a family that cannot has none."""
    return comparable(task).statistics(records)


def input_digest(record: Mapping[str, Any], fields: Sequence[str] | None = None) -> dict[str, str]:
    """sha256 of each input of a sample (``fields``, default: the default task's: question, knowledge, gold,
    absent). Triples are compared by their key and label, in any order; ``null`` (no gold set) differs from
    ``[]`` (an empty one)."""
    out = {}
    for key in fields if fields is not None else comparable(DEFAULT_TASK).inputs:
        value = record.get(key)
        if key != "question" and isinstance(value, list):
            try:
                value = sorted([*Triple.from_dict(t).key, Triple.from_dict(t).subject_label] for t in value)
            except (AttributeError, KeyError, TypeError, ValueError):
                pass  # compared as written
        out[key] = hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()
    return out


def input_sha256(record: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    d = input_digest(record, fields)
    return hashlib.sha256("".join(d.values()).encode("ascii")).hexdigest()


def compare_runs(
    a: EvaluatedRun,
    b: EvaluatedRun,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    intersect: bool = False,
    same_questions: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the comparison as compare.json holds it, one record per paired sample). Raises VericiteError when the
    runs cannot be compared (module docstring). ``same_questions``: the samples are paired by id and every input
    but the evidence the answers cite (the task's ``evidence``: ALCE's passages, KaLMA's knowledge), which may
    differ (ALCE's summ and snippet answer from other passages than vanilla); how many differ is said."""
    if resamples < 0:
        raise VericiteError("--resamples must be 0 or more")
    if a.task.split(":", 1)[0] != b.task.split(":", 1)[0]:  # one task with other options: its settings decide
        raise VericiteError(f"run A is an evaluation of task {a.task!r} and run B of task {b.task!r}: runs of different tasks do not compare")
    reader = a.reader
    _check_scoring(a, b)
    only_a = [i for i in a.records if i not in b.records]
    only_b = [i for i in b.records if i not in a.records]
    if (only_a or only_b) and not intersect:
        example = (only_a or only_b)[0]
        raise VericiteError(
            f"the runs hold different samples: {len(only_a)} ids only in A, {len(only_b)} only in B (e.g. {example!r} "
            f"only in {'A' if only_a else 'B'}); pass --intersect to compare the {len(a.records) - len(only_a)} common ones"
        )
    ids = sorted(i for i in a.records if i in b.records)  # sorted: compare A B and compare B A draw the same samples
    if not ids:
        raise VericiteError("the runs have no sample id in common")
    fields = tuple(f for f in reader.inputs if not (same_questions and f == reader.evidence))
    changed = [(i, _first_difference(a.records[i], b.records[i], fields)) for i in ids]
    changed = [(i, k) for i, k in changed if k is not None]
    if changed:
        i, key = changed[0]
        only_evidence = reader.evidence is not None and all(
            _first_difference(a.records[j], b.records[j], tuple(f for f in fields if f != reader.evidence)) is None for j, _ in changed
        )
        hint = (
            f"; if that is meant (a method that answers from other {key}), --same-questions pairs them by id and question and says in how many the {key} differ"
            if only_evidence and key == reader.evidence else ""
        )  # fmt: skip
        raise VericiteError(
            f"{len(changed)} samples have the same id but different inputs (first: {i!r}, its {key} differs): "
            f"the runs did not answer the same questions{hint}"
        )
    evidence_differs = (
        {i for i in ids if _first_difference(a.records[i], b.records[i], (reader.evidence,)) is not None}
        if same_questions and reader.evidence else set()
    )  # fmt: skip
    # the metrics either run reports (a task whose metrics depend on its input, as ALCE's sub-tasks, lists them all)
    reported = [m for m in reader.names if m in (a.results.get("metrics") or {}) or m in (b.results.get("metrics") or {})]
    names = reported or list(reader.names)
    ra, rb = [a.records[i] for i in ids], [b.records[i] for i in ids]
    sa, sb = reader.statistics(ra), reader.statistics(rb)  # which metrics each run has, and their n
    joint = reader.statistics(ra + rb)  # the 2n items the paired statistics weigh (metrics/paired.py)
    live = {m: joint.statistics[m] for m in names if m in sa.live and m in sb.live}
    paired = paired_difference(live, len(ids), resamples=resamples, seed=seed)
    metrics: dict[str, Any] = {}
    for m in names:
        declared = _declared(m, a, b)
        hib = declared.get("higher_is_better") is not False
        n_a, n_b = _n(sa, m), _n(sb, m)
        only = "A" if n_a is not None and n_b is None else "B" if n_b is not None and n_a is None else None
        entry: dict[str, Any] = {"n_a": n_a, "n_b": n_b, "only_in": only, "higher_is_better": hib}
        if m in paired and paired[m].diff is not None:
            d = paired[m].to_dict()
            entry = {**d, **entry, "verdict": verdict(d["ci"], d["p_value"], hib), "reason": None}
        else:
            entry = {"a": None, "b": None, "diff": None, "ci": None, "p_value": None, **entry, "verdict": None,
                     "reason": _why_not(m, sa, sb)}  # fmt: skip
            if not (Comparable.paired(sa, m) or Comparable.paired(sb, m)):  # not paired: each run's own value, as it reports it
                entry["a"], entry["b"] = _own_value(a, m), _own_value(b, m)
                if (only_a or only_b) and (entry["a"] is not None or entry["b"] is not None):
                    entry["reason"] += f"; A and B are each run's results.json value, over all its samples, not only the paired ones"
            elif only is not None:  # the run that computed it: its value over the paired samples, nothing to pair it with
                entry["a" if only == "A" else "b"] = _num(point((sa if only == "A" else sb).statistics[m], len(ids)))
        if "family" in declared:  # how the page groups and labels it, as the runs' results.json declare it
            entry.update({k: declared.get(k) for k in PRESENTATION})
        metrics[m] = entry
    n = len(ids)
    per_sample = {m: per_item(stat, 2 * n) for m, stat in live.items()}
    rows = []
    for k, (i, x, y) in enumerate(zip(ids, ra, rb)):
        vals = {m: {"a": _num(v[k]), "b": _num(v[n + k])} for m, v in per_sample.items()}
        for v in vals.values():
            v["diff"] = None if v["a"] is None or v["b"] is None else v["b"] - v["a"]
        row = {"id": i, "question": x.get("question"), "input_sha256": input_sha256(x, fields),
               "output_a": x.get("output"), "output_b": y.get("output"), "metrics": vals}  # fmt: skip
        if same_questions:
            row["evidence_differs"] = i in evidence_differs
        rows.append(row)
    cmp = {
        "kind": "compare",
        **({"task": a.task} if a.task != DEFAULT_TASK else {}),  # recorded when not the default, as a run's config
        "vericite_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "a": _identity(a),
        "b": _identity(b),
        "samples": {"paired": len(ids), "only_a": len(only_a), "only_b": len(only_b), "intersect": intersect,
                    **({"same_questions": True, "evidence": reader.evidence, "evidence_differs": len(evidence_differs)} if same_questions else {})},  # fmt: skip
        "bootstrap": {"resamples": resamples, "permutations": resamples, "seed": seed, "ci_level": DEFAULT_LEVEL,
                      "ci": CI, "p_value": P_VALUE},
        "differences": _shown_differences(a, b),
        "metrics": metrics,
    }
    return cmp, rows


# --------------------------------------------------------------------------- checks


def _check_consistent(run: EvaluatedRun) -> None:
    """The numbers recomputed from samples.jsonl must be results.json's: else the folder was changed."""
    try:
        cs = run.reader.statistics(list(run.records.values()))
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise DataError(f"{run.path}/samples.jsonl: the per-sample scores cannot be read ({e})") from None
    for m in run.reader.names:
        entry = run.results["metrics"].get(m)
        if not isinstance(entry, Mapping) or not Comparable.paired(cs, m):
            continue
        want = entry.get("value")
        if want is not None and (isinstance(want, bool) or not isinstance(want, (int, float))):
            raise DataError(f"{run.path}/results.json: {m} has a value that is not a number ({want!r})")
        got = point(cs.statistics[m], len(run.records)) if m in cs.live and run.records else None
        if (want is None) != (got is None) or (got is not None and abs(got - want) > SAME):
            show = lambda v: "not computed" if v is None else f"{v:.6g}"  # noqa: E731
            raise DataError(
                f"{run.path}: samples.jsonl gives {m} = {show(got)} but results.json says {show(want)}; was one of them changed?"
            )


def _get(d: Any, path: Sequence[str]) -> Any:
    for k in path:
        if not isinstance(d, Mapping):
            return None
        d = d.get(k)
    return d


def _setting(results: Mapping[str, Any], key: str) -> Any:
    """A compared setting of results.json ``evaluation``: ``key`` is its path there, dotted (``alce.subtask``)."""
    return _get(results, ("evaluation", *key.split(".")))


def _check_scoring(a: EvaluatedRun, b: EvaluatedRun) -> None:
    diffs = []
    va, vb = a.results.get("metric_versions") or {}, b.results.get("metric_versions") or {}
    for fam in sorted(set(va) & set(vb)):
        if not same_version(fam, va[fam], vb[fam]):  # "1" (before name@N) and "kalma@1" are one version
            diffs.append(f"{fam} metric version {version_number(va[fam])} vs {version_number(vb[fam])}")
    for key, when in a.reader.compared.items():
        if when == key and not (_setting(a.results, key) and _setting(b.results, key)):
            continue  # a setting that matters only when both runs used it (ALCE's QA model)
        if when is not None and not (_setting(a.results, when) or _setting(b.results, when)):
            continue  # a setting that matters only with another (KaLMA's claim template, only when a judge ran)
        x, y = _setting(a.results, key), _setting(b.results, key)
        if x != y and not _one_version(x, y):
            diffs.append(f"{key} {x!r} vs {y!r}")
    if diffs:
        raise VericiteError("the runs were scored differently, so their metrics do not compare: " + "; ".join(diffs))


def _one_version(x: Any, y: Any) -> bool:
    """Whether two recorded settings are one version written two ways: a bare ``"1"`` (files written before the
    ``name@N`` scheme, e.g. ``evaluation.metrics``) and ``"kalma@1"``. Two ids that both name their family must
    be equal."""
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in (x, y)):
        return False
    bare = [v for v in (str(x), str(y)) if "@" not in v]
    return len(bare) == 1 and version_number(x) == version_number(y)


def _first_difference(x: Mapping[str, Any], y: Mapping[str, Any], fields: Sequence[str]) -> str | None:
    dx, dy = input_digest(x, fields), input_digest(y, fields)
    return next((k for k in fields if dx[k] != dy[k]), None)


def _shown_differences(a: EvaluatedRun, b: EvaluatedRun) -> list[dict[str, Any]]:
    out = []
    for label, path, _key in (*a.reader.allowed, *ALLOWED):
        x, y = _get(a.results, path), _get(b.results, path)
        if x != y:
            out.append({"what": label, "a": x, "b": y})
    return out


def _declared(name: str, a: EvaluatedRun, b: EvaluatedRun) -> Mapping[str, Any]:
    """The metric's entry in A's results.json, else B's: its direction and how it is shown."""
    for run in (a, b):
        entry = (run.results.get("metrics") or {}).get(name)
        if isinstance(entry, Mapping):
            return entry
    return {}


def _identity(run: EvaluatedRun) -> dict[str, Any]:
    r = run.results
    return {
        "path": str(run.path),
        "kind": r.get("kind"),
        "created": r.get("created"),
        "model": r.get("model"),
        "prompt": r.get("prompt"),
        **{d.key: _get(r, d.path) for d in run.reader.allowed if d.key},
        "evaluation": {k: _setting(r, k) for k in run.reader.compared},
        "metric_versions": r.get("metric_versions"),
        "samples": len(run.records),
    }


def verdict(ci: list[float] | None, p_value: float | None, higher_is_better: bool) -> str | None:
    """Which run is better: only when the CI of B - A excludes 0 *and* p < 1 - CI level (both tests agree);
    None without resamples."""
    if not ci or p_value is None:
        return None
    lo, hi = ci
    if (lo > 0 or hi < 0) and p_value < 1.0 - DEFAULT_LEVEL:
        return "B better" if (lo > 0) == higher_is_better else "A better"
    return "no clear difference"


def _why_not(m: str, sa: CorpusStatistics, sb: CorpusStatistics) -> str:
    if not (Comparable.paired(sa, m) or Comparable.paired(sb, m)):
        failed = sa.details.get(m, {}).get(FAILED) or sb.details.get(m, {}).get(FAILED)
        return f"not compared: {failed}" if failed else NOT_PAIRED
    ra, rb = (None if m in cs.live else cs.reasons.get(m, "not computed") for cs in (sa, sb))
    if ra is not None and ra == rb:
        return f"{BOTH_NOT_COMPUTED}{ra}"
    if ra is not None and rb is not None:
        return "not computed in " + "; ".join(f"{side}: {r}" for side, r in (("A", ra), ("B", rb)))
    if ra is not None or rb is not None:  # computed in one run: said first, then why not in the other
        return f"only in {'B' if ra is not None else 'A'}; not computed in {'A' if ra is not None else 'B'}: {ra if ra is not None else rb}"
    return "undefined on the paired samples"


def _n(cs: CorpusStatistics, m: str) -> int | None:
    """The paired samples ``m`` is defined on in one run, as its statistics count them; None where that run did
    not compute it, or its family cannot recompute it (nothing was counted: not a 0)."""
    return int(cs.ns.get(m, 0)) if Comparable.paired(cs, m) and m in cs.live else None


def _own_value(run: EvaluatedRun, m: str) -> float | None:
    """``m``'s value in ``run``'s results.json (a number, else None): what a metric compare cannot pair shows."""
    entry = (run.results.get("metrics") or {}).get(m)
    value = entry.get("value") if isinstance(entry, Mapping) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)
