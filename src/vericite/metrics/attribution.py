"""Four-class diagnosis of real answers (issue 13 part 6, beyond the CAQA paper): every (sentence, citation) pair
of an answer classified by a four-class judge (CAQA §3.2: supportive, insufficient, contradictory, irrelevant;
``judges/four_class.py``), so a reader sees not only that a citation fails but how.

Registered as the ``attribution`` metric family (``attribution@1``); the ``kalma`` and ``alce`` tasks add it to
their suite with ``vericite evaluate --attribution-judge <four-class judge spec>`` (:func:`family_for`), and
without one its metrics are not computed, with the reason.

The pairs. For each sentence of the parsed answer, each citation that resolved (status ``ok``), once per
distinct cited source in the sentence (a source cited twice in one sentence is one pair), ``[NA]`` left out:

* a triple citation (KaLMA): the citation text is the triple in words as CAQA's template builder writes a fact,
  ``"{entity name}'s {property} is {value}."`` (the entity's name from the knowledge given, else the cited id);
* a passage citation (ALCE): the cited document as ALCE's judge reads it, ``"Title: {title}\\n{text}"``; every
  citation counts, not only ALCE's first three.

The judge is asked ``JudgePair(evidence=citation text, claim=the sentence without its citations,
question=the answer's question)``. A citation that did not resolve (out of range, unknown entity, malformed) is
not a pair: it is counted as ``not_judged``.

The metrics: ``attribution_<class>`` = pairs the judge put in that class / all pairs, over the corpus (the ratio
of sums: a pair is the unit; the bootstrap resamples answers), and ``attribution_unparseable`` = pairs whose
judgement is unparseable or failed / all pairs, so the five shares sum to 1. ``n`` counts the answers with at
least one pair. Each answer's own counts and shares are its ``scores["attribution"]``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import VericiteError
from ..judges.four_class import CAQA_LABELS, is_four_class
from ..types import CitationKind, JudgePair, Judgement, ParseStatus
from .base import DEFAULT_RESAMPLES, ScoresAnswers, check_one_answer_per_sample, DEFAULT_SEED, AllowedDifference, CorpusStatistics, MetricRun, MetricSpec, ProgressBar, Ratios, Unavailable, corpus_results
from .judging import judge_corpus, judge_id

VERSION = "attribution@1"
FAMILY = "Attribution classes (four-class judge)"
UNPARSEABLE = "unparseable"
#: what the shares are of, per answer: each class, then the judgements that could not be read
COLUMNS = (*CAQA_LABELS, UNPARSEABLE)
PURPOSE = "attribution"
#: how a triple citation is put in words (CAQA's template citation of one fact)
TRIPLE_TEXT = "{entity}'s {property} is {value}."

_WHAT = {
    "supportive": "the citation fully supports the sentence",
    "insufficient": "the citation supports the sentence only in part",
    "contradictory": "the citation contradicts the sentence",
    "irrelevant": "the citation is irrelevant to the sentence",
    UNPARSEABLE: "the four-class judge's verdict could not be read (unparseable or failed)",
}
SPECS: dict[str, MetricSpec] = {
    f"attribution_{c}": MetricSpec(
        f"attribution_{c}", ("answer", "judge"), higher_is_better=c == "supportive", version=VERSION,
        description=f"share of (sentence, citation) pairs where {_WHAT[c]}", family=FAMILY, range=(0.0, 1.0), short_name=c,
    )  # fmt: skip
    for c in COLUMNS
}
METRIC_NAMES = tuple(SPECS)
NO_JUDGE = "no four-class judge (--attribution-judge llm4:<model>, nli4:<model>, autois:<binary judge>, caqa:<folder>)"


def check_four_class(judge: Any, what: str = "--attribution-judge") -> None:
    """One clear line when ``judge`` is not a four-class judge (a binary or three-way judge given instead)."""
    if not is_four_class(judge):
        labels = ", ".join(map(str, getattr(judge, "labels", ()) or ())) or "none declared"
        raise VericiteError(
            f"{what} needs a four-class judge (llm4:<model>, nli4:<model>, autois:<binary judge>, caqa:<folder>, fake-4class); "
            f"{judge_id(judge)} gives the labels {labels}"
        )


def _names_of(sample: Any) -> dict[str, str]:
    """Entity id -> the name a triple citation is put in words with, from the knowledge given."""
    from .kalma import entity_names

    return {k: v[0] for k, v in entity_names(getattr(sample, "knowledge", None) or []).items() if v}


def citation_text(citation: Any, sample: Any, names: Mapping[str, str] | None = None) -> str | None:
    """The text a four-class judge reads for ``citation`` of ``sample`` (module docstring), or None when the
    citation cannot be judged (not resolved, incomplete, ``[NA]``)."""
    if citation.kind is CitationKind.NA or citation.status is not ParseStatus.OK:
        return None
    if citation.kind is CitationKind.TRIPLE:
        t = citation.triple()
        if t is None:
            return None
        entity = (names if names is not None else _names_of(sample)).get(t.subject.strip()) or t.subject.strip()
        return TRIPLE_TEXT.format(entity=entity, property=t.property.strip(), value=t.value.strip())
    if citation.kind is CitationKind.PASSAGE:
        from ..attribution.alce import format_document

        passages = getattr(sample, "passages", None) or []
        n = citation.passage
        if not isinstance(n, int) or not 1 <= n <= len(passages):
            return None
        return format_document(passages[n - 1])
    return None


def answer_pairs(sample: Any, answer: Any) -> tuple[list[tuple[int, JudgePair]], int]:
    """An answer's (sentence index, pair) list, in order, one per distinct citation text of a sentence, and the
    number of its citations that could not be judged."""
    names = _names_of(sample)
    pairs: list[tuple[int, JudgePair]] = []
    not_judged = 0
    for k, s in enumerate(answer.sentences):
        seen: set[str] = set()
        for c in s.citations:
            if c.kind is CitationKind.NA:
                continue
            text = citation_text(c, sample, names)
            if text is None:
                not_judged += 1
                continue
            if text in seen:
                continue
            seen.add(text)
            pairs.append((k, JudgePair(text, s.clean, question=getattr(sample, "question", None) or None)))
    return pairs, not_judged


def class_of(j: Judgement) -> str:
    """The column a judgement counts in: its class, or ``unparseable`` (status not ok, or no known class)."""
    return j.label if j.status == "ok" and j.label in CAQA_LABELS else UNPARSEABLE  # type: ignore[return-value]


def answer_scores(classes: Sequence[str], not_judged: int) -> dict[str, Any]:
    """One answer's ``scores["attribution"]``: pairs, citations not judged, the count and the share of each column
    (shares null when the answer has no pair)."""
    n = len(classes)
    counts = {c: sum(1 for x in classes if x == c) for c in COLUMNS}
    return {"pairs": n, "not_judged": not_judged, "counts": counts, "shares": {c: (counts[c] / n if n else None) for c in COLUMNS}}


def attribution_statistics(per_answer: Sequence[Mapping[str, Any] | None], *, judged: bool | None = None) -> CorpusStatistics:
    """The five shares' statistics from each answer's ``scores["attribution"]`` (None: not judged): each a ratio
    of sums of the class's pairs over all pairs; not computed when no answer has a pair (the reason: no judge,
    unless ``judged`` or some answer was judged)."""
    r = Ratios()
    rows = [p if isinstance(p, Mapping) else {} for p in per_answer]
    pairs = [float(p.get("pairs") or 0) for p in rows]
    n = sum(1 for x in pairs if x > 0)
    judged = bool(judged) or any(rows)
    for c in COLUMNS:
        num = [float((p.get("counts") or {}).get(c) or 0) for p in rows]
        r.ratio(f"attribution_{c}", num, pairs, n=n, details={"pairs": int(sum(pairs)), c: int(sum(num))},
                empty="no (sentence, citation) pair to judge: no answer cites a source that resolved" if judged else NO_JUDGE)  # fmt: skip
    return r.done(METRIC_NAMES)


class AttributionMetric(ScoresAnswers):
    """The four-class diagnosis (module docstring). ``judge``: a four-class judge (checked)."""

    #: the cited evidence is read from the Sample field its citation kind names (``knowledge`` for triples,
    #: ``passages`` for documents): the task's evidence, which compare checks anyway
    inputs = ("answer", "question")
    #: how pairs are formed and worded is fixed by the family's version (``metric_versions``), so two runs share
    #: no further setting; they may differ in the four-class judge
    compared_settings: dict[str, str | None] = {}
    allowed_differences = (AllowedDifference("four-class judge", ("judges", PURPOSE, "id"), "attribution_judge"),)

    def __init__(self, judge: Any, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> None:
        check_four_class(judge)
        self.id = VERSION
        self.names = METRIC_NAMES
        self.judge = judge
        self.resamples = resamples
        self.seed = seed

    def score_answers(self, samples: Sequence[Any], answers: Sequence[Any], *, progress: ProgressBar | None = None) -> MetricRun:
        check_one_answer_per_sample(samples, answers)
        planned = [answer_pairs(s, a) for s, a in zip(samples, answers)]
        bar = (lambda total: progress(total, "four-class judging")) if progress is not None else None
        judged = judge_corpus(self.judge, (p for pairs, _ in planned for _, p in pairs), progress=bar) if planned else {}
        per: list[dict[str, Any]] = []
        judgements: list[list[dict[str, Any]]] = []
        for pairs, not_judged in planned:
            got = [judged[p] for _, p in pairs]
            per.append(answer_scores([class_of(j) for j in got], not_judged))
            judgements.append([{**j.to_dict(), "purpose": PURPOSE} for j in got])
        stats = attribution_statistics(per, judged=True)
        results = corpus_results(stats, SPECS, len(samples), resamples=self.resamples, seed=self.seed)
        jid = judge_id(self.judge)
        for r in results.values():
            r.details["judge"] = jid
        total = sum(p["pairs"] for p in per)
        unparseable = sum(p["counts"][UNPARSEABLE] for p in per)
        settings = {
            "judge": jid,
            "citation_text": {"triple": TRIPLE_TEXT, "passage": "Title: {title}\\n{text}"},
            "aggregation": "pairs (ratio of sums over the corpus; bootstrap over answers)",
            "pairs": total,
            "not_judged": sum(p["not_judged"] for p in per),
            "unparseable": unparseable,
        }
        return MetricRun(
            self.id, results, [{PURPOSE: p} for p in per], judgements, settings={PURPOSE: settings},
            counts={"attribution_pairs": total, "attribution_unparseable": unparseable}, judges={PURPOSE: jid},
        )  # fmt: skip

    @staticmethod
    def statistics_from_records(records: Sequence[Mapping[str, Any]]) -> CorpusStatistics:
        """The shares' statistics from each record's ``scores["attribution"]``."""
        return attribution_statistics([(r.get("scores") or {}).get(PURPOSE) for r in records])


def from_spec(arg: str, *, ctx: Any, judge: Any = None, **options: Any) -> AttributionMetric:
    """Registry factory: ``attribution``; ``judge`` a four-class Judge or a judge spec (built with ``ctx``)."""
    if arg:
        raise VericiteError(f"the attribution metrics take no argument (got attribution:{arg}); pass judge= for the four-class judge")
    if judge is None or judge in ("", "none"):
        raise VericiteError(f"the attribution metrics need {NO_JUDGE}")
    if isinstance(judge, str):
        from ..registry import create

        judge = create("judges", judge, ctx)
    return AttributionMetric(judge, **options)


from_spec.family = AttributionMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)


def family_for(settings: Any, ctx: Any) -> Any:
    """A task's suite entry: the ``attribution`` family with the command's ``--attribution-judge``, or, without
    one (or when ``--metrics`` asks for none of its metrics), its metrics not computed with the reason."""
    from ..registry import create

    spec = getattr(settings, "attribution_judge", None)
    selected = getattr(settings, "metrics", None) or None
    if selected and not set(selected) & set(METRIC_NAMES):
        return Unavailable(VERSION, tuple(SPECS.values()), "not asked for (--metrics)")
    if not spec or spec == "none":
        return Unavailable(VERSION, tuple(SPECS.values()), NO_JUDGE)
    return create("metrics", "attribution", ctx, judge=spec, resamples=settings.resamples, seed=settings.seed)


__all__ = ["AttributionMetric", "METRIC_NAMES", "SPECS", "VERSION", "answer_pairs", "citation_text", "family_for", "from_spec"]
