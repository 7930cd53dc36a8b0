"""The CONNER task (seed conner_2310.07289; ``metrics/conner.py``): the knowledge a model produced or retrieved
for a query, scored with CONNER's six measures.

A line: ``{"id", "query", "knowledge", "answer"?, "evidence"?, "topic"?}`` — ``answer`` is the gold answer
(helpfulness, validity), ``evidence`` passages (texts, or objects with ``text``) to check the knowledge against
(factuality), ``topic`` the Wikipedia topic (informativeness's prefix). A ``vericite generate --method
conner-knowledge`` run folder is read as it is (its ``output`` is the knowledge, its ``question`` the query).

Options of the spec: ``conner:aggregation=max,sentence_context=sentence,shuffles=5,unrelated=3,evidence_k=10``, and
``gamma=0.4/0.2/0.2/0.2``: Q_know's weights of factuality, relevance, coherence_paragraph and informativeness (§5;
equal by default), the per-item ``q_know`` it records; ``coherence_model=<pair scorer>``: paragraph coherence's
discourse model (a registered pair scorer, e.g. a plugin's Coherence-Momentum; the sigmoid of its score for (query,
knowledge)), by default the LM's sentence-order test (a recorded deviation); built, loaded and recorded only when
coherence_paragraph is measured (not when ``--metrics`` leaves it out), as the relevance model.
The command's ``--judge`` is the three-way judge (``llm3:<model>``, its calibrated ``llm3c:<model>`` and ``llm3f:<fit file>``, ``nli3:<model>``, ``fake-3way``); ``--lm``
the causal LM (default: the llm3 judge's model); ``--index`` an index folder that gives each sentence its
evidence when the line has none; ``--relevance-model`` the pair scorer (default the embedded ``ms-marco``), loaded
by the evaluation's driver before the first answer is judged (:class:`RelevanceScorer`), and only when relevance is
measured (not when ``--metrics`` leaves it out).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from ..errors import VericiteError
from ..metrics.conner import AGGREGATIONS, NAMES, SPECS
from ..metrics.base import MetricSpec
from ..registry import create
from ..types import AttributedAnswer

NAME = "conner"
DEFAULT_RELEVANCE_MODEL = "ms-marco"
def _gamma(value: str) -> tuple[float, ...]:
    """``a/b/c/d``: Q_know's four weights (a comma separates the spec's options)."""
    parts = value.split("/")
    try:
        weights = tuple(float(p) for p in parts)
    except ValueError:
        raise VericiteError(f"task conner: gamma wants four numbers a/b/c/d (factuality/relevance/coherence_paragraph/informativeness), not {value!r}") from None
    if len(weights) != 4 or not all(math.isfinite(w) for w in weights):
        raise VericiteError(f"task conner: gamma wants four numbers a/b/c/d (factuality/relevance/coherence_paragraph/informativeness), not {value!r}")
    return weights


OPTIONS: dict[str, Any] = {"aggregation": str, "sentence_context": str, "shuffles": int, "unrelated": int, "evidence_k": int, "gamma": _gamma, "coherence_model": str}


class RelevanceScorer:
    """The relevance measure's pair scorer (``--relevance-model``), built at its first use: relevance is scored over
    the corpus, by the evaluation's driver, so the workers of ``evaluate --ray`` (which build the suite to score its
    judged measures answer by answer, ``runs/distributed.py``'s ``AnswerWorker``) never load it. Its name is looked
    up now: one not registered is refused before anything is scored, as when it was built here. The driver builds it
    before the first answer is judged (:meth:`load`, called by the family's ``preload``, ``evaluate/pipeline.py``):
    a model that cannot be loaded (a missing or corrupt file, a bad spec) is one line then, not after every answer
    was judged; the corpus's scoring uses that same instance.
    The ``coherence_model`` option's scorer is built the same way."""

    def __init__(self, spec: str, ctx: Any, role: str = "relevance model {spec} (--relevance-model)") -> None:
        from ..registry import scorers

        scorers.get(scorers.split(spec)[0])
        self.spec, self.ctx, self.role = spec, ctx, role.format(spec=spec)
        self._scorer: Any = None

    def load(self) -> Any:
        """The scorer, built now if it is not yet; one that cannot be built is one line naming it
        (``errors.load_failure``)."""
        if self._scorer is None:
            from ..errors import load_failure

            try:
                self._scorer = create("scorers", self.spec, self.ctx)
            except Exception as e:  # noqa: BLE001 - a missing or corrupt model file, a bad spec: one line, no traceback
                raise load_failure(self.role, e) from None
        return self._scorer

    @property
    def scorer(self) -> Any:
        return self.load()

    @property
    def id(self) -> Any:
        return getattr(self.scorer, "id", None)

    def score(self, pairs: Sequence[tuple[str, str]]) -> Any:
        return self.scorer.score(pairs)


def conner_record(d: Any, line: int) -> Any:
    """A line of the task's own shape as the fields every task reads (``question``, ``answer`` = the knowledge,
    ``answers``, ``passages``, ``meta.topic``); a generate record (``question`` + ``output``) is returned as is."""
    if not isinstance(d, dict):
        return d
    if "output" in d and "query" not in d:  # a generate record: its output is the knowledge
        return {**d, "knowledge": d.get("knowledge") if isinstance(d.get("knowledge"), list) else []}
    if d.get("knowledge") is not None and not isinstance(d["knowledge"], str):
        raise ValueError(f"field 'knowledge' must be the knowledge text (a string), not {type(d['knowledge']).__name__} {d['knowledge']!r}"[:200])
    if not isinstance(d.get("knowledge"), str):  # no knowledge text: a bad line ("missing field 'knowledge'")
        return {k: v for k, v in d.items() if k != "knowledge"}
    if "query" not in d and "question" not in d:
        raise ValueError("missing field 'query' (the query the knowledge is for)")
    if "query" in d and not (isinstance(d["query"], str) and d["query"].strip()):  # relevance, informativeness, validity read it
        raise ValueError(f"field 'query' must be the query the knowledge is for, a non-empty text, not {d['query']!r}"[:200])
    out: dict[str, Any] = {k: v for k, v in d.items() if k not in ("query", "knowledge", "answer", "evidence", "topic")}
    if "query" in d:
        out["question"] = d["query"]
    out["answer"] = d["knowledge"]
    out["knowledge"] = []  # the text is the answer measured; no triples
    gold = d.get("answer")
    if _scalar(gold):
        gold = [gold]
    if isinstance(gold, list) and gold:
        aliases = [g if isinstance(g, list) else [g] for g in gold]
        if not all(_scalar(a) for g in aliases for a in g):
            raise ValueError(f"field 'answer' must be a text, or a list of answers each a text or a list of its aliases, not {gold!r}"[:200])
        aliases = [[str(a) for a in g if str(a).strip()] for g in aliases]
        if any(aliases):
            out["answers"] = [g for g in aliases if g]
    ev = d.get("evidence")
    if isinstance(ev, str):
        ev = [ev]
    if isinstance(ev, list):
        texts = [e if isinstance(e, str) else e.get("text") if isinstance(e, dict) else None for e in ev]
        if not all(isinstance(t, str) for t in texts):  # {"text": null} was read as the text "None"
            bad = next(e for e, t in zip(ev, texts) if not isinstance(t, str))
            raise ValueError(f"field 'evidence' must be a list of texts or of objects with a 'text' string, not one item {bad!r}"[:200])
        out["passages"] = [{"id": str(j + 1), "text": t} for j, t in enumerate(texts)]
    elif ev is not None:
        raise ValueError(f"field 'evidence' must be a list of texts or of objects with a 'text' string, not {ev!r}"[:200])
    if d.get("meta") is not None and not isinstance(d["meta"], dict):
        raise ValueError(f"field 'meta' must be an object, not {type(d['meta']).__name__} {d['meta']!r}"[:200])
    if d.get("topic") is not None and not isinstance(d["topic"], str):  # informativeness's prefix reads "Topic: {topic}"
        raise ValueError(f"field 'topic' must be a text (the Wikipedia topic), not {type(d['topic']).__name__} {d['topic']!r}"[:200])
    if d.get("topic"):
        out["meta"] = {**(d.get("meta") or {}), "topic": d["topic"]}
    return out


def _scalar(v: Any) -> bool:
    """A gold answer's alias as a line may give it: a text, or a number (7 is the answer "7")."""
    return isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool))


class ConnerTask:
    """The ``conner`` task (module docstring)."""

    name = NAME
    input_fields = ("id", "question", "answer", "knowledge")
    optional_fields = ("answers", "passages", "meta")
    field_help = {
        "question": "the query the knowledge was acquired for (CONNER's query)",
        "answer": "the knowledge to measure: a line's `knowledge` text, or a generate record's `output`",
        "knowledge": "the knowledge text to measure (a string)",
    }
    citation_format = "passages"
    evidence = "passages"
    metrics = ("conner",)
    judge_purposes = ("factuality", "validity")
    judge_trust = None
    default_judge = "none"
    #: of the settings only some tasks read (``evaluate.pipeline.TASK_SETTINGS``), those ``suite`` reads; the others
    #: given (``--geval-model``) are said to be ignored in one line
    settings_read = ("evidence_index", "lm", "relevance_model")

    def __init__(self, **options: Any) -> None:
        self.options = options
        self._relevance: dict[str, RelevanceScorer] = {}  # by spec: one per process, whatever the suites built
        self._coherence: dict[str, RelevanceScorer] = {}  # the coherence_model option's, the same way

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (to ``--ray``'s actors) without its relevance and coherence scorers: an actor never loads one."""
        return {**self.__dict__, "_relevance": {}, "_coherence": {}}

    def relevance_scorer(self, settings: Any, ctx: Any) -> RelevanceScorer | None:
        """The relevance scorer of ``settings`` (``--relevance-model``; None for ``none``, and when ``--metrics``
        leaves relevance out: nothing loads it, nothing records it), one per spec for every suite this task builds
        (``vericite run``'s levels share it), not loaded until :meth:`RelevanceScorer.load`."""
        spec = getattr(settings, "relevance_model", None) or DEFAULT_RELEVANCE_MODEL
        wanted = getattr(settings, "metrics", None)
        if spec == "none" or (wanted and "relevance" not in wanted):
            return None
        if spec not in self._relevance:
            self._relevance[spec] = RelevanceScorer(spec, ctx)
        return self._relevance[spec]

    def coherence_scorer(self, settings: Any, ctx: Any) -> RelevanceScorer | None:
        """The ``coherence_model`` option's pair scorer (None without the option, and when ``--metrics`` leaves
        coherence_paragraph out: nothing loads it, nothing records it), one per spec as :meth:`relevance_scorer`."""
        spec = self.options.get("coherence_model")
        wanted = getattr(settings, "metrics", None)
        if not spec or (wanted and "coherence_paragraph" not in wanted):
            return None
        if spec not in self._coherence:
            self._coherence[spec] = RelevanceScorer(spec, ctx, "coherence model {spec} (conner:coherence_model)")
        return self._coherence[spec]

    def preload(self, settings: Any, ctx: Any) -> None:
        """Loads now the relevance model its suites score with (none when ``--metrics`` leaves relevance out), and
        the ``coherence_model`` option's (none when it leaves coherence_paragraph out):
        ``vericite run`` calls it before it generates, so a model that cannot be loaded is one line before the
        generation, not after it (``evaluate`` loads it before the first answer is judged:
        ``ConnerMetric.preload``); the suites then use that instance. The ``lm`` (the LM measures' model and
        validity's reader) is checked too, without loading it (``models.check_model``): an unknown name, or a known
        one whose file is missing, is one line before the generation."""
        lm = getattr(settings, "lm", None)
        if lm:
            from ..errors import load_failure
            from ..models import check_model

            try:
                check_model(lm)
            except VericiteError as e:
                raise load_failure(f"the LM {lm} (lm: CONNER's LM measures and validity's reader)", e) from None
        for scorer in (self.relevance_scorer(settings, ctx), self.coherence_scorer(settings, ctx)):
            if scorer is not None:
                scorer.load()

    def specs(self) -> dict[str, MetricSpec]:
        return {n: SPECS[n] for n in NAMES}

    def metric_names(self) -> tuple[str, ...]:
        return NAMES

    def spec_options(self) -> dict[str, Any]:
        """The spec's options that differ from the family's defaults (``evaluate --resume`` checks them)."""
        import inspect

        from ..metrics.conner import ConnerMetric

        defaults = inspect.signature(ConnerMetric.__init__).parameters
        return {k: v for k, v in sorted(self.options.items()) if k not in defaults or v != defaults[k].default}

    def read_records(self, path: str | Path) -> None:
        return None  # JSONL, each line through convert_record

    def convert_record(self, d: Any, line: int) -> Any:
        return conner_record(d, line)

    def suite(self, settings: Any, *, judge: Any, ctx: Any) -> list[Any]:
        if judge is not None and not set(getattr(judge, "labels", ())) >= {"supports", "refutes", "not_enough_info"}:
            raise VericiteError(f"the conner task needs a three-way judge (llm3:<model>, llm3c:<model>, llm3f:<fit file>, nli3:<model>, fake-3way), not {getattr(judge, 'id', judge)}")
        lm_name = getattr(settings, "lm", None)
        if lm_name:
            from ..models import model_loader

            lm = model_loader(ctx)(lm_name)
        else:
            lm = getattr(judge, "backend", None)  # llm3:<model>: the same model
        scorer = self.relevance_scorer(settings, ctx)
        options = dict(self.options)
        options.pop("coherence_model", None)
        coherence = self.coherence_scorer(settings, ctx)
        index = getattr(settings, "evidence_index", None)
        k = int(self.options.get("evidence_k", 10))
        retriever = create("retrievers", f"bm25:{index}", ctx, k=k) if index else None
        return [
            create(
                "metrics", "conner", ctx, judge=judge, lm=lm, scorer=scorer, coherence=coherence, retriever=retriever, evidence_index=str(index) if index else None,
                metrics=getattr(settings, "metrics", None) or None, resamples=settings.resamples, seed=settings.seed, **options,
            )
        ]  # fmt: skip

    def counts(self, answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        return {"empty_knowledge": sum(1 for a in answers if not (a.raw or "").strip())}


def from_spec(arg: str, *, ctx: Any, **options: Any) -> ConnerTask:
    """Registry factory: ``conner[:key=value,...]`` (module docstring)."""
    for part in filter(None, (x.strip() for x in arg.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in OPTIONS:
            raise VericiteError(f"task conner: unknown option {part!r} (want {', '.join(k + '=...' for k in OPTIONS)})")
        try:
            options[key] = OPTIONS[key](value)
        except ValueError:
            raise VericiteError(f"task conner: {key} wants a whole number, not {value!r}") from None
    if "aggregation" in options and options["aggregation"] not in AGGREGATIONS:
        raise VericiteError(f"task conner: aggregation must be one of {', '.join(AGGREGATIONS)}, not {options['aggregation']!r}")
    return ConnerTask(**options)
