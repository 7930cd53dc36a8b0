"""ALCE's judged metrics, exactly as its ``eval.py`` computes them (metrics.md §2): citation recall and precision
(``compute_autoais``) and ELI5's claims (``compute_claims``), with every distinct (premise, hypothesis) pair of a
corpus judged once (``judging.judge_corpus``), where ALCE's precision loop asks many pairs again.

The premise formatting is ``attribution.alce``'s (:func:`format_document`, :func:`premise`; still importable from
here). Per answer, on the preprocessed output (``attribution.alce``): the sentences are Punkt's (QAMPARI: the question, a
space and each comma item); an answer without a sentence is left out of both citation means (ALCE's
``continue``), and counted. Per sentence, its ``[n`` markers as ALCE reads them (``ref = n - 1``):

* none, or any ``ref >= len(docs)`` (out of range, checked before the cut): the sentence is not entailed and adds
  no citation. ``[0]`` is ``ref = -1``, which ALCE's Python reads as the *last* document: so does vericite, so
  that its numbers are ALCE's (the format still shows ``[0]`` as out of range); with no document at all, ``[0]``
  is out of range (ALCE's eval.py stops there with an IndexError);
* otherwise the first ``at_most_citations`` (3) refs are used and counted; premise = each used document as
  ``"Title: {title}\\n{text}"`` joined by ``"\\n"``, hypothesis = the sentence without citations, stripped;
  recall 1 iff the judge says the premise entails it;
* precision, per counted citation: a sentence that is not entailed scores 0 for each; an entailed sentence with
  one citation scores 1; with several, citation c scores 1 unless c alone does not entail the sentence AND the
  others (the list without c's first occurrence) still do. Per answer: citations scoring 1 / citations counted
  (0 when none).

Judging goes in rounds, because which pairs ALCE asks depends on earlier verdicts: every sentence's joint pair
(and every claim), then the single-document pairs of entailed sentences with several citations, then the
"the others" pairs of their citations that alone do not entail. A pair already judged is never sent again.
A judgement that is unparseable or failed (a pair missing from a table judge) leaves its answer out of the
citation means, counted: never a silent 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..attribution.alce import AT_MOST_CITATIONS, citation_numbers, format_document, hypothesis, premise, preprocess_output, qampari_items, remove_citations, sent_tokenize
from ..types import JudgePair, Judgement
from .judging import Progress, judge_corpus, judgement_verdict


def alce_sentences(output: str, question: str, qampari: bool) -> list[str]:
    """The sentences ALCE judges: Punkt's, or QAMPARI's ``question + " " + item``."""
    if qampari:
        return [f"{question} {x}" for x in qampari_items(output)]
    return sent_tokenize(output)


@dataclass
class SentencePlan:
    """One sentence as the citation metrics read it."""

    text: str
    hypothesis: str
    markers: list[int]  # every [n as written
    refs: list[int] | None  # the used 0-based refs; None when the sentence is rejected (no citation, out of range)

    @property
    def joint(self) -> list[int]:
        return self.refs or []


def plan_sentences(output: str, question: str, passages: Sequence[Any], *, qampari: bool = False, at_most: int | None = AT_MOST_CITATIONS) -> list[SentencePlan]:
    out = []
    for sent in alce_sentences(output, question, qampari):
        markers = citation_numbers(sent)
        refs: list[int] | None = [n - 1 for n in markers]
        # ALCE's test is ref >= len(docs); [0] (ref -1) with no document at all is out of range too (ALCE: an IndexError)
        if not refs or any(r >= len(passages) or r < -len(passages) for r in refs):  # type: ignore[union-attr]
            refs = None
        elif at_most is not None:
            refs = refs[:at_most]
        out.append(SentencePlan(sent, hypothesis(sent), markers, refs))
    return out


@dataclass
class AnswerCitations:
    """One answer's citation scores and what they rest on."""

    recall: float | None = None  # None: no sentence, or a judgement missing
    precision: float | None = None
    sentences: list[dict[str, Any]] = field(default_factory=list)  # per sentence: entailed, and per used citation
    citations: int = 0  # citations counted (the precision's denominator)
    alce_calls: int = 0  # judge calls ALCE's algorithm makes for this answer
    unjudged: bool = False  # a judgement it needs is unparseable or failed
    claims: float | None = None
    judgements: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = {"citation_recall": self.recall, "citation_precision": self.precision, "citations": self.citations, "sentences": self.sentences}
        if self.claims is not None:
            d["claims_nli"] = self.claims
        if self.unjudged:
            d["unjudged"] = True
        return d


class _Judged:
    """The corpus's verdicts so far; each round judges only the pairs not seen yet."""

    def __init__(self, judge: Any, progress: Progress | None) -> None:
        self.judge = judge
        self.progress = progress
        self.seen: dict[JudgePair, Judgement] = {}
        self.calls = 0

    def round(self, pairs: list[JudgePair]) -> None:
        new = [p for p in dict.fromkeys(pairs) if p not in self.seen]
        if new:
            self.seen.update(judge_corpus(self.judge, new, progress=self.progress))
            self.calls += len(new)

    def verdict(self, p: JudgePair) -> bool | None:
        return judgement_verdict(self.seen[p])


def _record(j: Judgement, purpose: str) -> dict[str, Any]:
    return {**j.to_dict(), "purpose": purpose}


def score_corpus(
    samples: Sequence[Any],
    outputs: Sequence[str],
    judge: Any,
    *,
    qampari: bool = False,
    at_most: int | None = AT_MOST_CITATIONS,
    claims: bool = False,
    citations: bool = True,
    precision: bool = True,
    progress: Progress | None = None,
) -> tuple[list[AnswerCitations], dict[str, int]]:
    """Each answer's citation scores (and, with ``claims``, ELI5's claims score); ``outputs`` are preprocessed.
    Returns them and the counts: distinct pairs judged (``judge_calls``), the calls ALCE's algorithm makes on the
    same answers (``alce_judge_calls``), answers without a sentence, and unparseable and failed judgements.
    ``precision=False``: citation recall alone (the first round; precision is then None), as RERANK needs it."""
    judged = _Judged(judge, progress)
    plans = [plan_sentences(o, s.question, s.passages, qampari=qampari, at_most=at_most) if citations else [] for s, o in zip(samples, outputs)]
    joint = {(i, k): JudgePair(premise(s.passages, p.joint), p.hypothesis) for i, s in enumerate(samples) for k, p in enumerate(plans[i]) if p.refs is not None}
    claim_pairs = {}
    if claims:
        for i, (s, o) in enumerate(zip(samples, outputs)):
            text = remove_citations(remove_citations(o))  # ALCE removes them twice: once for every judge-free metric
            for c, claim in enumerate(s.claims or []):
                claim_pairs[(i, c)] = JudgePair(text, claim)
    judged.round([*joint.values(), *claim_pairs.values()])

    def single(i: int, r: int, k: int) -> JudgePair:
        return JudgePair(format_document(samples[i].passages[r]), plans[i][k].hypothesis)

    def others(i: int, k: int, pos: int) -> JudgePair:
        refs = list(plans[i][k].joint)
        refs.remove(refs[pos])  # ALCE's list.remove: the first occurrence of that document
        return JudgePair(premise(samples[i].passages, refs), plans[i][k].hypothesis)

    multi = [(i, k) for (i, k), p in joint.items() if precision and len(plans[i][k].joint) > 1 and judged.verdict(p)]
    judged.round([single(i, r, k) for i, k in multi for r in plans[i][k].joint])
    lone_fails = [(i, k, pos) for i, k in multi for pos, r in enumerate(plans[i][k].joint) if judged.verdict(single(i, r, k)) is False]
    judged.round([others(i, k, pos) for i, k, pos in lone_fails])

    out: list[AnswerCitations] = []
    totals = {"judge_calls": judged.calls, "alce_judge_calls": 0, "answers_without_sentences": 0, "unparseable_judgements": 0, "failed_judgements": 0}
    for i, s in enumerate(samples):
        a = AnswerCitations()
        used: dict[JudgePair, str] = {}
        if claims and s.claims:
            for c in range(len(s.claims)):
                used.setdefault(claim_pairs[(i, c)], "claims")
            verdicts = [judged.verdict(claim_pairs[(i, c)]) for c in range(len(s.claims))]
            a.alce_calls += len(s.claims)
            a.claims = None if any(v is None for v in verdicts) else sum(bool(v) for v in verdicts) / len(verdicts)
        if citations:
            _score_answer(a, i, plans[i], joint, judged, single, others, used, precision)
            if not plans[i]:
                totals["answers_without_sentences"] += 1
        for p, purpose in used.items():
            j = judged.seen[p]
            a.judgements.append(_record(j, purpose))
            if j.status == "failed":
                totals["failed_judgements"] += 1
            elif judgement_verdict(j) is None:
                totals["unparseable_judgements"] += 1
        totals["alce_judge_calls"] += a.alce_calls
        out.append(a)
    return out, totals


def _score_answer(a: AnswerCitations, i: int, plans: list[SentencePlan], joint: dict, judged: _Judged, single: Any, others: Any, used: dict, precision: bool = True) -> None:
    entail = precise = 0
    missing = False

    def ask(pair: JudgePair, purpose: str) -> bool | None:
        """The judge's verdict on ``pair`` (None: unjudged), counted as one of ALCE's calls and kept for the answer's
        judgements under ``purpose``."""
        a.alce_calls += 1
        used.setdefault(pair, purpose)
        return judged.verdict(pair)

    for k, p in enumerate(plans):
        row: dict[str, Any] = {"entailed": False, "citations": [{"passage": r + 1, "precise": False} for r in p.joint]}
        a.sentences.append(row)
        if p.refs is None:
            row["rejected"] = "no citation" if not p.markers else "out of range"
            continue
        a.citations += len(p.refs)
        v = ask(joint[(i, k)], "citation_recall")
        if v is None:
            missing = True
            row["entailed"] = None
            continue
        row["entailed"] = v
        if not v:
            continue
        entail += 1
        if not precision:
            continue
        if len(p.refs) == 1:
            precise += 1
            row["citations"][0]["precise"] = True
            continue
        for pos, r in enumerate(p.refs):
            # precise when it entails alone, or when the others do not entail without it (then it is needed)
            alone = ask(single(i, r, k), "citation_precision")
            rest = ask(others(i, k, pos), "citation_precision") if alone is False else None
            needed = alone if alone is not False else (None if rest is None else not rest)
            if needed is None:
                missing = True
                row["citations"][pos]["precise"] = None
            elif needed:
                precise += 1
                row["citations"][pos]["precise"] = True
    if not plans:
        return
    if missing:
        a.unjudged = True
        return
    a.recall = entail / len(plans)
    if precision:
        a.precision = precise / a.citations if a.citations else 0.0


def citation_recalls(
    samples: Sequence[Any], outputs: Sequence[str], judge: Any, *, qampari: bool = False, at_most: int | None = AT_MOST_CITATIONS
) -> tuple[list[float | None], dict[str, int]]:
    """Each answer's citation recall alone (:func:`score_corpus` without precision; ``outputs`` as written, read the
    ALCE way here), each distinct pair judged once: RERANK's choice among its samples. None for an answer without
    a sentence or with a judgement that could not be read."""
    scored, totals = score_corpus(samples, [preprocess_output(o) for o in outputs], judge, qampari=qampari, at_most=at_most, precision=False)
    return [a.recall for a in scored], totals
