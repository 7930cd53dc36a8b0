"""CONNER's six measures of the knowledge a model produced or retrieved for a query (seed conner_2310.07289, §3;
../shared/docs/metrics.md §4), registered as the ``conner`` metric family.

Per item: the query ``q`` (the Sample's question), the knowledge ``k`` (the answer's raw text), the gold answer
``a`` (``answers[0][0]``, optional), the evidence (``passages``, or the top ``evidence_k`` passages retrieved
for each sentence with ``retriever``), the topic (``meta.topic``, optional). Sentences are cut by
``attribution/sentences.py``.

- ``factuality`` (Eq. 1): every (evidence, sentence) pair judged by a three-way judge; per sentence the evidence
  with the highest P(supports); over sentences ``min`` of P(supports) (default, strict), ``mean`` or ``max``
  (CONNER's scripts) of the three probabilities. The value is the mean aggregated P(supports);
  ``factual_consistent``, ``non_verified`` and ``factual_inconsistent`` are the shares of items whose
  aggregated vector's largest probability is supports, not_enough_info, refutes.
- ``relevance`` (Eq. 2): sigmoid of the pair scorer's logit for (q, k) (the embedded ms-marco cross-encoder).
- ``coherence_sentence`` (Eq. 3): mean over sentences of 1/PPL (PPL capped at 200); ``sentence_context``
  ``paragraph`` (default: one evaluation per text, each sentence after the ones before; a recorded deviation) or
  ``sentence`` (each alone, as CONNER's scripts).
- ``coherence_paragraph`` (Eq. 4): a pluggable discourse-coherence model, ``coherence`` (a registered pair scorer:
  the sigmoid of its score for (q, k), as relevance reads one; a discourse model may ignore q); without one, the
  default, a recorded deviation (no discourse model offline): the LM's sentence-order test, the share of
  ``shuffles`` seeded shuffled orders whose log-probability is below the paragraph's own (ties count half). Either
  needs two sentences.
- ``informativeness`` (Eq. 5): 1 − exp(mean log P(k_t | prefix, k_<t)), CONNER's prefix.
- ``helpfulness`` (Eq. 6): max(0, 1 − L(q, k, a) / mean_i L(q, k_i⁻, a)), L the mean cross-entropy of the gold
  answer's tokens, ``unrelated`` knowledge texts of other items (seeded; fewer when the corpus has fewer: each
  item's ``helpfulness_unrelated`` and the metric's ``details.unrelated_used`` say how many were used); each item's
  ``helpfulness_raw`` is 1 − L/mean L⁻ before the clamp (a 0 can be read: how far below it was).
- ``validity`` (Eq. 7–8): the LM reads k and answers q; with a gold answer, P(supports) of premise "q a*" and
  hypothesis "q answer"; without one (open answers), the best P(supports) of the answer over the evidence (the
  item's passages, else the top ``evidence_k`` passages ``retriever`` finds for the answer). The reader's prompt is
  vericite's zero-shot :data:`READER_PROMPT`, not CONNER's few-shot answer templates (Table 13): a recorded deviation.
- The query is the Sample's question: for WoW the whole dialogue history (as issue 14 asks), where CONNER's WoW
  prompts use the last utterance (Table 11): a recorded deviation when an item's ``meta.last_utterance`` is not its
  whole query (:meth:`ConnerMetric.deviations`).
- ``answer_em`` (the downstream accuracy of §5's uses): the same reader's answer against the gold short answers,
  SQuAD exact match with the best alias (ALCE's ``answer_em``); needs short answers (NQ), so WoW has none.

Bad input: empty knowledge, knowledge of one word, no gold answer (helpfulness; validity without evidence
either), no evidence (factuality), no model: that measure is not computed for that item, with the reason, and
the rest are; an item left out is counted by reason in the metric's ``details``, never scored 0.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..attribution.sentences import split_sentences
from ..errors import VericiteError
from ..models.lm_scoring import PPL_CAP, SENTENCE_CONTEXTS
from .base import DEFAULT_RESAMPLES, ScoresAnswers, check_one_answer_per_sample, DEFAULT_SEED, MetricRun, ProgressBar, Ratios, corpus_results
from .conner_specs import (  # noqa: F401  (re-exported: the family's declarations)
    VERSION,
    FAMILY,
    AGGREGATIONS,
    LABELS,
    CLASS_OF,
    INFO_PREFIX,
    HELP_PREFIX,
    READER_PROMPT,
    Q_KNOW,
    q_know,
    MEASURES,
    SHARES,
    NAMES,
    SPECS,
    sigmoid,
    gold_answer,
    gold_response,
)
from .conner_judged import passage_major  # noqa: F401  (re-exported)
from .conner_lm import LMMeasures
from .conner_pairs import PairMeasures
from .conner_validity import ValidityMeasures
from .judging import judge_id

#: results.json ``evaluation.conner``'s settings (but ``deviations``), in :meth:`ConnerMetric.settings`' order
SETTINGS = (
    "judge", "lm", "relevance_model", "evidence_index", "evidence_k", "aggregation", "sentence_context", "ppl_cap", "shuffles", "unrelated",
    "q_know_gamma", "coherence_paragraph_model",
)  # fmt: skip
SENTENCE_CONTEXT_DEVIATION = (
    "coherence_sentence: each sentence's perplexity after the sentences before it (sentence_context=paragraph, one "
    "evaluation per text), where CONNER's scripts score each sentence alone (sentence_context=sentence)"
)
COHERENCE_DEVIATION = "coherence_paragraph: the LM's sentence-order test instead of CONNER's Coherence-Momentum model"
READER_DEVIATION = (
    "validity and answer_em: the reader answers with vericite's zero-shot prompt (READER_PROMPT), not CONNER's few-shot "
    "answer templates (Table 13)"
)
WOW_QUERY_DEVIATION = (
    "query: the whole dialogue history (WoW), where CONNER's WoW prompts use the last utterance (Table 11); relevance, "
    "informativeness, helpfulness and the reader read it"
)


def dialogue_queries(samples: Sequence[Any]) -> bool:
    """Whether some item is WoW-shaped with the dialogue history as its query: its ``meta.last_utterance`` (what
    ``wow-*-500`` samples carry, and a conner line may give in ``meta``) is not its whole query."""
    for s in samples:
        last = (getattr(s, "meta", None) or {}).get("last_utterance")
        if isinstance(last, str) and last.strip() and str(getattr(s, "question", "") or "").strip() != last.strip():
            return True
    return False


def _model_name(backend: Any) -> str | None:
    if backend is None:
        return None
    try:
        return str(backend.identity().name)
    except Exception:  # noqa: BLE001
        return str(getattr(backend, "id", type(backend).__name__))


class ConnerMetric(ScoresAnswers, LMMeasures, ValidityMeasures, PairMeasures):
    """CONNER's measures (module docstring). ``judge``: a three-way judge (factuality, validity); ``lm``: a causal
    LM backend (coherence, informativeness, helpfulness, the validity reader); ``scorer``: a PairScorer
    (relevance); ``coherence``: a PairScorer, paragraph coherence's discourse model (default: the LM's
    sentence-order test); ``retriever``: evidence per sentence when an item has none (``--index``). Its parts: the LM-scored
    measures (``conner_lm.py``), validity and answer_em (``conner_validity.py``), factuality, relevance and a discourse
    model's paragraph coherence (``conner_pairs.py``), what its reader and retriever were asked, once per evaluation
    (``conner_asked.py``)."""

    inputs = ("answer", "passages", "answers", "meta")
    # vericite compare (protocols.PairedStatistics): two runs are compared only when scored with the same CONNER
    # settings (results.json evaluation.conner: judge, LM, scorer, evidence, aggregation, ...)
    # evaluation.conner's settings, each compared; not ``deviations``: what it notes follows from the others (the
    # coherence model), the family's version (its reader's prompt) and the inputs (WoW's query), which compare checks
    # on their own, so an evaluation recorded before a deviation was noted still compares with one recorded after
    # (the relevance and paragraph-coherence models only when both runs record one: a run that did not measure
    # relevance, or coherence_paragraph, records none, and that measure is then shown as not computed)
    compared_settings: dict[str, str | None] = {f"conner.{k}": f"conner.{k}" if k in ("relevance_model", "coherence_paragraph_model") else None for k in SETTINGS}
    allowed_differences: tuple[Any, ...] = ()

    def __init__(
        self,
        judge: Any = None,
        *,
        lm: Any = None,
        scorer: Any = None,
        coherence: Any = None,
        retriever: Any = None,
        evidence_index: str | None = None,
        aggregation: str = "min",
        sentence_context: str = "paragraph",
        shuffles: int = 5,
        unrelated: int = 3,
        evidence_k: int = 10,
        reader_tokens: int = 32,
        metrics: Sequence[str] | None = None,
        gamma: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
        resamples: int = DEFAULT_RESAMPLES,
        seed: int = DEFAULT_SEED,
    ) -> None:
        if aggregation not in AGGREGATIONS:
            raise VericiteError(f"factuality aggregation must be one of {', '.join(AGGREGATIONS)}, not {aggregation!r}")
        if sentence_context not in SENTENCE_CONTEXTS:
            raise VericiteError(f"sentence_context must be one of {', '.join(SENTENCE_CONTEXTS)}, not {sentence_context!r}")
        if shuffles < 1 or unrelated < 1 or evidence_k < 1:
            raise VericiteError("shuffles, unrelated and evidence_k must each be at least 1")
        if metrics:
            unknown = [m for m in metrics if m not in NAMES]
            if unknown:
                raise VericiteError(f"not a CONNER measure: {', '.join(unknown)} (known: {', '.join(NAMES)})")
        self.id = VERSION
        self.names = tuple(n for n in NAMES if not metrics or n in metrics)
        self.judge, self.lm, self.scorer, self.retriever = judge, lm, scorer, retriever
        self.coherence = coherence  # coherence_paragraph's discourse model (a PairScorer); None: the LM's order test
        self.evidence_index = evidence_index
        self.aggregation = aggregation
        self.sentence_context = sentence_context
        self.shuffles, self.unrelated, self.evidence_k, self.reader_tokens = shuffles, unrelated, evidence_k, reader_tokens
        # what its models were asked per item, by (the model, what was asked): the reader's answers (or failures) and
        # the evidence the retriever found for a sentence or an answer (_asked). Shared with judging_part()'s copy, so
        # an item scored answer by answer is neither read nor retrieved for again by the corpus's scoring (evaluate's
        # checkpointed path); the answers read back from the checkpoint, or scored on Ray's actors, come in by
        # reuse_checkpointed() (conner_asked.py)
        self._asked: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        # judging_part()'s copy: each item's retrieved evidence goes into its scores (conner.retrieved), what
        # evaluate's checkpoint line keeps for reuse_checkpointed(); the whole family's scores (samples.jsonl) have none
        self._keeps_retrieved = False
        self.resamples, self.seed = resamples, seed
        self.gamma = tuple(float(g) for g in gamma)
        q_know({k: 0.0 for k in Q_KNOW}, self.gamma)  # checks gamma's length now

    def judging_part(self) -> "ConnerMetric | None":
        """Its judged measures alone (factuality and its shares, validity): what ``evaluate`` scores answer by answer
        into its checkpoint (evaluate/checkpoint.py); None without a judge or a judged measure."""
        import copy

        names = tuple(n for n in self.names if n in ("factuality", *SHARES, "validity", "answer_em"))
        if self.judge is None or not names:
            return None
        part = copy.copy(self)
        part.names = names
        part.scorer = None  # relevance is not judged: the part never loads the relevance model (tasks/conner.py)
        part.coherence = None  # nor paragraph coherence's model
        part._keeps_retrieved = self.retriever is not None
        return part

    def preload(self) -> None:
        """Builds now the relevance model that the corpus's scoring would first load (``tasks/conner.py``'s
        ``RelevanceScorer.load``): the evaluation's driver calls it before any answer is judged
        (``evaluate/pipeline.py``), so a model that cannot be loaded is one line then, not after the judging; not
        when ``--metrics`` leaves relevance out (nothing scores with it, :meth:`settings` records no id). A plugged
        discourse-coherence model (``conner:coherence_model``) is built now for the same reason, and likewise only
        when coherence_paragraph is measured."""
        for scorer in (self.scorer if "relevance" in self.names else None, self.coherence if "coherence_paragraph" in self.names else None):
            load = getattr(scorer, "load", None)
            if callable(load):
                load()

    def settings(self, samples: Sequence[Any] = ()) -> dict[str, Any]:
        """results.json ``evaluation.conner``: the :data:`SETTINGS` and ``deviations`` (:meth:`deviations`)."""
        return {
            "judge": judge_id(self.judge) if self.judge is not None else None,
            "lm": _model_name(self.lm),
            "relevance_model": getattr(self.scorer, "id", None) if "relevance" in self.names else None,  # only when used
            "evidence_index": self.evidence_index,
            "evidence_k": self.evidence_k,
            "aggregation": self.aggregation,
            "sentence_context": self.sentence_context,
            "ppl_cap": PPL_CAP,
            "shuffles": self.shuffles,
            "unrelated": self.unrelated,
            "q_know_gamma": dict(zip(Q_KNOW, self.gamma)),
            "coherence_paragraph_model": self._coherence_model() if "coherence_paragraph" in self.names else None,  # only when used
            "deviations": self.deviations(samples),
        }

    def deviations(self, samples: Sequence[Any] = ()) -> list[str]:
        """Where this evaluation departs from CONNER, in words (results.json ``evaluation.conner.deviations``): the
        sentence context of coherence_sentence (when it is measured with ``sentence_context=paragraph``, the default);
        the sentence-order test for paragraph coherence (when it is measured, with no ``coherence`` model); with validity or answer_em, the
        reader's prompt (vericite's zero-shot :data:`READER_PROMPT`, not CONNER's few-shot answer templates of
        Table 13); over WoW-shaped ``samples`` (:func:`dialogue_queries`), the query is the dialogue history."""
        out = []
        if self.sentence_context == "paragraph" and "coherence_sentence" in self.names:
            out.append(SENTENCE_CONTEXT_DEVIATION)
        if self.coherence is None and "coherence_paragraph" in self.names:
            out.append(COHERENCE_DEVIATION)
        if {"validity", "answer_em"} & set(self.names):
            out.append(READER_DEVIATION)
        if dialogue_queries(samples):
            out.append(WOW_QUERY_DEVIATION)
        return out

    # ------------------------------------------------------------------ the corpus

    def score_answers(self, samples: Sequence[Any], answers: Sequence[Any], *, progress: ProgressBar | None = None) -> MetricRun:
        check_one_answer_per_sample(samples, answers)
        n = len(samples)
        texts = [str(getattr(a, "raw", "") or "").strip() for a in answers]
        values: dict[str, list[float | None]] = {m: [None] * n for m in (*MEASURES, *SHARES)}
        reasons: list[dict[str, str]] = [{} for _ in range(n)]
        extra: list[dict[str, Any]] = [{} for _ in range(n)]
        judgements: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        sentences = [[(s.start, s.end) for s in split_sentences(t) if s.clean] for t in texts]
        usable = []
        for i, t in enumerate(texts):
            why = "empty knowledge" if not t else "knowledge of one word" if len(t.split()) < 2 else None
            if why:
                for m in MEASURES:
                    reasons[i][m] = why
            else:
                usable.append(i)
        counts = {"judge_calls": 0, "unparseable_judgements": 0, "failed_judgements": 0}
        want = set(self.names)
        if want & {"relevance"}:
            self._relevance(samples, texts, usable, values, reasons)
        if want & {"factuality", *SHARES}:
            self._factuality(samples, texts, sentences, usable, values, reasons, extra, judgements, counts, progress)
        if "coherence_paragraph" in want and self.coherence is not None:
            self._coherence(samples, texts, sentences, usable, values, reasons)
            want -= {"coherence_paragraph"}
        if want & {"coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness"}:
            self._lm_measures(samples, texts, sentences, usable, values, reasons, want, extra, progress)
        if want & {"validity", "answer_em"}:
            self._validity(samples, texts, usable, values, reasons, extra, judgements, counts, want)

        r = Ratios()
        for name in self.names:
            col = values[name]
            have = [v is not None for v in col]
            base = "factuality" if name in SHARES else name
            left: dict[str, int] = {}
            for i in range(n):
                if col[i] is None:
                    why = reasons[i].get(base, "not computed")
                    left[why] = left.get(why, 0) + 1
            first = next(iter(left), "no items")
            r.ratio(name, [v or 0.0 for v in col], [float(h) for h in have], n=sum(have), details={"left_out": left}, empty=first)
        stats = r.done(self.names)
        results = corpus_results(stats, {k: SPECS[k] for k in self.names}, n, resamples=self.resamples, seed=self.seed)
        jid = judge_id(self.judge) if self.judge is not None else None
        for name in ("factuality", "validity", *SHARES):
            if name in results:
                results[name].details.setdefault("judge", jid)
        if "factuality" in results and results["factuality"].value is not None:
            got = [i for i in range(n) if values["factuality"][i] is not None]
            results["factuality"].details["mean_probabilities"] = {
                k: round(sum(extra[i]["factuality_vector"][k] for i in got) / len(got), 6) for k in LABELS
            }
        if "helpfulness" in results:  # u recorded: how many unrelated texts each item's helpfulness averaged over
            used: dict[str, int] = {}
            for e in extra:
                if "helpfulness_unrelated" in e:
                    used[str(e["helpfulness_unrelated"])] = used.get(str(e["helpfulness_unrelated"]), 0) + 1
            results["helpfulness"].details.update(unrelated=self.unrelated, unrelated_used=dict(sorted(used.items())))
        per = []
        for i in range(n):
            d: dict[str, Any] = {m: values[m][i] for m in self.names if values[m][i] is not None}
            d.update(extra[i])
            if texts[i]:
                d["n_sentences"] = len(sentences[i])
            q = q_know(d, self.gamma)
            if q is not None:
                d["q_know"] = q
            if reasons[i]:
                d["not_computed"] = {m: why for m, why in reasons[i].items() if m in self.names}
            per.append({"conner": d})
        return MetricRun(self.id, results, per, judgements, settings={"conner": self.settings(samples)}, counts=counts)

    @staticmethod
    def statistics_from_records(records: Sequence[Any]) -> Any:
        """Each measure's statistic from the records' ``scores["conner"]`` (the mean over the items that have
        it, as :meth:`score_answers` computes it), so ``vericite compare`` pairs two runs item by item (a
        selection against its baseline); not computed where no record has it, with the first reason given."""
        from .base import CorpusStatistics

        cs = CorpusStatistics()
        per = [((r.get("scores") or {}).get("conner") or {}) if isinstance(r, dict) else {} for r in records]
        for name in NAMES:
            base = "factuality" if name in SHARES else name
            col = [p.get(name) for p in per]
            have = [isinstance(v, (int, float)) and not isinstance(v, bool) for v in col]
            r = Ratios()
            reason = next((str((p.get("not_computed") or {}).get(base)) for p in per if (p.get("not_computed") or {}).get(base)), "no record has it")
            r.ratio(name, [float(v) if h else 0.0 for v, h in zip(col, have)], [float(h) for h in have], n=sum(have), empty=reason)
            out = r.done([name])
            cs.statistics.update(out.statistics)
            cs.reasons.update(out.reasons)
            cs.ns.update(out.ns)
        return cs

    def _coherence_model(self) -> str | None:
        """What computed coherence_paragraph (results.json ``evaluation.conner.coherence_paragraph_model``)."""
        if self.coherence is not None:
            return f"{getattr(self.coherence, 'id', None)}: the sigmoid of its score for (query, knowledge)"
        return f"sentence-order test of {_model_name(self.lm)}" if self.lm is not None else None


def from_spec(arg: str, *, ctx: Any, judge: Any = None, lm: Any = None, scorer: Any = None, coherence: Any = None, **options: Any) -> ConnerMetric:
    """Registry factory: ``conner``; ``judge``, ``lm``, ``scorer`` and ``coherence`` are ready objects or specs (a
    judge spec, a model name, a scorer name), built with ``ctx``."""
    from ..registry import create

    if arg:
        raise VericiteError(f"the conner metric family takes no argument (got conner:{arg})")
    if isinstance(judge, str):
        judge = None if judge in ("", "none") else create("judges", judge, ctx)
    if isinstance(lm, str):
        from ..models import model_loader

        lm = model_loader(ctx)(lm)
    if isinstance(scorer, str):
        scorer = create("scorers", scorer, ctx)
    if isinstance(coherence, str):
        coherence = create("scorers", coherence, ctx)
    return ConnerMetric(judge, lm=lm, scorer=scorer, coherence=coherence, **options)


from_spec.family = ConnerMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)
