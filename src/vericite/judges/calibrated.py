"""``llm3c:<model>``: the three-way LLM judge (``llm3:``, ``judges/three_way.py``) with contextual calibration
(Zhao et al. 2021, "Calibrate Before Use").

A prompted model has a prior over its answer words that does not depend on the pair: Qwen2.5-Coder-1.5B's
``llm3`` says "Neutral" for 280 of VitaminC's first 500 pairs where the gold has 84 (docs/judges.md). Contextual
calibration estimates that prior from *content-free* inputs and divides it out:

* the prior ``p_cf`` is the mean of the judge's three label probabilities on the judge's own prompt with evidence
  and claim both set to each content-free string of :data:`CONTENT_FREE` ("N/A", "" and "[MASK]", the paper's);
  it is asked once per judge instance, before its first pair, through the same backend (so through the call cache);
* a pair's calibrated probabilities are ``p(label) / p_cf(label)``, renormalised to sum to 1 (the paper's
  ``W = diag(p_cf)^-1``, ``b = 0``); ``label`` is the likeliest of them, ``probability`` the calibrated P(supports).

Every judgement's ``raw`` keeps the label log-masses, the ``uncalibrated`` probabilities (what ``llm3:`` would
say) and the ``content_free_prior``. :meth:`CalibratedLLM3Judge.calibration` gives the method, the inputs and the
prior, which ``vericite evaluate`` (results.json ``judges``) and ``vericite judge-eval`` (results.json
``calibration``) record; ``options()`` (the settings that key checkpoints) holds the method and the inputs only,
so reading them never asks the model.

A content-free input whose answer holds none of the three words (unparseable), or a prior that gives a label no
probability at all (possible only on the ``top_logprobs`` path, where a word outside the top 20 has no mass), stops
the judge with a one-line error before any pair is judged: falling back to uncalibrated scores would give
verdicts of two kinds under one id. ``llm3:<model>`` is the uncalibrated judge.

The id is ``llm3c:<model>@1``: the prompt ``judge-3way@1`` with the content-free inputs ``content-free@1``; a change
of either is a new number. ``llm3:`` is unchanged, and a measurement of one is never read as the other's.
"""

from __future__ import annotations

import threading
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..types import JudgePair, Judgement
from .three_way import LABELS, LLM3Judge, label_probabilities, model_of_spec, three_way

#: the content-free strings (evidence and claim both set to each), Zhao et al.'s "N/A", "" and "[MASK]"
CONTENT_FREE = ("N/A", "", "[MASK]")
#: the calibration's version: the content-free inputs and the rule; a change is a new number (and a new judge id)
CALIBRATION_ID = "content-free@1"
METHOD = "contextual calibration (Zhao et al. 2021): p(label) / p_cf(label), renormalised"


def calibrate(scores: Mapping[str, float], prior: Mapping[str, float]) -> dict[str, float]:
    """``scores`` divided by the content-free ``prior``, label by label, renormalised to sum to 1."""
    weighted = {k: float(scores[k]) / float(prior[k]) for k in LABELS}
    total = sum(weighted.values())
    return {k: v / total for k, v in weighted.items()}


class CalibratedLLM3Judge(LLM3Judge):
    """``llm3c:<model>`` (module docstring)."""

    def __init__(self, backend: Any, *, batch_size: int = 8) -> None:
        super().__init__(backend, batch_size=batch_size)
        self.id = f"llm3c:{self.model_name}@1"
        self._prior: dict[str, float] | None = None
        self._lock = threading.Lock()

    def content_free_prior(self) -> dict[str, float]:
        """The mean label probabilities on the content-free inputs, asked of the model once (then kept)."""
        with self._lock:
            if self._prior is None:
                self._prior = self._ask_prior()
            return dict(self._prior)

    def _ask_prior(self) -> dict[str, float]:
        pairs = [JudgePair(evidence=x, claim=x) for x in CONTENT_FREE]
        rows = self.label_logprobs([self.messages(p) for p in pairs])
        if len(rows) != len(pairs):
            raise VericiteError(f"backend {self.model_name!r} answered {len(rows)} of {len(pairs)} content-free prompts")
        per = []
        for x, lps in zip(CONTENT_FREE, rows):
            scores, _ = label_probabilities(lps)
            if scores is None:
                seen = ", ".join(sorted(map(repr, lps))[:8]) or "none"
                raise VericiteError(
                    f"{self.id}: the content-free input {x!r} got none of Supports, Refutes, Neutral as the model's next word "
                    f"(tokens: {seen}), so its label prior cannot be estimated; use llm3:{self.model_name} (uncalibrated)"
                )
            per.append(scores)
        prior = {k: sum(s[k] for s in per) / len(per) for k in LABELS}
        zero = [k for k in LABELS if not prior[k] > 0.0]
        if zero:
            raise VericiteError(
                f"{self.id}: the content-free inputs give {', '.join(zero)} no probability (none of its words among the "
                f"model's likeliest next tokens), so it cannot be calibrated; use llm3:{self.model_name} (uncalibrated)"
            )
        return prior

    def calibration(self) -> dict[str, Any]:
        """What results record of the calibration: its version, method, inputs and the prior (asked when not yet)."""
        return {"id": CALIBRATION_ID, "method": METHOD, "content_free_inputs": list(CONTENT_FREE), "content_free_prior": self.content_free_prior()}

    def options(self) -> dict[str, Any]:
        """The settings that change its verdicts besides the id (never asks the model; the prior is :meth:`calibration`'s)."""
        return {"calibration": CALIBRATION_ID, "content_free_inputs": list(CONTENT_FREE)}

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        if pairs:
            self.content_free_prior()  # before any pair: an unusable prior stops the judge here
        return super().judge(pairs)

    def judgement(self, pair: JudgePair, scores: dict[str, float] | None, mass: Mapping[str, float]) -> Judgement:
        prior = self.content_free_prior()
        raw: dict[str, Any] = {"label_logmass": {k: round(v, 6) for k, v in mass.items()}}
        if scores is not None:
            raw["uncalibrated"] = {k: round(float(v), 6) for k, v in scores.items()}
        raw["content_free_prior"] = {k: round(v, 6) for k, v in prior.items()}
        raw["calibration"] = CALIBRATION_ID
        return three_way(self.id, pair, None if scores is None else calibrate(scores, prior), raw)


def llm3c_from_spec(arg: str, *, ctx: Any, **options: Any) -> CalibratedLLM3Judge:
    """Registry factory: ``llm3c:<model name>[@1]``."""
    if not arg:
        raise VericiteError("the calibrated three-way judge needs a model: llm3c:<model name> (see `vericite models`)")
    from ..models import model_loader

    return CalibratedLLM3Judge(model_loader(ctx)(model_of_spec(arg, "llm3c")), **options)
