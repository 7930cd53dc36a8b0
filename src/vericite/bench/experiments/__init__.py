"""Experiments: what varies across the levels of a run, and the samples of each level. ``base.py`` holds what
every experiment is (:class:`Experiment`, :class:`Transformed`), ``kalma.py`` KaLMA's experiments (conscious
incompetence, retrieval accuracy) and their sample transforms, ``vtg.py`` VTG's (sweeps of N, M, T, the
ablations, the methods on the same questions) and ``conner.py`` CONNER's (where the knowledge comes from, and §5's
selections by Q_know), whose levels change the generation instead. Each experiment is registered in
``registry.experiments`` (``vericite/_builtins.py``); :func:`get_experiment` builds one by name."""

from __future__ import annotations

from . import kalma
from .base import Experiment, Transformed
from .kalma import (
    CONSCIOUS_INCOMPETENCE,
    KALMA_CURVES,
    RETRIEVAL_ACCURACY,
    PhrasingPair,
    corrupt_retrieval,
    n_replaced,
    pair_phrasings,
    removal_order,
    remove_knowledge,
    with_phrasing,
)

__all__ = ["Experiment", "Transformed", "get_experiment", *kalma.__all__]


def get_experiment(name: str) -> Experiment:
    """The experiment registered as ``name`` (``registry.create("experiments", name)``); an unknown name raises
    UnknownNameError with did-you-mean."""
    from ...registry import create

    return create("experiments", name)  # type: ignore[no-any-return]
