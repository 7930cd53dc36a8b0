"""KaLMA's experiments as sample transforms: pure, seeded, deterministic functions from samples to samples.

A runner loads a dataset once and asks an :class:`~vericite.bench.experiments.base.Experiment` for the samples of
each level::

    exp = get_experiment("conscious-incompetence")
    for level, samples in exp.iter_levels(load_samples("biokalma-gold"), seed=0):
        ...generate and evaluate ``samples``; report ``level`` on the x axis ``exp.x_label``...

No transform changes its input: every returned :class:`Sample` is a new record with new lists and a new ``meta``.
Randomness comes from ``random.Random`` seeded with text built from ``seed`` and the sample id, so a sample's
draw does not depend on which other samples are present, and results repeat across runs and Python versions.

**Conscious incompetence** (KaLMA §4.4, §5.2, Table 5; metrics.md §1) — :func:`remove_knowledge`.
 - Removed triples are drawn from the sample's minimum knowledge set (``gold``), removed from the knowledge given
   to the model, and recorded in ``absent``, the ground truth for [NA] precision and recall.
 - Levels are nested, as in the paper ("in subsequent rounds, we each remove one additional knowledge"): each
   sample has one seeded order of its gold triples, and level n removes the first n of it. Level 0 is the
   unchanged sample with ``absent=[]``.
 - ``gold`` stays the full minimum set. Citation precision and recall are computed against it, and correctness
   against the knowledge the model was given (the reduced graph, ``knowledge``). This is what the paper reports:
   §5.2 / Table 5 show recall falling 57.1 -> 42.5 -> 31.4 -> 20.4 as triples are removed, which happens only when
   the removed triples still count in the denominator (they cannot be cited correctly once removed); the released
   evaluation (``auto_eval/eval_recall.py``) likewise scores every removal level against the same full set. So
   at level n, recall of a sample cannot exceed (|gold| - n) / |gold|: that drop is the effect being measured.
 - Samples without a gold set, or with fewer distinct gold triples than the level asks to remove, are skipped
   and counted (``result.skipped``), never partly processed: the released code silently removes fewer triples,
   which mixes removal levels in one row of Table 5. :class:`Experiment` skips with the *largest* level run, so
   every level is measured on the same questions.

**Retrieval accuracy** (KaLMA §5.3, Figure 5; metrics.md §1) — :func:`corrupt_retrieval`.
 - At accuracy a %, round(N · (100 − a) / 100) samples (half rounds up) get another sample's graph in place of
   their own; gold (and absent) unchanged, so recall measures what a wrong retrieval costs.
 - Which samples are replaced: one seeded order of all samples, the first k of it — so levels are nested, as in
   the paper ("we randomly replace additional 20% knowledge graphs").
 - Whose graph: drawn per sample (seeded by its id) from the other samples whose graph shares no entity with its
   own and is not empty — "never its own", and never a graph of the same person under another row. The released
   code instead swaps in one fixed graph (Lionel Messi) for every replaced entity; the paper's text and
   metrics.md say "other questions' graphs", which is what this does. ``meta["retrieval_source"]`` records the
   id of the sample whose graph was used (its own id when kept).

**General vs specific** (KaLMA §5.5): nothing to transform — phrasing is chosen when a dataset is loaded.
:func:`with_phrasing` loads both phrasings and :func:`pair_phrasings` pairs them row by row. These two and
:class:`PhrasingPair` are groundwork used only by tests so far: no command compares the two phrasings yet (a
run takes one phrasing; two runs are compared with ``vericite compare``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ...errors import DataError, VericiteError
from ...types import Sample, Triple
from .base import Experiment, Transformed, factory

__all__ = [
    "remove_knowledge",
    "removal_order",
    "n_replaced",
    "corrupt_retrieval",
    "PhrasingPair",
    "pair_phrasings",
    "with_phrasing",
    "KALMA_CURVES",
    "CONSCIOUS_INCOMPETENCE",
    "RETRIEVAL_ACCURACY",
]


def _rng(seed: int, *parts: object) -> random.Random:
    # str seeds are hashed with SHA-512 by random.Random: stable across processes, unlike hash()
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def _copy(s: Sample, **changes: Any) -> Sample:
    base = dict(
        knowledge=list(s.knowledge),
        gold=list(s.gold) if s.gold is not None else None,
        absent=list(s.absent) if s.absent is not None else None,
        gold_entities=list(s.gold_entities) if s.gold_entities is not None else None,
        meta=dict(s.meta),
    )
    base.update(changes)
    return replace(s, **base)


def _distinct(triples: Sequence[Triple]) -> list[Triple]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for t in triples:
        if t.key not in seen:
            seen.add(t.key)
            out.append(t)
    return out


# --------------------------------------------------------------------------- conscious incompetence


def removal_order(sample: Sample, seed: int) -> list[Triple]:
    """The sample's distinct gold triples in the seeded order removal follows (level n removes the first n)."""
    gold = _distinct(sample.gold or [])
    order = sorted(gold, key=lambda t: t.key)  # the draw must not depend on the order gold was written in
    _rng(seed, "remove", sample.id).shuffle(order)
    return order


def remove_knowledge(samples: Sequence[Sample], n_removed: int, seed: int = 0, *, min_gold: int | None = None) -> Transformed:
    """Conscious incompetence: remove ``n_removed`` triples of each sample's minimum set from its knowledge.

    Returns new samples whose ``knowledge`` lacks the removed triples (every copy of them), whose ``absent``
    lists them, and whose ``gold`` is unchanged (the full minimum set; see the module docstring for why), with
    ``meta["removed"] = n_removed``. Samples with no gold set or fewer than ``max(n_removed, min_gold)``
    distinct gold triples are skipped: their ids are in ``result.skipped``.
    """
    if isinstance(n_removed, bool) or not isinstance(n_removed, int) or n_removed < 0:
        raise VericiteError(f"removed triples must be a whole number >= 0, not {n_removed!r}")
    need = max(n_removed, min_gold or 0)
    out: list[Sample] = []
    skipped: list[str] = []
    for s in samples:
        if s.gold is None or len(_distinct(s.gold)) < need:
            skipped.append(s.id)
            continue
        removed = removal_order(s, seed)[:n_removed]
        gone = {t.key for t in removed}
        meta = dict(s.meta, experiment="conscious-incompetence", removed=n_removed)
        out.append(_copy(s, knowledge=[t for t in s.knowledge if t.key not in gone], absent=removed, meta=meta))
    why = f"fewer than {need} gold triples (or no gold set)" if skipped else ""
    return Transformed(out, skipped, why)


# --------------------------------------------------------------------------- retrieval accuracy


def n_replaced(n_samples: int, accuracy_pct: float) -> int:
    """How many of ``n_samples`` graphs are replaced at ``accuracy_pct`` % retrieval accuracy (half rounds up)."""
    if not 0 <= accuracy_pct <= 100:
        raise VericiteError(f"retrieval accuracy must be between 0 and 100 (%), not {accuracy_pct!r}")
    wrong = n_samples * (100 - accuracy_pct) / 100
    return min(n_samples, int(wrong + 0.5 + 1e-9))


def corrupt_retrieval(samples: Sequence[Sample], accuracy_pct: float, seed: int = 0) -> Transformed:
    """Retrieval accuracy: give (100 − ``accuracy_pct``)% of the samples another sample's graph.

    Every returned sample carries ``meta["retrieval_accuracy"]``, ``meta["retrieval_replaced"]`` (bool) and
    ``meta["retrieval_source"]`` (the id of the sample whose graph it now holds; its own id when kept). Gold,
    absent and gold_entities are unchanged. Nothing is skipped. Raises :class:`DataError` when a sample chosen for
    replacement has no eligible donor (another sample with a non-empty graph sharing none of its entities).
    """
    samples = list(samples)
    k = n_replaced(len(samples), accuracy_pct)
    ids = [s.id for s in samples]
    if len(set(ids)) != len(ids):
        raise DataError("corrupt_retrieval needs distinct sample ids")
    order = sorted(range(len(samples)), key=lambda i: ids[i])
    _rng(seed, "retrieval-order").shuffle(order)
    chosen = set(order[:k])
    subjects = [{t.subject.strip() for t in s.knowledge} for s in samples]
    out: list[Sample] = []
    for i, s in enumerate(samples):
        meta = dict(s.meta, experiment="retrieval-accuracy", retrieval_accuracy=accuracy_pct)
        if i not in chosen:
            out.append(_copy(s, meta=dict(meta, retrieval_replaced=False, retrieval_source=s.id)))
            continue
        donors = sorted(
            (j for j in range(len(samples)) if j != i and samples[j].knowledge and not (subjects[j] & subjects[i])),
            key=lambda j: ids[j],
        )
        if not donors:
            raise DataError(f"sample {s.id!r}: no other sample has a graph about different entities to swap in")
        j = _rng(seed, "retrieval-donor", s.id).choice(donors)
        meta.update(retrieval_replaced=True, retrieval_source=ids[j])
        out.append(_copy(s, knowledge=list(samples[j].knowledge), meta=meta))
    return Transformed(out)


# --------------------------------------------------------------------------- general vs specific


@dataclass(frozen=True)
class PhrasingPair:
    """The same row in both phrasings (KaLMA §5.5). Groundwork, used only by tests so far (module docstring)."""

    key: Any  # meta["row"] when the samples carry one, else the sample id
    specific: Sample
    general: Sample


def _row_key(s: Sample) -> Any:
    return s.meta.get("row", s.id) if s.meta else s.id


def pair_phrasings(specific: Sequence[Sample], general: Sequence[Sample], *, strict: bool = True) -> list[PhrasingPair]:
    """Pair the specific and general samples of the same row (by ``meta["row"]``, else by id), in the order of
    ``specific``. ``strict`` (default): a sample without a partner is a :class:`DataError`; otherwise it is
    left out. Groundwork, used only by tests so far (module docstring)."""
    gen: dict[Any, Sample] = {}
    for g in general:
        key = _row_key(g)
        if key in gen:
            raise DataError(f"two general samples for row {key!r}")
        gen[key] = g
    pairs = []
    unpaired = 0
    for s in specific:
        g = gen.pop(_row_key(s), None)
        if g is None:
            unpaired += 1
            continue
        pairs.append(PhrasingPair(_row_key(s), s, g))
    unpaired += len(gen)
    if strict and unpaired:
        raise DataError(f"{unpaired} sample(s) have no partner in the other phrasing")
    return pairs


def with_phrasing(dataset: str = "biokalma-gold", path: str | None = None, *, limit: int | None = None) -> list[PhrasingPair]:
    """Load ``dataset`` in both phrasings and pair them row by row (the first ``limit`` rows when given).
    Groundwork, used only by tests so far (module docstring)."""
    from ...datasets import load_samples

    specific = load_samples(dataset, phrasing="specific", path=path)
    general = load_samples(dataset, phrasing="general", path=path)
    if limit is not None:
        specific, general = specific[:limit], general[:limit]
    return pair_phrasings(specific, general)


# --------------------------------------------------------------------------- the KaLMA experiments


def _enough_gold(s: Sample, levels: Sequence[Any]) -> bool:
    return s.gold is not None and len(_distinct(s.gold)) >= max([int(x) for x in levels] + [0])


# the curves of KaLMA Figure 4 ([NA]) and Figure 5 (citation quality), drawn for either experiment
KALMA_CURVES = (
    ("[NA] precision / recall / F1", ("na_precision", "na_recall", "na_f1")),
    ("Citation quality (micro)", ("citation_correctness", "citation_precision_micro", "citation_recall_micro", "citation_f1_micro")),
)

CONSCIOUS_INCOMPETENCE = Experiment(
    name="conscious-incompetence",
    x_label="removed triples",
    levels=(0, 1, 2, 3),
    apply=lambda samples, level, seed: remove_knowledge(samples, int(level), seed),
    description="remove 1, 2, 3 triples of each minimum knowledge set from the graph; they become the absent set",
    section="KaLMA §4.4, §5.2",
    eligible=_enough_gold,
    curves=KALMA_CURVES,
)

RETRIEVAL_ACCURACY = Experiment(
    name="retrieval-accuracy",
    x_label="retrieval accuracy (%)",
    levels=(100, 80, 60, 40, 20),
    apply=lambda samples, level, seed: corrupt_retrieval(samples, level, seed),
    description="replace a random 0, 20, 40, 60, 80 % of the graphs with other questions' graphs",
    section="KaLMA §5.3",
    descending=True,
    curves=KALMA_CURVES,
)

conscious_incompetence_from_spec = factory(CONSCIOUS_INCOMPETENCE)
retrieval_accuracy_from_spec = factory(RETRIEVAL_ACCURACY)
