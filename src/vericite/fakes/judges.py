"""Fake judges: word overlap decides, so the verdict of any pair can be worked out by hand.

* :class:`KeywordJudge` (``fake``): binary. P(supported) = 0.9 when every word of the claim is in the
  evidence, else 0.1.
* :class:`FourClassJudge` (``fake-4class``): CAQA's four labels. All claim words in the evidence: supportive;
  a negation word ("not", "no", "never") in exactly one of claim and evidence, with some words shared:
  contradictory; some words shared: insufficient; none: irrelevant. ``probability`` is the score of
  "supportive" (the positive label, first in ``labels``); ``scores`` (and ``raw``, as JSON) every class's score, as
  the real four-class judges give them.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..types import JudgePair, Judgement

NEGATIONS = frozenset({"not", "no", "never"})
FOUR_LABELS = ("supportive", "insufficient", "contradictory", "irrelevant")


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?\"'()[]").lower() for w in text.split()} - {""}


class KeywordJudge:
    """``KeywordJudge(arg="", **options)``: id ``fake@1`` (``fake:<arg>@1`` with an argument); ``options`` are
    kept and returned by :meth:`options`."""

    labels = ("supported", "not_supported")

    def __init__(self, arg: str = "", **options: Any) -> None:
        self.id = f"fake:{arg}@1" if arg else "fake@1"
        self._options = dict(options)

    def options(self) -> dict[str, Any]:
        return dict(self._options)

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for p in pairs:
            ok = _words(p.claim) <= _words(p.evidence)
            out.append(Judgement(self.id, p.claim, p.evidence, 0.9 if ok else 0.1, self.labels[0] if ok else self.labels[1]))
        return out


class FourClassJudge:
    """The four-label fake (module docstring); id ``fake-4class@1``."""

    id = "fake-4class@1"
    labels = FOUR_LABELS

    def label(self, pair: JudgePair) -> str:
        claim, evidence = _words(pair.claim), _words(pair.evidence)
        content = claim - NEGATIONS
        shared = content & evidence
        if claim <= evidence:
            return "supportive"
        if shared and bool(claim & NEGATIONS) != bool(evidence & NEGATIONS):
            return "contradictory"
        return "insufficient" if shared else "irrelevant"

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for p in pairs:
            label = self.label(p)
            scores = {k: (0.85 if k == label else 0.05) for k in self.labels}
            out.append(Judgement(self.id, p.claim, p.evidence, scores["supportive"], label, json.dumps({"scores": scores}), "ok", scores))
        return out


def binary_from_spec(arg: str, *, ctx: Any, **options: Any) -> KeywordJudge:
    """Registry factory: ``fake`` or ``fake:<name>``."""
    return KeywordJudge(arg, **options)


def four_class_from_spec(arg: str, *, ctx: Any, **options: Any) -> FourClassJudge:
    """Registry factory: ``fake-4class``."""
    return FourClassJudge()


class ThreeWayJudge:
    """``fake-3way``: supports / refutes / not_enough_info by word overlap. Every claim word in the evidence:
    supports; a negation word in exactly one of them, with content words shared: refutes; else
    not_enough_info. The label gets 0.8, the others 0.1; ``probability`` is P(supports)."""

    id = "fake-3way@1"
    labels = ("supports", "refutes", "not_enough_info")

    def label(self, pair: JudgePair) -> str:
        claim, evidence = _words(pair.claim), _words(pair.evidence)
        if claim and claim <= evidence:
            return "supports"
        if (claim - NEGATIONS) & evidence and bool(claim & NEGATIONS) != bool(evidence & NEGATIONS):
            return "refutes"
        return "not_enough_info"

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for p in pairs:
            label = self.label(p)
            scores = {k: (0.8 if k == label else 0.1) for k in self.labels}
            out.append(Judgement(self.id, p.claim, p.evidence, scores["supports"], label, json.dumps({"scores": scores}), "ok", scores))
        return out


def three_way_from_spec(arg: str, *, ctx: Any, **options: Any) -> ThreeWayJudge:
    """Registry factory: ``fake-3way``."""
    return ThreeWayJudge()
