"""CONNER's experiments (seed conner_2310.07289; ``generate/conner.py``, ``generate/conner_select.py``): levels
that change where the knowledge comes from and how it is chosen, every level on the same questions, each scored
by the ``conner`` task (the six measures and ``answer_em``).

* ``conner-sources``: Tables 2–3, level 0 the model zero-shot, 1 few-shot (the config's ``shot``, 4 when it is
  0), 2 BM25-retrieved (top 1 from the config's ``index``), 3 the reference knowledge (NQ's gold passage, WoW's
  gold sentence).
* ``conner-selection``: §5, Tables 7–8. Demonstration selection: level 0 the first n of a seeded pool of m
  candidate demonstrations (random ones, the baseline), 1 the top n of the same pool by Q_know; both few-shot
  with n = the config's ``shot`` (8 when 0) and m = its ``pool`` (30 when unset), decoded greedily. Knowledge
  selection: level 2 one knowledge text sampled with top-p (the baseline: candidate 0), 3 the best by Q_know of
  r = ``candidates`` samples (candidate 0 among them); both zero-shot, sampled at the config's ``temperature``
  (1.0 when it is 0: greedy decoding cannot give r different texts) and ``top_p`` (CONNER's 0.9 when unset).
  γ is the config's ``gamma``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...errors import VericiteError
from .base import Experiment, Transformed, factory

METHOD = "conner-knowledge"
SOURCES = {0: "zero-shot", 1: "few-shot", 2: "BM25 top 1", 3: "reference"}
SELECTIONS = {0: "random demonstrations", 1: "selected demonstrations", 2: "one sampled knowledge", 3: "selected knowledge"}
CONNER_CURVES = (
    ("Intrinsic (Tables 2-3, 7)", ("factuality", "relevance", "coherence_sentence", "coherence_paragraph", "informativeness")),
    ("Extrinsic (Tables 2-3, 8)", ("helpfulness", "validity", "answer_em")),
)
#: CONNER's settings (§5) where the config leaves them unset
DEFAULT_SHOT, DEFAULT_POOL, DEFAULT_TOP_P, DEFAULT_SAMPLING_TEMPERATURE = 8, 30, 0.9, 1.0


def _same(samples: Any, level: Any, seed: int) -> Transformed:
    """Every level answers the same questions (copies: a level never shares a sample object with another)."""
    return Transformed([dataclasses.replace(s) for s in samples])


def _level(level: Any, names: dict[int, str], experiment: str) -> int:
    try:
        n = int(level)
    except (TypeError, ValueError):
        n = -1
    if n not in names:
        raise VericiteError(f"experiment {experiment}: levels are {', '.join(f'{k} {v}' for k, v in names.items())}, not {level}")
    return n


def _sources(level: Any, args: dict[str, Any]) -> dict[str, Any]:
    n = _level(level, SOURCES, "conner-sources")
    base = {k: v for k, v in args.items() if k not in ("select", "candidates")}
    if n == 0:
        out = {**base, "source": "generate", "shot": 0}
    elif n == 1:
        out = {**base, "source": "generate", "shot": int(args.get("shot") or 4)}
    elif n == 2:
        if not args.get("index"):
            raise VericiteError("experiment conner-sources: level 2 (BM25 top 1) needs an index: set index in method_args (vericite docs index nq-500 --index runs/nq-idx), or leave level 2 out of levels")
        out = {**base, "source": "retrieve"}
    else:
        out = {**base, "source": "reference"}
    return {"method": METHOD, "method_args": out}


def _selection(level: Any, args: dict[str, Any]) -> dict[str, Any]:
    n = _level(level, SELECTIONS, "conner-selection")
    if not args.get("index"):
        raise VericiteError("experiment conner-selection: Q_know's factuality needs evidence: set index in method_args (vericite docs index nq-500 --index runs/nq-idx)")
    base = {**args, "source": "generate"}
    if n in (0, 1):
        shot, pool = int(args.get("shot") or DEFAULT_SHOT), int(args.get("pool") or DEFAULT_POOL)
        out = {**base, "shot": shot, "pool": pool, "temperature": 0.0, "select": "none" if n == 0 else "demonstrations"}
    else:
        temperature = float(args.get("temperature") or DEFAULT_SAMPLING_TEMPERATURE)
        top_p = float(args.get("top_p", DEFAULT_TOP_P))
        out = {**base, "shot": 0, "pool": None, "temperature": temperature, "top_p": top_p, "select": "none" if n == 2 else "knowledge"}
    return {"method": METHOD, "method_args": out}


CONNER_SOURCES = Experiment(
    name="conner-sources", x_label="knowledge (0 zero-shot, 1 few-shot, 2 BM25 top 1, 3 reference)", levels=(0, 1, 2, 3), apply=_same,
    description="the model's zero-shot and few-shot knowledge, BM25-retrieved and reference knowledge on the same questions",
    section="CONNER §4, Tables 2-3", curves=CONNER_CURVES, generation=_sources,
)  # fmt: skip
CONNER_SELECTION = Experiment(
    name="conner-selection", x_label="selection (0 random demos, 1 Q_know demos, 2 one sample, 3 Q_know of r samples)", levels=(0, 1, 2, 3), apply=_same,
    description="demonstration selection (top n of m by Q_know) and knowledge selection (argmax of r top-p samples) against their unselected baselines",
    section="CONNER §5, Tables 7-8", curves=CONNER_CURVES, generation=_selection,
)  # fmt: skip

EXPERIMENTS = {e.name: e for e in (CONNER_SOURCES, CONNER_SELECTION)}


sources_from_spec = factory(CONNER_SOURCES)
selection_from_spec = factory(CONNER_SELECTION)
