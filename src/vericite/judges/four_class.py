"""Four-class attribution judges (CAQA §3.2): (question, answer statement, citation) -> supportive,
insufficient, contradictory or irrelevant, with a probability per class and a parse status.

* ``llm4:<model>[@<prompt number>]`` (:class:`LLM4Judge`): a prompted language model with the four definitions
  (the paper's Table 11 instruction for GPT-3.5/4, whose definitions are §3.2's). The class probabilities are the
  softmax over the next-token log-probability mass of each class word (summed over its spellings "Supportive",
  " Supportive", "supportive"...), never parsed from free text; no class word among them -> ``unparseable``.
* ``autois:<binary judge spec>`` (:class:`AutoISMapped`): any binary judge (an NLI model ``autois:nli:<model>``,
  an LLM ``autois:llm:<model>``) mapped as the paper maps AutoIS: entailed -> supportive, else irrelevant.
* ``nli4:<model>`` (:class:`NLI3Mapped`): a three-way NLI classifier, entailment / contradiction / neutral ->
  supportive / contradictory / irrelevant (no class is insufficient), from the classifier's class probabilities.

A judgement's ``label`` is the most probable class, ``scores`` every class's probability, ``probability`` the
probability of supportive (the positive class, first in ``labels``). The pair is ``JudgePair(evidence=citation,
claim=answer statement, question=question)``.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..types import SUPPORTED, JudgePair, Judgement, Message
from .log_mass import label_probabilities
from .prompted import PromptedJudge, rounded

CAQA_LABELS = ("supportive", "insufficient", "contradictory", "irrelevant")


def is_four_class(judge: Any) -> bool:
    """Whether ``judge`` gives CAQA's four classes (its ``labels`` hold all four): what ``--attribution-judge`` and
    ``judge-eval --task caqa`` take, and what VTG's verifiers and ``autois:`` refuse."""
    return set(CAQA_LABELS) <= set(getattr(judge, "labels", ()) or ())


#: the judge prompts, versioned (``caqa-judge@N``); the instruction is fixed once released
PROMPTS: dict[str, dict[str, str]] = {
    "caqa-judge@1": {
        "system": (
            "Your task is to evaluate the relationship between a provided citation and the answer to a specific "
            "question. There are four possible types of relationships: 1. Supportive: Choose this if the citation "
            "directly confirms or is fully in alignment with the answer, providing all necessary information to "
            "substantiate it. 2. Insufficient: Choose this when the citation provides only partial backing for the "
            "answer, lacking some essential details or evidence needed for full support. 3. Contradictory: Choose "
            "this option if the citation is consistent with the intent of the question but directly opposes or "
            "contradicts the answer. 4. Irrelevant: Select this option if the citation does not match the intent "
            "of the question and contains information that is not useful for answering. For each example "
            "provided: First, you need to look at the question given and the answer provided. Then, compare them "
            "with the content of the citation. Finally, select the appropriate relationship category based on "
            "whether the citation supports the answer, is missing information, contradicts itself, or is "
            "irrelevant to the answer. Reply with one word: Supportive, Insufficient, Contradictory or Irrelevant."
        ),
        "user": "Question: {question}\nAnswer: {answer}\nReference: {citation}\nRelationship Category:",
    }
}
DEFAULT_PROMPT = "caqa-judge@1"

#: class words asked for, per class (each spelling's first token is what the model is asked about)
CANDIDATES: dict[str, tuple[str, ...]] = {
    c: (c.capitalize(), " " + c.capitalize(), c, " " + c) for c in CAQA_LABELS
}


def class_probabilities(logprobs: Mapping[str, float | None]) -> tuple[dict[str, float] | None, dict[str, float]]:
    """Softmax over the classes' log-mass (logsumexp over each class's spellings found; a log-probability
    listed under two spellings of one class, the same token, is counted once). A token that belongs to no
    class is ignored; (None, {}) when no class word is there. A class none of whose spellings is there gets 0."""
    return label_probabilities(logprobs, class_of_word, CAQA_LABELS)


def class_of_word(token: str) -> str | None:
    """The class a candidate token spells (a prefix of a class word of 3+ letters: a first token "Support")."""
    w = token.strip().lower()
    if len(w) < 3:
        return None
    hits = [c for c in CAQA_LABELS if c.startswith(w) or w.startswith(c)]
    return hits[0] if len(hits) == 1 else None


def _judgement(judge_id: str, pair: JudgePair, probs: dict[str, float] | None, raw: dict[str, Any]) -> Judgement:
    if probs is None:
        return Judgement(judge_id, pair.claim, pair.evidence, None, None, json.dumps(raw, ensure_ascii=False), "unparseable")
    scores = {c: round(probs.get(c, 0.0), 6) for c in CAQA_LABELS}
    label = max(CAQA_LABELS, key=lambda c: (scores[c], -CAQA_LABELS.index(c)))
    return Judgement(judge_id, pair.claim, pair.evidence, scores["supportive"], label, json.dumps(raw, ensure_ascii=False), "ok", scores)


class LLM4Judge(PromptedJudge):
    """CAQA's four classes from a prompted language model (module docstring)."""

    labels = CAQA_LABELS
    candidates = tuple(s for c in CAQA_LABELS for s in CANDIDATES[c])

    def __init__(self, backend: Any, prompt_version: str = DEFAULT_PROMPT, *, batch_size: int = 8) -> None:
        if prompt_version not in PROMPTS:
            raise VericiteError(f"unknown four-class judge prompt {prompt_version!r} (known: {', '.join(sorted(PROMPTS))})")
        super().__init__(backend, batch_size=batch_size)
        self.prompt_version = prompt_version
        self.id = f"llm4:{self.model_name}@{prompt_version.rpartition('@')[2]}"

    def messages(self, pair: JudgePair) -> list[Message]:
        p = PROMPTS[self.prompt_version]
        return [
            {"role": "system", "content": p["system"]},
            {"role": "user", "content": p["user"].format(question=pair.question or "", answer=pair.claim, citation=pair.evidence)},
        ]

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out: list[Judgement] = []
        for _, pair, lps, text in self.read(pairs, by_evidence=False):
            if lps is None:
                out.append(self.failed(pair, text))
                continue
            probs, mass = class_probabilities(lps)
            raw: dict[str, Any] = {"class_logmass": rounded(mass), "candidates": rounded(lps)}
            if text:
                raw["text"] = text
            out.append(_judgement(self.id, pair, probs, raw))
        return out


class AutoISMapped:
    """A binary judge read as CAQA's classes the way the paper reads AutoIS: supported -> supportive, anything
    else -> irrelevant (scores: supportive = P(supported), irrelevant = 1 - P)."""

    labels = CAQA_LABELS

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = f"autois:{inner.id}"

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for pair, j in zip(pairs, self.inner.judge(pairs)):
            raw = {"inner": j.label, "inner_status": j.status}
            if j.status != "ok" or j.label is None:
                out.append(Judgement(self.id, pair.claim, pair.evidence, None, None, json.dumps(raw), j.status))
                continue
            p = j.probability if j.probability is not None else (1.0 if j.label == SUPPORTED else 0.0)
            probs = {"supportive": p, "insufficient": 0.0, "contradictory": 0.0, "irrelevant": 1.0 - p}
            jj = _judgement(self.id, pair, probs, raw)
            jj.label = "supportive" if j.label == SUPPORTED else "irrelevant"
            out.append(jj)
        return out


#: three-way NLI class names (lower-cased) and the CAQA class each maps to
NLI3_MAP = {"entailment": "supportive", "contradiction": "contradictory", "neutral": "irrelevant"}


def map_nli3(class_probs: Mapping[str, float]) -> dict[str, float] | None:
    """A three-way NLI classifier's class probabilities as CAQA's: entailment -> supportive, contradiction ->
    contradictory, neutral -> irrelevant, insufficient 0; None when a name is not one of the three."""
    out = {c: 0.0 for c in CAQA_LABELS}
    for name, p in class_probs.items():
        c = NLI3_MAP.get(str(name).strip().lower())
        if c is None:
            return None
        out[c] += float(p)
    return out


class NLI3Mapped:
    """A three-way NLI classifier (``judges.nli.NLIJudge`` of a cross-encoder whose ``raw`` holds every class's
    probability) read as CAQA's classes with :func:`map_nli3`."""

    labels = CAQA_LABELS

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.id = f"nli4:{inner.id}"

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        out = []
        for pair, j in zip(pairs, self.inner.judge(pairs)):
            try:
                raw = json.loads(j.raw) if j.raw else {}
            except ValueError:
                raw = {}
            probs = {k: v for k, v in raw.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            mapped = map_nli3(probs) if j.status == "ok" and probs else None
            out.append(_judgement(self.id, pair, mapped, {"inner": probs}))
        return out


def llm4_from_spec(arg: str, *, ctx: Any, **options: Any) -> LLM4Judge:
    """Registry factory: ``llm4:<model name>[@<prompt number>]``."""
    if not arg:
        raise VericiteError("the four-class LLM judge needs a model: llm4:<model name> (see `vericite models`)")
    name, at, number = arg.rpartition("@")
    if at:
        version = f"caqa-judge@{number.strip()}"
        if version not in PROMPTS:
            raise VericiteError(f"unknown four-class judge prompt number {number!r} (known: {', '.join(v.rpartition('@')[2] for v in PROMPTS)})")
        options = {**options, "prompt_version": version}
        arg = name
    from ..models import model_loader

    return LLM4Judge(model_loader(ctx)(arg.strip()), **options)


def autois_from_spec(arg: str, *, ctx: Any, **options: Any) -> AutoISMapped:
    """Registry factory: ``autois:<binary judge spec>`` (``autois:nli:<model>``, ``autois:llm:<model>``)."""
    if not arg:
        raise VericiteError("autois: give the binary judge to map, e.g. autois:nli:<model dir> or autois:llm:<model>")
    from ..registry import create

    inner = create("judges", arg, ctx, **options)
    if is_four_class(inner):
        raise VericiteError(f"autois:{arg}: {getattr(inner, 'id', arg)} is already a four-class judge")
    return AutoISMapped(inner)


def nli3_from_spec(arg: str, *, ctx: Any, **options: Any) -> NLI3Mapped:
    """Registry factory: ``nli4:<model dir or hub id>`` of a three-way NLI cross-encoder, read as the four classes."""
    if not arg:
        raise VericiteError("nli4: give a three-way NLI model: nli4:<model dir or hub id>")
    from ..registry import create

    return NLI3Mapped(create("judges", f"nli:{arg}", ctx, **options))
