"""Three-way judges (CONNER's factuality and validity): does the evidence support the claim, refute it, or not
say (supports, refutes, not_enough_info)?

* ``llm3:<model>``: a prompted language model; the probability of each label is the softmax over the
  next-token log-probability mass of its words ("Supports", "Refutes", "Neutral", each summed over its
  spellings), from ``next_token_logprobs`` when the backend has it, else the first generated token's
  ``top_logprobs``. None of the words among them: ``status="unparseable"``, never a default verdict.
  ``llm3c:<model>`` (``judges/calibrated.py``) is this judge with contextual calibration (its label prior on
  content-free inputs divided out), under an id of its own; ``llm3f:<fit file>`` (``judges/fitted.py``) is it with
  per-label biases fitted on labelled pairs.
* ``nli3:<model>``: an NLI cross-encoder (``judges/nli.py``) read with its three classes: entailment ->
  supports, contradiction -> refutes, neutral -> not_enough_info (found by the names in ``config.id2label``).

Every judgement has ``scores`` (one probability per label), ``probability`` = P(supports) and ``label`` the
likeliest label.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..types import JudgePair, Judgement, Message
from .log_mass import label_probabilities as _label_probabilities
from .prompted import PromptedJudge, rounded

LABELS = ("supports", "refutes", "not_enough_info")
PROMPT_ID = "judge-3way@1"
SYSTEM = (
    "You are a careful fact-checker. You are given a piece of evidence and a claim. Decide whether the evidence, "
    "on its own, supports the claim, refutes it, or says too little to decide. Answer with one word: Supports, "
    "Refutes or Neutral."
)
USER = "Does the evidence support or refute the claim? Answer Supports, Refutes or Neutral.\n\nEvidence: {evidence}\n\nClaim: {claim}"
#: spellings per label asked for on the next_token_logprobs path
WORDS = {
    "supports": ("Supports", " Supports", "supports", "Support", "support"),
    "refutes": ("Refutes", " Refutes", "refutes", "Refute", "refute"),
    "not_enough_info": ("Neutral", " Neutral", "neutral"),
}


def _label_of(token: str) -> str | None:
    w = token.strip().lower()
    if not w:
        return None
    for label, words in WORDS.items():
        if any(w == x.strip().lower() for x in words):
            return label
    # a first token that is the start of one word only ("Sup", "Ref", "Neut")
    hits = [label for label, words in WORDS.items() if any(x.strip().lower().startswith(w) for x in words)]
    return hits[0] if len(hits) == 1 and len(w) >= 3 else None


def label_probabilities(logprobs: Mapping[str, float | None]) -> tuple[dict[str, float] | None, dict[str, float]]:
    """P(label) for the three labels from a token -> log-probability map (softmax over each label's summed
    mass; a label with no spelling present has zero mass), and the masses found; (None, {}) when none is."""
    return _label_probabilities(logprobs, _label_of, LABELS)


def three_way(judge_id: str, pair: JudgePair, scores: dict[str, float] | None, raw: Mapping[str, Any]) -> Judgement:
    """A three-way judgement: P(supports) as ``probability``, the likeliest label, every label's score."""
    if scores is None:
        return Judgement(judge_id, pair.claim, pair.evidence, None, None, json.dumps(dict(raw), ensure_ascii=False), "unparseable")
    label = max(LABELS, key=lambda k: scores[k])
    six = {k: round(float(v), 6) for k, v in scores.items()}
    return Judgement(judge_id, pair.claim, pair.evidence, six["supports"], label, json.dumps(dict(raw), ensure_ascii=False), "ok", six)


class LLM3Judge(PromptedJudge):
    """``llm3:<model>`` (module docstring)."""

    labels = LABELS
    candidates = tuple(w for words in WORDS.values() for w in words)

    def __init__(self, backend: Any, *, batch_size: int = 8) -> None:
        super().__init__(backend, batch_size=batch_size)
        self.id = f"llm3:{self.model_name}@1"
        self.prompt_version = PROMPT_ID

    @staticmethod
    def messages(pair: JudgePair) -> list[Message]:
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER.format(evidence=pair.evidence, claim=pair.claim)}]

    def label_logprobs(self, prompts: list[list[Message]]) -> list[dict[str, float]]:
        """Per prompt, the token -> log-probability map the label words are read from (one backend call)."""
        return [lps for lps, _ in self.next_token_maps(prompts)]

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out: list[Judgement | None] = [None] * len(pairs)
        for i, pair, lps, why in self.read(pairs):
            if lps is None:
                out[i] = self.failed(pair, why)
                continue
            scores, mass = label_probabilities(lps)
            out[i] = self.judgement(pair, scores, mass)
        return [j for j in out if j is not None]

    def judgement(self, pair: JudgePair, scores: dict[str, float] | None, mass: Mapping[str, float]) -> Judgement:
        """One pair's judgement from its label probabilities and log-masses (the calibrated judge's differs)."""
        return three_way(self.id, pair, scores, {"label_logmass": rounded(mass)})


#: NLI class names (lower-cased) -> the three-way label
NLI_NAMES = {"entailment": "supports", "neutral": "not_enough_info", "contradiction": "refutes"}


class NLI3Judge:
    """``nli3:<model>``: an NLI cross-encoder's three classes as supports / refutes / not_enough_info."""

    labels = LABELS

    def __init__(self, nli: Any) -> None:
        self.nli = nli
        names = {str(n).strip().lower(): n for n in getattr(nli, "labels", ())}
        missing = [n for n in NLI_NAMES if n not in names]
        if missing:
            raise VericiteError(f"nli3:{getattr(nli, 'model_name', nli)}: the model's classes {list(names.values())} lack {', '.join(missing)}: a three-class NLI model is needed")
        self._names = {NLI_NAMES[k]: v for k, v in names.items() if k in NLI_NAMES}
        self.id = f"nli3:{getattr(nli, 'model_name', 'model')}@1"

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for pair, j in zip(pairs, self.nli.judge(pairs)):
            try:
                probs = json.loads(j.raw or "{}")
                scores = {label: float(probs[name]) for label, name in self._names.items()}
            except (ValueError, KeyError, TypeError):
                scores = None
            out.append(three_way(self.id, pair, scores if j.status == "ok" else None, {"nli": j.raw}))
        return out


def model_of_spec(arg: str, kind: str) -> str:
    """The model of a three-way LLM judge's spec: ``qwen2.5-coder-1.5b`` or, as the judge's id shows it,
    ``qwen2.5-coder-1.5b@1`` (the number of its one prompt, ``judge-3way@1``), so an id from a results file can be
    passed back as a spec; another number is refused in one line."""
    name, at, number = arg.rpartition("@")
    if not at:
        return arg
    known = PROMPT_ID.rpartition("@")[2]
    if number.strip() != known or not name.strip():
        raise VericiteError(f"{kind}:{arg}: want {kind}:<model name> or {kind}:<model name>@{known} (its one prompt, {PROMPT_ID})")
    return name.strip()


def llm3_from_spec(arg: str, *, ctx: Any, **options: Any) -> LLM3Judge:
    """Registry factory: ``llm3:<model name>[@1]``."""
    if not arg:
        raise VericiteError("the llm3 judge needs a model: llm3:<model name> (see `vericite models`)")
    from ..models import model_loader

    return LLM3Judge(model_loader(ctx)(model_of_spec(arg, "llm3")), **options)


def nli3_from_spec(arg: str, *, ctx: Any, **options: Any) -> NLI3Judge:
    """Registry factory: ``nli3:<local folder or hub id>`` (a three-class NLI cross-encoder)."""
    if not arg:
        raise VericiteError("the nli3 judge needs a model: nli3:<local folder or hub id>")
    from .nli import NLIJudge

    return NLI3Judge(NLIJudge(arg, threads=ctx.threads, cache=ctx.cache, **options))
