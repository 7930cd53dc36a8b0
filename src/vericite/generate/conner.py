"""``conner-knowledge``: knowledge for a query, as CONNER acquires it (seed conner_2310.07289 §4.1, App. F–G).

``source`` says where the knowledge comes from:

- ``generate`` (default): the model writes it. Zero-shot (``shot=0``) with CONNER's best prompt of Table 11,
  ``Topic: {topic}\\nGenerate a Wikipedia to answer the given question.\\nQuestion: {query}\\nWikipedia:``;
  few-shot (``shot=n``) with n demonstrations in the template of Table 12 (the same words, each followed by its
  reference knowledge), drawn by the run's seed for each item from the *other* questions of the whole dataset (read as
  the run reads it: its phrasing, its ``data_path``) that have reference knowledge (never the item itself; the same
  whatever ``--limit``: ``demo_draw=dataset``, the default), or with ``demo_draw=run`` from the other questions of
  the run (the rule before the option, which a folder written then keeps on ``--resume``), each cut to its first
  ``demo_words`` words (default 200: some of nq-500's gold passages are whole articles of up to 26k words, and four
  of them would not fit the model's context).
- ``retrieve``: the top passage BM25 finds in ``index`` for the query (CONNER's retrieved knowledge);
- ``reference``: the dataset's own (NQ: the gold passage; WoW: the gold knowledge sentence).

With ``pool=m`` the few-shot demonstrations come from a pool of m questions of the dataset drawn by the seed
(the first ``shot`` of them, or with ``select=demonstrations`` the ``shot`` best by Q_know); ``select=knowledge``
samples ``candidates`` knowledge texts with top-p and keeps the best by Q_know: CONNER's two uses of §5
(``conner_select.py``).

The record's ``output`` is the knowledge (what ``vericite evaluate --task conner`` measures); ``knowledge_source``,
``prompt`` and, few-shot, the ids of the ``demonstrations`` are kept with it; ``selection`` holds the scored
candidates of knowledge selection and which was chosen.

The query is the sample's question: for WoW (``wow-*-500``) the whole dialogue history, where CONNER's WoW prompts
use the last utterance (Table 11). With ``source=generate`` (the prompt's ``Question:``, the demonstrations' too)
or ``retrieve`` (BM25's query) that is a deviation, recorded in the manifest's ``deviations``
(:data:`WOW_QUERY_DEVIATION`; the evaluation records its own, ``evaluation.conner.deviations``).
"""

from __future__ import annotations

import random
import time
from typing import Any, ClassVar, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from ..errors import VericiteError, validation_message
from ..metrics.conner_specs import Q_KNOW
from ..types import GenParams, Sample

VERSION = "conner-knowledge@1"
PROMPT_ID = "conner-knowledge@1"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
INSTRUCTION = "Generate a Wikipedia to answer the given question."
#: a demonstration's reference knowledge is cut to its first N words unless ``demo_words`` says otherwise: with
#: whole passages, 16 of the first 50 nq-500 prompts of ``--shot 4`` (up to 14.8k tokens) exceed a 4,096-token
#: context; cut to 200 words, the longest is 1.4k. WoW's gold sentences are all shorter.
DEFAULT_DEMO_WORDS = 200
#: the manifest's deviation when a sample's query is a WoW dialogue history (``metrics.conner.dialogue_queries``)
WOW_QUERY_DEVIATION = (
    "query: the whole dialogue history (WoW), where CONNER's WoW prompts use the last utterance (Table 11); the "
    "generation prompt's Question (and source=retrieve's BM25 query) reads it"
)
#: what a few-shot manifest written before ``demo_words`` was recorded used (unless its config set it): whole
#: demonstrations (``ConnerKnowledge.upgrade_manifest``; ``--resume`` names it in its line)
WHOLE_DEMONSTRATIONS = "whole (before demo_words was recorded: no cut)"
#: where few-shot demonstrations are drawn from without ``pool`` (``demo_draw``): ``dataset``, the other questions of
#: the whole dataset with reference knowledge (the same whatever ``--limit``, the default); ``run``, the other
#: questions of the run, which depend on ``--limit`` (the rule before the option: a folder whose manifest records no
#: ``demo_draw`` resumes with it, ``ConnerKnowledgeOptions.resumed_options``)
DEMO_DRAWS = ("dataset", "run")
DEFAULT_DEMO_DRAW = "dataset"


class ConnerKnowledgeOptions(BaseModel):
    """``--method-arg KEY=VALUE`` (``--shot``, ``--index``, ``--max-tokens``, ``--temperature`` as flags)."""

    model_config = ConfigDict(extra="forbid")
    #: recorded in the config only when given (protocols.MethodOptions), so the runs written before it are the same runs
    recorded_when_set: ClassVar[tuple[str, ...]] = ("demo_draw", "reference_file")

    @classmethod
    def resumed_options(cls, method_args: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
        """The options a folder being resumed sets where ``method_args`` leave them unset (``protocols.MethodOptions``):
        ``demo_draw`` as its manifest records it, ``run`` (the run's questions, all there was) when it records none,
        so the rest of its items are drawn as its first were."""
        if manifest.get("method") != VERSION or method_args.get("demo_draw") is not None:
            return {}
        recorded = manifest.get("demo_draw", "run")
        return {"demo_draw": recorded} if recorded in DEMO_DRAWS else {}

    source: Literal["generate", "retrieve", "reference"] = "generate"
    shot: int = Field(default=0, ge=0)
    index: str | None = None
    max_tokens: int = Field(default=150, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    demo_words: int | None = Field(default=None, ge=1)  # a demonstration's knowledge cut to its first N words [DEFAULT_DEMO_WORDS]
    # few-shot without pool: demonstrations from the whole dataset (dataset) or the run's questions (run, which
    # --limit changes). None: a new run takes DEFAULT_DEMO_DRAW, a resumed one what its folder recorded (run before
    # the option: resumed_options); the manifest records the rule used
    demo_draw: Literal["dataset", "run"] | None = None
    # where the gold passages meta.gold_document names are read (CONNER's NQ format): None, the dataset's own file
    # (nq-500: the file the run reads); a file of questions has none, so it names it here (datasets.nq.GoldPassages)
    reference_file: str | None = None
    # CONNER §5 (conner_select.py): what Q_know selects, r, m, γ, and the models of Q_know's measures
    select: Literal["none", "knowledge", "demonstrations"] = "none"
    candidates: int = Field(default=5, ge=1, le=100)  # r: knowledge texts sampled per query (select=knowledge)
    pool: int | None = Field(default=None, ge=1)  # m: candidate demonstrations drawn from the dataset
    gamma: list[float] = Field(default_factory=lambda: [0.25, 0.25, 0.25, 0.25], min_length=4, max_length=4)
    select_judge: str | None = None  # three-way judge of Q_know's factuality [llm3:<model>]
    select_lm: str | None = None  # the LM of coherence and informativeness [the method's model]
    select_relevance_model: str = "ms-marco"
    select_coherence_model: str | None = None  # coherence_paragraph's discourse model (a pair scorer) [the LM's order test]
    select_evidence_k: int = Field(default=10, ge=1)

    @model_validator(mode="after")
    def _selection_is_possible(self) -> "ConnerKnowledgeOptions":
        if self.select != "none" and self.source != "generate":
            raise PydanticCustomError("selection", f"select={self.select} chooses generated knowledge: source=generate, not {self.source}")
        if self.select == "knowledge" and self.temperature == 0:
            raise PydanticCustomError("selection", "select=knowledge samples several candidates: set temperature > 0 (and top_p, CONNER: 0.9); greedy decoding gives r copies of one text")
        if self.select == "demonstrations" and (not self.shot or self.pool is None):
            raise PydanticCustomError("selection", "select=demonstrations keeps the top n of m candidate demonstrations: set shot=n (> 0) and pool=m (CONNER: n 8, m 30)")
        return self


def block(sample: Sample, knowledge: str | None = None) -> str:
    topic = (sample.meta or {}).get("topic")
    head = f"Topic: {topic}\n" if topic else ""
    text = f"{head}{INSTRUCTION}\nQuestion: {sample.question}\nWikipedia:"
    return text + (f" {knowledge}" if knowledge is not None else "")


def reference_knowledge(sample: Sample, passages: Any = None) -> str | None:
    """The dataset's reference knowledge: ``meta.reference_knowledge`` (WoW, or a question carrying its passage),
    else NQ's gold passage by ``meta.gold_document`` from ``passages`` (``datasets.nq.GoldPassages``: a DataError
    when it has no file or the file lacks it)."""
    meta = sample.meta or {}
    if meta.get("reference_knowledge"):
        return str(meta["reference_knowledge"])
    doc = meta.get("gold_document")
    if doc and passages is not None:
        return str(passages.passage(sample.id, str(doc)))
    return None


class ConnerKnowledge:
    """The method (module docstring)."""

    id = VERSION

    def __init__(self, backend: Any, opts: ConnerKnowledgeOptions, *, seed: int = 0, retriever: Any = None, q_know: Any = None) -> None:
        """``q_know``: a Q_know scorer, or a zero-argument callable that builds one when first needed
        (``from_spec``: a pool's worker given a scored demonstration pool never builds one)."""
        self.backend, self.opts, self.seed, self.retriever, self._q_know = backend, opts, seed, retriever, q_know
        self.params = GenParams(max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p, seed=seed)
        self.pool: list[Sample] = []
        self._passages: Any = None  # datasets.nq.GoldPassages, made when first read
        self.dataset_name = ""  # check_samples: the run's dataset, named in a message
        self.demo_pool: list[Sample] | None = None  # pool=m: the candidate demonstrations, best first with select
        self.demo_scores: list[dict[str, Any]] = []
        self.progress = False  # the pool's scoring shows progress (show_progress: the run's setting)
        self.dialogue_queries = False  # some sample's query is a WoW dialogue history (check_samples)
        self.load_dataset: Any = None  # the run's whole dataset as it reads it (read_dataset_with), else the name's defaults
        self.reference_file: str | None = None  # where the run's data has its gold passages (read_dataset_with)

    @property
    def q_know(self) -> Any:
        if callable(self._q_know) and not hasattr(self._q_know, "score"):  # built on first use, once
            self._q_know = self._q_know()
        return self._q_know

    def show_progress(self, enabled: bool) -> None:
        self.progress = enabled

    def _reference(self, sample: Sample) -> str | None:
        if self._passages is None and (sample.meta or {}).get("gold_document"):
            from ..datasets.nq import GoldPassages

            # the file named (reference_file), else the run's data's (read_dataset_with); none: an error, not a default
            self._passages = GoldPassages(self.opts.reference_file or self.reference_file, repr(self.dataset_name) if self.dataset_name else "its dataset")
        return reference_knowledge(sample, self._passages)

    def _demo_knowledge(self, sample: Sample) -> str:
        """A demonstration's reference knowledge, cut to its first ``demo_words`` words (``DEFAULT_DEMO_WORDS`` when
        unset: some of nq-500's gold passages are whole articles, and a prompt or a Q_know scoring of one would be
        huge)."""
        text = self._reference(sample) or ""
        words = self.demo_words
        return " ".join(text.split()[:words]) if len(text.split()) > words else text

    @property
    def demo_draw(self) -> str:
        """Where few-shot demonstrations without ``pool`` are drawn from: ``dataset`` or ``run`` (:data:`DEMO_DRAWS`)."""
        return self.opts.demo_draw or DEFAULT_DEMO_DRAW

    @property
    def demo_words(self) -> int:
        """How many words of a demonstration's reference knowledge are used (the manifest records it, few-shot)."""
        return self.opts.demo_words or DEFAULT_DEMO_WORDS

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None:
        """Keeps the few-shot pool (``demo_draw``: the whole dataset's questions with reference knowledge, loaded once
        here, or the run's); refuses what cannot be done before anything runs; notes whether a query is a WoW dialogue
        history (the manifest's ``deviations``)."""
        from ..metrics.conner import dialogue_queries

        self.pool, self.dataset_name = list(samples), dataset
        self.dialogue_queries = dialogue_queries(samples)
        o = self.opts
        if o.source == "retrieve" and self.retriever is None:
            raise VericiteError("method conner-knowledge: source=retrieve needs an index: --index DIR (vericite docs index)")
        few_shot = self._draws_demonstrations()
        if few_shot and self.demo_draw == "dataset":
            self.pool = self._usable_questions(dataset)
            if len(self.pool) <= o.shot:
                raise VericiteError(f"method conner-knowledge: shot={o.shot} needs more than {o.shot} questions with reference knowledge in {dataset} (it has {len(self.pool)}); demonstrations are never the item itself")
        elif o.source == "reference" or few_shot:
            missing = [s.id for s in samples[:50] if self._reference(s) is None]
            if missing:
                raise VericiteError(f"method conner-knowledge: dataset {dataset} has no reference knowledge (e.g. {missing[0]}): source=reference and few-shot need it")
            if o.source == "generate" and o.shot >= len(samples) and o.pool is None:
                raise VericiteError(f"method conner-knowledge: shot={o.shot} needs more than {o.shot} questions in the run (it has {len(samples)}); demonstrations are never the item itself")
        if o.pool is not None and o.source == "generate" and o.shot:
            self._draw_pool(samples, dataset)

    def prepared(self) -> dict[str, Any]:
        """What ``check_samples`` kept that the answers read (``protocols.SamplesPrepared``), for a pool's workers: the
        few-shot pool (the dataset's or the run's questions), or ``pool``'s drawn demonstrations in their order with
        their Q_know scores (scored once, here), and where the run's gold passages are (``reference_file``)."""
        return {"pool": self.pool if self._draws_demonstrations() else [], "demo_pool": self.demo_pool, "demo_scores": self.demo_scores, "reference_file": self.reference_file}

    def _draws_demonstrations(self) -> bool:
        """Few-shot without ``pool``: each item's demonstrations drawn from ``self.pool`` (``demo_draw``)."""
        o = self.opts
        return bool(o.source == "generate" and o.shot and o.pool is None)

    def use_prepared(self, state: Mapping[str, Any]) -> None:
        self.pool, self.demo_pool, self.demo_scores = list(state["pool"]), state["demo_pool"], list(state["demo_scores"])
        self._read_references_from(state.get("reference_file"))  # source=reference, a demonstration: the run's passages

    def read_dataset_with(self, load: Any, reference_file: str | None = None) -> None:
        """``load()``: the run's whole dataset as the run reads it (its phrasing, its ``data_path``; ``protocols.DatasetReading``);
        ``reference_file``: where its gold passages are (NQ's: the run's own file), None: it has none (a file of
        questions: the option ``reference_file`` names one)."""
        self.load_dataset = load
        self._read_references_from(reference_file)

    def _read_references_from(self, path: str | None) -> None:
        """Gold passages read from ``path`` (None: none known), those of another file read before dropped."""
        if path != self.reference_file:
            self.reference_file, self._passages = path, None

    def _usable_questions(self, dataset: str) -> list[Sample]:
        """The questions of the whole dataset ``dataset`` (the same whatever ``--limit``) that have reference knowledge,
        in its order: what demonstrations are drawn from (``demo_draw=dataset``, and ``pool``'s draw). Loaded as the
        run reads it (``read_dataset_with``), else the registered name or file with its defaults."""
        from ..datasets import load_samples

        try:  # a repeated id once, as the run's questions (warned there)
            everything = self.load_dataset() if self.load_dataset is not None else load_samples(dataset, dropped=[])
        except VericiteError as e:
            raise VericiteError(f"method conner-knowledge: few-shot demonstrations are drawn from the whole dataset {dataset}, which cannot be loaded ({e})" + ("; demo_draw=run draws them from the run's questions" if self.opts.pool is None else "")) from None
        return [s for s in everything if self._reference(s)]

    def _draw_pool(self, samples: Sequence[Sample], dataset: str) -> None:
        """The pool of m candidate demonstrations: questions of the whole dataset (the same whatever ``--limit``)
        with reference knowledge, drawn by the seed; with ``select=demonstrations``, ordered best first by Q_know."""
        o = self.opts
        usable = self._usable_questions(dataset)
        if len(usable) <= o.shot:
            raise VericiteError(f"method conner-knowledge: pool={o.pool} needs more than shot={o.shot} questions with reference knowledge in {dataset} (it has {len(usable)})")
        pool = random.Random(f"{self.seed}:pool").sample(usable, min(o.pool or 0, len(usable)))
        if o.select == "demonstrations" and self.q_know is not None:
            self.demo_scores = self.q_know.score(pool, [self._demo_knowledge(d) for d in pool], progress=self.progress, label="Q_know of the demonstration pool")
            from .conner_select import ranked

            order = ranked(self.demo_scores)
            pool, self.demo_scores = [pool[j] for j in order], [self.demo_scores[j] for j in order]
        self.demo_pool = pool

    def demonstrations(self, sample: Sample) -> list[Sample]:
        """``shot`` demonstrations for ``sample``, never itself: the pool's first (``pool=m``), else drawn by
        ``{seed}:{id}`` from the other questions of ``self.pool`` (``demo_draw``: the dataset's or the run's)."""
        if self.demo_pool is not None:  # the pool's first n (best first with select=demonstrations), never the item
            return [d for d in self.demo_pool if d.id != sample.id][: self.opts.shot]
        others = [s for s in self.pool if s.id != sample.id]
        rng = random.Random(f"{self.seed}:{sample.id}")
        return rng.sample(others, min(self.opts.shot, len(others)))

    def _select_knowledge(self, sample: Sample, text: str, first: Any) -> tuple[Any, dict[str, Any], list[Any]]:
        """r candidates (the first already generated), scored by Q_know; the best, the record's ``selection``,
        and every completion (for the usage)."""
        import dataclasses

        from .conner_select import best

        done = [first]
        for j in range(1, self.opts.candidates):
            params = dataclasses.replace(self.params, seed=self.seed + j)
            done.append(self.backend.generate([[{"role": "user", "content": text}]], params)[0])
        texts = [" ".join((c.text or "").split()) for c in done]
        scored = self.q_know.score([sample] * len(texts), texts)
        chosen = best(scored)
        selection = {"select": "knowledge", "chosen": chosen, "candidates": [{"seed": self.seed + j, "knowledge": t, **e} for j, (t, e) in enumerate(zip(texts, scored))]}
        return done[chosen], selection, done

    def answer(self, sample: Sample) -> dict[str, Any]:
        t0 = time.perf_counter()
        o = self.opts
        record: dict[str, Any] = sample.to_dict()
        record.update(method=self.id, knowledge_source=o.source)
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        cached = False
        if o.source == "retrieve":
            found = self.retriever.search(sample.question, 1)
            output = found[0][0].text if found else ""
            record["retrieved"] = [p.id for p, _ in found]
        elif o.source == "reference":
            output = self._reference(sample) or ""
        else:
            demos = self.demonstrations(sample) if o.shot else []
            text = "\n\n".join([*(block(d, self._demo_knowledge(d)) for d in demos), block(sample)])
            c = self.backend.generate([[{"role": "user", "content": text}]], self.params)[0]
            done = [c]
            if o.select == "knowledge":
                c, record["selection"], done = self._select_knowledge(sample, text, c)
            output = " ".join((c.text or "").split())
            usage = {"prompt_tokens": sum(d.prompt_tokens for d in done), "completion_tokens": sum(d.completion_tokens for d in done)}
            cached = all(bool(d.cached) for d in done)
            record.update(prompt=PROMPT_ID, shot=o.shot)
            if demos:
                record["demonstrations"] = [d.id for d in demos]
        from ..attribution.passages import parse_passage_answer

        record.update(output=output, answer=parse_passage_answer(output).to_dict(), usage=usage, cached=cached, seconds=round(time.perf_counter() - t0, 3))
        return record

    def summarise(self, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """How many knowledge texts came out empty (the model wrote nothing, a question without reference knowledge,
        or retrieval found nothing), and with ``source=retrieve`` for how many questions BM25 found no passage:
        ``evaluate --task conner`` leaves those items out as "empty knowledge"; ``generate`` says so now."""
        out: dict[str, Any] = {"empty_knowledge": sum(1 for r in records if not str(r.get("output") or "").strip())}
        if self.opts.source == "retrieve":
            got = [r for r in records if isinstance(r.get("retrieved"), list)]
            out["retrieved"] = {"questions": len(got), "none_found": sum(1 for r in got if not r["retrieved"])}
        return out

    def upgrade_manifest(self, old: Mapping[str, Any]) -> dict[str, Any]:
        """A manifest of this method written before it recorded ``demo_words`` or ``demo_draw``
        (``protocols.ManifestUpgrading``): a few-shot one put each demonstration's reference knowledge in whole
        unless its config set ``demo_words``, so ``--resume`` now (200 words by default) says the demonstrations
        differ, in one line, rather than cut the rest of the run's demonstrations silently; without ``pool`` it drew
        them from the run's questions, ``demo_draw`` run (what ``--resume`` builds the method with, unless given:
        ``ConnerKnowledgeOptions.resumed_options``)."""
        few_shot = old.get("source", "generate") == "generate" and isinstance(old.get("shot"), int) and old["shot"] > 0
        if old.get("method") != self.id or not few_shot:
            return dict(old)
        config = old.get("config") or {}
        given = lambda key: config.get(key, (config.get("method_args") or {}).get(key))  # noqa: E731
        out = dict(old)
        if "demo_words" not in out:
            out["demo_words"] = given("demo_words") if isinstance(given("demo_words"), int) else WHOLE_DEMONSTRATIONS
        if "demo_draw" not in out and given("pool") is None:
            out["demo_draw"] = "run"
        return out

    def manifest(self) -> dict[str, Any]:
        return {
            "method": self.id,
            "model": self.backend.identity().to_dict() if self.backend is not None else None,
            "prompt": PROMPT_ID,
            "source": self.opts.source,
            "shot": self.opts.shot,
            **({"demo_words": self.demo_words} if self.opts.source == "generate" and self.opts.shot else {}),
            **({"demo_draw": self.demo_draw} if self.opts.source == "generate" and self.opts.shot and self.opts.pool is None else {}),
            "index": self.opts.index,
            **({"index_corpus": corpus} if (corpus := self._index_corpus()) is not None else {}),
            "seed": self.seed,
            "params": self.params.to_dict(),
            **({"selection": sel} if (sel := self._selection_manifest()) else {}),
            "deviations": self.deviations(),
        }

    def deviations(self) -> list[str]:
        """Where this generation departs from CONNER, in words (the manifest's ``deviations``): over WoW-shaped
        samples (the query is the dialogue history), when the query is read (``source`` generate or retrieve)."""
        return [WOW_QUERY_DEVIATION] if self.dialogue_queries and self.opts.source != "reference" else []

    def _index_corpus(self) -> dict[str, Any] | None:
        """What the index retrieved from holds (an index rebuilt in place is another retrieval: generate --resume)."""
        if self.retriever is None:
            return None
        from ..knowledge.docs.retrievers import corpus_identity

        return corpus_identity(self.retriever)

    def _selection_manifest(self) -> dict[str, Any]:
        """CONNER §5's settings (r, m, n, top-p, γ and the models of Q_know), and the demonstration pool."""
        o = self.opts
        if o.select == "none" and self.demo_pool is None:
            return {}
        out: dict[str, Any] = {"select": o.select, "top_p": o.top_p, "temperature": o.temperature, "shot": o.shot, "seed": self.seed}
        if o.select == "knowledge":
            out["candidates"] = o.candidates
        if self.demo_pool is not None:
            out["pool"] = [{"id": d.id, **(self.demo_scores[j] if j < len(self.demo_scores) else {})} for j, d in enumerate(self.demo_pool)]
            out["pool_size"] = len(self.demo_pool)
        if self.q_know is not None:
            out["q_know"] = {"gamma": dict(zip(Q_KNOW, self.q_know.gamma)), **self.q_know.metric.settings()}
        return out


def from_spec(arg: str, *, ctx: Any, backend: Any = None, seed: int = 0, retriever: Any = None, q_know: Any = None, **method_args: Any) -> ConnerKnowledge:
    """Registry factory: ``conner-knowledge:<model>`` (default qwen2.5-coder-1.5b), or ``backend=`` a ready one;
    ``q_know=`` a ready Q_know scorer (``conner_select.QKnowScorer``) for ``select``, else one is built when first used
    (``conner_select.q_know_scorer``)."""
    from ..models import model_loader
    from ..registry import create

    try:
        opts = ConnerKnowledgeOptions(**method_args)
    except ValidationError as e:
        raise VericiteError(f"method conner-knowledge: invalid {validation_message(e)}") from None
    model = arg or DEFAULT_MODEL
    if backend is None and opts.source == "generate":
        backend = model_loader(ctx)(model)
    if retriever is None and opts.index and opts.source == "retrieve":
        retriever = create("retrievers", f"bm25:{opts.index}", ctx, k=1)
    if opts.select != "none":
        if q_know is None and opts.index is None:
            raise VericiteError(f"method conner-knowledge: select={opts.select} ranks by Q_know, whose factuality needs evidence: index=DIR (vericite docs index)")
        if q_know is None:  # built when first used (not by a pool's worker that takes a scored pool)
            from .conner_select import q_know_scorer

            q_know = lambda: q_know_scorer(opts, ctx, model, backend, seed)  # noqa: E731
    return ConnerKnowledge(backend, opts, seed=seed, retriever=retriever, q_know=q_know if opts.select != "none" else None)


from_spec.options_model = ConnerKnowledgeOptions  # type: ignore[attr-defined]
