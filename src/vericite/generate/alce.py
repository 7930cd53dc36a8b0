"""ALCE's baselines as generation methods (ALCE §4; VTG §3.1), each a :class:`~vericite.protocols.Method`:

* ``vanilla`` (ALCE's VANILLA, config tag ``default``): the question with its first ``ndoc`` documents, ALCE's
  default prompt for the question's sub-task (``{asqa,qampari,eli5}_default.json``) and ``shot`` demos;
* ``summ`` / ``snippet`` (SUMM / SNIPPET, ``use_shorter: summary|extraction``): each document shown as its
  summary / extraction (``*_sum_or_ext.json``); documents whose summary/extraction says "irrelevant" are skipped
  until ``ndoc`` are kept (ALCE's ``get_shorter_text``). ALCE's files carry them; for a document without one, the
  model writes it with ALCE's own prompt (``tools/gen_summary.py``: temperature 0.7, 100 tokens, the first
  ``shorter_pool`` = 20 documents of a question; a document past them without one ends the scan, as in ALCE),
  and the call cache keeps it;
* ``rerank`` (VANILLA w/ RERANK): ``samples`` = 4 answers sampled with the vanilla prompt (seeds seed .. seed+3),
  the one with the best citation recall by the judge kept (ALCE's metric, ``metrics/alce_citations.py``, through
  ``generate/alce_cite.py``; ties: the first);
* ``closedbook`` (CLOSEDBOOK + POSTCITE): the question alone (``*_closedbook.json``), then each sentence cites
  the most similar of the question's first ``ndoc`` documents (``posthoc``: ``tfidf``, or ``embedder:<spec>``).
  ALCE searched all 100 documents of a question: ``--ndoc 100`` does the same.

Documents are the question's own (``Sample.passages``, ALCE's ``docs``), or, when ``index`` is given and a
question has none (``documents: auto``; ``retrieve``: always), the top ones a registered retriever finds
(``registry.create("retrievers", "<retriever>:<index>")``): ``ndoc`` of them, and ``max(ndoc, shorter_pool + 1)``
for summ and snippet, the list ALCE's scan for ``ndoc`` relevant documents goes through (the one past the pool is
the full-text fallback when the model calls every summarised document irrelevant). Decoding as ALCE's run.py: temperature 0.5, top-p 1,
300 new tokens; the output has ``<|im_end|>`` removed, is right-stripped and loses a final "End.". The run's seed
draws the demos (ALCE's default seed is 42) and seeds sampling. Each record holds ``output`` (that text),
``answer`` (parsed by the ``alce`` citation format as the ALCE task reads it: Punkt sentences, ``[n`` markers;
``alce:qampari`` for QAMPARI's comma items) and ``passages`` (the documents used, in the order they were
numbered); the question's own ALCE fields stay in ``meta["alce"]``, where ``vericite evaluate --task alce`` reads
the reference answers.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import VericiteError, validation_message
from ..totals import status_totals
from ..types import GenParams, Passage, Sample
from .prompts import alce as P

#: method name -> (prompt kind, the document field shown instead of the text)
VARIANTS: dict[str, tuple[str, str | None]] = {
    "vanilla": ("default", None),
    "summ": ("sum_or_ext", "summary"),
    "snippet": ("sum_or_ext", "extraction"),
    "rerank": ("default", None),
    "closedbook": ("closedbook", None),
}
#: each method's version: summ and snippet are @2 since, with retrieved documents, they scan a deeper list
#: (``max(ndoc, shorter_pool + 1)``, as ALCE scans a question's 100 documents) instead of the retriever's default top k
VERSIONS: dict[str, int] = {"vanilla": 1, "summ": 2, "snippet": 2, "rerank": 1, "closedbook": 1}
#: how answers are parsed into the record's ``answer`` (``alce:qampari`` for QAMPARI questions): the ALCE task's format
CITATION_FORMAT = "alce"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class AlceOptions(BaseModel):
    """Every ALCE baseline's options (``--method-arg KEY=VALUE``; ``--ndoc``, ``--shot``, ``--index``,
    ``--retriever``, ``--max-tokens``, ``--temperature`` as flags)."""

    model_config = ConfigDict(extra="forbid")

    ndoc: int = Field(default=5, ge=0)  # documents given with the question
    shot: int = Field(default=2, ge=0)  # demos drawn from the prompt file
    ndoc_in_demo: int | None = Field(default=None, ge=0)  # documents shown in each demo (None: ndoc; 0: none)
    subtask: Literal["auto", "asqa", "qampari", "eli5"] = "auto"  # auto: from the question's gold fields
    prompt: str | None = None  # a prompt file of ALCE's shape instead of ALCE's {subtask}_{kind}.json
    documents: Literal["auto", "given", "retrieve"] = "auto"
    index: str | None = None  # an index folder to retrieve documents from
    retriever: str = "bm25"  # the registered retriever that reads the index
    max_tokens: int = Field(default=300, ge=1)
    temperature: float = Field(default=0.5, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)


class ShorterOptions(AlceOptions):
    shorter_pool: int = Field(default=20, ge=0)  # documents of a question the model may summarise
    shorter_max_tokens: int = Field(default=100, ge=1)
    shorter_temperature: float = Field(default=0.7, ge=0.0)


class RerankOptions(AlceOptions):
    samples: int = Field(default=4, ge=1)
    rerank_judge: str | None = None  # default: llm:<the method's model>
    at_most_citations: int = Field(default=3, ge=1)


class ClosedbookOptions(AlceOptions):
    posthoc: str = "tfidf"  # tfidf, or embedder:<spec> (a registered Embedder)


OPTIONS: dict[str, type[AlceOptions]] = {"vanilla": AlceOptions, "summ": ShorterOptions, "snippet": ShorterOptions, "rerank": RerankOptions, "closedbook": ClosedbookOptions}


def postprocess(text: str) -> str:
    """What ALCE's run.py keeps of a generation: ``<|im_end|>`` removed, right-stripped, a final "End." cut."""
    text = text.replace("<|im_end|>", "").rstrip()
    return text[: -len("End.")] if text.endswith("End.") else text


@dataclasses.dataclass
class Prompted:
    """One sub-task's prompt file, its chosen demos and their text."""

    file: P.PromptFile
    demo_ids: list[int]
    head: str


class AlceMethod:
    """One ALCE baseline (module docstring); built by :func:`from_spec`."""

    def __init__(self, name: str, backend: Any, opts: AlceOptions, *, seed: int = 0, retriever: Any = None, judge: Any = None, embedder: Any = None) -> None:
        self.name = name
        self.id = f"{name}@{VERSIONS[name]}"
        self.kind, self.use_shorter = VARIANTS[name]
        self.backend = backend
        self.opts = opts
        self.seed = seed
        self.retriever = retriever
        self.judge = judge
        self.embedder = embedder
        self.params = GenParams(max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p, seed=seed)
        self._prompts: dict[str, Prompted] = {}
        from ..registry import create

        self.format = create("formats", CITATION_FORMAT)
        self.qampari_format = create("formats", f"{CITATION_FORMAT}:qampari")

    # ------------------------------------------------------------------ prompts

    def subtask_for(self, sample: Sample) -> str:
        from ..datasets.alce import subtask_of

        return subtask_of(sample) if self.opts.subtask == "auto" else self.opts.subtask

    def prompted(self, subtask: str) -> Prompted:
        key = "file" if self.opts.prompt else subtask
        if key not in self._prompts:
            file = P.PromptFile.load(self.opts.prompt or P.shipped_prompt(subtask, self.kind))
            demo_ids = P.choose_demos(len(file.demos), self.opts.shot, self.seed)
            ndoc = self.opts.ndoc if self.opts.ndoc_in_demo is None else self.opts.ndoc_in_demo
            self._prompts[key] = Prompted(file, demo_ids, P.head(file, demo_ids, ndoc, self.use_shorter))
        return self._prompts[key]

    def prompt_text(self, sample: Sample, docs: Sequence[P.Doc]) -> str:
        """The whole prompt for ``sample`` shown ``docs`` (already chosen)."""
        p = self.prompted(self.subtask_for(sample))
        shown = docs if (self.kind != "closedbook" and self.opts.ndoc > 0) else None
        return p.head + P.render(p.file, sample.question, shown, use_shorter=self.use_shorter)

    # ------------------------------------------------------------------ documents

    def documents_for(self, sample: Sample) -> tuple[list[Passage], dict[str, Any] | None]:
        """The question's documents, or those retrieved for it (module docstring), best first."""
        mode = self.opts.documents
        if self.retriever is None or mode == "given" or (mode == "auto" and sample.passages):
            return list(sample.passages), None
        t0 = time.perf_counter()
        depth = self.retrieval_depth()
        search = getattr(self.retriever, "search", None)
        if callable(search):  # an index retriever: ask for the depth this method scans
            found = [p for p, _ in search(sample.question, depth) if isinstance(p, Passage)]
        else:  # a plugged-in retriever: its own top k
            found = [e for e in self.retriever.retrieve(sample.question).evidence if isinstance(e, Passage)]
        info = {"retriever": getattr(self.retriever, "id", type(self.retriever).__name__), "depth": depth if callable(search) else None,
                "found": len(found), "seconds": round(time.perf_counter() - t0, 4)}
        return found, info

    def retrieval_depth(self) -> int:
        """How many documents to retrieve for a question: ``ndoc``; for summ and snippet ``max(ndoc,
        shorter_pool + 1)``, the list that ALCE's ``get_shorter_text`` scans, skipping irrelevant documents, until
        ``ndoc`` are kept: its first ``shorter_pool`` documents have a summary or extraction (ALCE's files: the
        first 20 of 100), and when the model calls them all irrelevant the next one is shown with its full text
        (ALCE's "at least provide one"). With only the top ``ndoc``, such a question was left with none."""
        if self.use_shorter is None:
            return max(1, self.opts.ndoc)
        return max(1, self.opts.ndoc, self.opts.shorter_pool + 1)  # type: ignore[attr-defined]

    def choose(self, sample: Sample, docs: Sequence[Passage]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The documents shown (ALCE's doc shape), and what choosing them took (summaries written ...)."""
        dicts = [p.to_dict() for p in docs]
        if self.use_shorter is None:
            return dicts[: self.opts.ndoc], {}
        key, written = self.use_shorter, []

        def lookup(i: int, doc: P.Doc) -> str | None:
            if isinstance(doc.get(key), str):
                return str(doc[key])
            if i >= self.opts.shorter_pool:  # type: ignore[attr-defined]
                return None
            written.append(i + 1)
            return self.write_shorter(key, sample.question, doc)

        kept, skipped = P.shorter_docs(dicts, self.opts.ndoc, key, lookup)
        return kept, {"use_shorter": key, "written": written, "skipped_irrelevant": skipped}

    def write_shorter(self, key: str, question: str, doc: P.Doc) -> str:
        """A document's summary or extraction, written by the model (ALCE's gen_summary.py; cached by the call cache)."""
        o = self.opts
        params = GenParams(max_tokens=o.shorter_max_tokens, temperature=o.shorter_temperature, seed=self.seed)  # type: ignore[attr-defined]
        return self.backend.generate([P.shorter_messages(key, question, doc)], params)[0].text.strip()

    # ------------------------------------------------------------------ answering

    def generate(self, text: str, params: GenParams) -> Any:
        return self.backend.generate([P.messages(text)], params)[0]

    def answer(self, sample: Sample) -> dict[str, Any]:
        t0 = time.perf_counter()
        docs, retrieval = self.documents_for(sample)
        shown, chosen = self.choose(sample, docs)
        text = self.prompt_text(sample, shown)
        extra: dict[str, Any] = {}
        if self.name == "rerank":
            completions, output, extra = self.rerank(sample, text, shown)
        else:
            completions = [self.generate(text, self.params)]
            output = postprocess(completions[0].text)
        if self.name == "closedbook":  # shown nothing, cites what the others are shown
            output, extra = self.cite_post_hoc(sample, output, shown)
        passages = [Passage.from_dict(d) for d in shown]
        subtask = self.subtask_for(sample)
        parsed = (self.qampari_format if subtask == "qampari" else self.format).parse(output, passages)
        record: dict[str, Any] = dataclasses.replace(sample, passages=passages).to_dict()
        record.setdefault("passages", [])  # none kept (all irrelevant) is said, not left out
        record.update(
            method=self.id,
            prompt=P.PROMPT_ID,
            prompt_file=self.prompted(subtask).file.name,
            subtask=subtask,
            output=output,
            answer=parsed.to_dict(),
            citation_status=parsed.status_counts(),
            usage={"prompt_tokens": sum(c.prompt_tokens for c in completions), "completion_tokens": sum(c.completion_tokens for c in completions)},
            cached=all(c.cached for c in completions),
            seconds=round(time.perf_counter() - t0, 3),
        )
        if chosen:
            record["shorter"] = chosen
        if retrieval is not None:
            record["retrieval"] = retrieval
        record.update(extra)
        return record

    def rerank(self, sample: Sample, text: str, docs: Sequence[P.Doc]) -> tuple[list[Any], str, dict[str, Any]]:
        """``samples`` answers, each with its citation recall (ALCE's metric); the best kept (ties: the first; an
        answer without a sentence, or whose judgements could not be read, last)."""
        from ..models.usage import UsageMeter, metering
        from .alce_cite import rerank_recalls

        o = self.opts
        completions = [self.generate(text, dataclasses.replace(self.params, seed=self.seed + i)) for i in range(o.samples)]  # type: ignore[attr-defined]
        outputs = [postprocess(c.text) for c in completions]
        qampari = self.subtask_for(sample) == "qampari"
        meter = UsageMeter()  # the judge's model calls, apart (the run's meter counts them in the answer's usage too)
        with metering(self.judge, meter) as has_model:
            recalls, unreadable = rerank_recalls(sample, outputs, docs, self.judge, qampari=qampari, at_most=o.at_most_citations)  # type: ignore[attr-defined]
        best = max(range(len(outputs)), key=lambda i: (recalls[i] if recalls[i] is not None else -1.0, -i))
        candidates = [{"output": out, "seed": self.seed + i, "citation_recall": r} for i, (out, r) in enumerate(zip(outputs, recalls))]
        judge_usage = meter.usage.to_dict() if has_model else None
        return completions, outputs[best], {"rerank": {
            "chosen": best, "candidates": candidates, "judge": getattr(self.judge, "id", None), "unreadable_judgements": unreadable, "judge_usage": judge_usage,
        }}  # fmt: skip

    def cite_post_hoc(self, sample: Sample, output: str, docs: Sequence[P.Doc]) -> tuple[str, dict[str, Any]]:
        from .alce_cite import EmbedderSearcher, TfidfSearcher, post_hoc_cite

        searcher = EmbedderSearcher(docs, self.embedder) if self.embedder is not None else TfidfSearcher(docs)
        qampari = self.subtask_for(sample) == "qampari"
        cited, added = post_hoc_cite(output, docs, searcher, question=sample.question, qampari=qampari)
        return cited, {"closedbook_output": output, "posthoc": {"searcher": searcher.id if docs else None, "cited_sentences": added}}

    # ------------------------------------------------------------------ the run

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None:
        """Questions must carry documents unless they are retrieved; every prompt file they need must load
        and hold ``shot`` demos (:class:`~vericite.protocols.SampleChecking`)."""
        if self.retriever is None or self.opts.documents == "given":
            bare = [s.id for s in samples if not s.passages]
            if bare and self.opts.documents != "given":
                how = "none of them" if len(bare) == len(samples) else f"{len(bare)} of {len(samples)} (first: {bare[0]})"
                raise VericiteError(
                    f"the questions of {dataset!r} must carry documents for method {self.name}, and {how} do: pass --index DIR to"
                    " retrieve documents (see `vericite docs index`), or --method-arg documents=given to answer without them"
                )
        for s in samples:
            self.prompted(self.subtask_for(s))

    def manifest(self) -> dict[str, Any]:
        m: dict[str, Any] = {
            "method": self.id,
            "model": self.backend.identity().to_dict(),
            "prompt": P.PROMPT_ID,
            "prompt_files": {k: {**p.file.to_dict(), "demos": p.demo_ids} for k, p in self._prompts.items()},
            "parser": getattr(self.format, "id", CITATION_FORMAT),
            "seed": self.seed,
            "shot": self.opts.shot,
            "ndoc": self.opts.ndoc,
            "ndoc_in_demo": self.opts.ndoc_in_demo,
            "documents": self.opts.documents,
            "retriever": getattr(self.retriever, "id", None) if self.retriever is not None else None,
            "retrieval_depth": self.retrieval_depth() if self.retriever is not None and self.opts.documents != "given" else None,
            "params": self.params.to_dict(),
        }
        if self.retriever is not None and self.opts.documents != "given":
            from ..knowledge.docs.retrievers import corpus_identity

            if (corpus := corpus_identity(self.retriever)) is not None:
                m["index_corpus"] = corpus  # an index rebuilt in place is another retrieval (generate --resume)
        if self.use_shorter:
            o = self.opts
            m["shorter"] = {"use": self.use_shorter, "prompt": P.SHORTER_PROMPT_IDS[self.use_shorter], "pool": o.shorter_pool, "max_tokens": o.shorter_max_tokens, "temperature": o.shorter_temperature}  # type: ignore[attr-defined]
        if self.name == "rerank":
            from ..metrics.alce import VERSION as ALCE_METRICS

            recall = {"metric": "alce_citation_recall", "version": ALCE_METRICS}
            m["rerank"] = {"samples": self.opts.samples, "judge": getattr(self.judge, "id", None), "recall": recall, "at_most_citations": self.opts.at_most_citations}  # type: ignore[attr-defined]
        if self.name == "closedbook":
            from .alce_cite import POSTHOC_ID

            m["posthoc"] = {"id": POSTHOC_ID, "searcher": self.embedder_id() or "tfidf@1"}
        return m

    def embedder_id(self) -> str | None:
        return None if self.embedder is None else f"embedder:{getattr(self.embedder, 'id', type(self.embedder).__name__)}"

    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Citation-status totals; summaries written, candidates judged, sentences cited post hoc (as they apply)."""
        out: dict[str, Any] = {"citation_status": status_totals(r.get("citation_status", {}) for r in records)}
        shorter = [r["shorter"] for r in records if isinstance(r.get("shorter"), dict)]
        if shorter:
            out["shorter"] = {"written": sum(len(s.get("written", [])) for s in shorter), "skipped_irrelevant": sum(s.get("skipped_irrelevant", 0) for s in shorter)}
        if any(isinstance(r.get("rerank"), dict) for r in records):
            out["rerank_unreadable_judgements"] = sum(r["rerank"].get("unreadable_judgements", 0) for r in records if isinstance(r.get("rerank"), dict))
        retrieved = [r for r in records if isinstance(r.get("retrieval"), dict)]
        if retrieved:
            out["retrieved"] = {"questions": len(retrieved), "short_of_ndoc": sum(1 for r in retrieved if len(r.get("passages", [])) < self.opts.ndoc),
                                "none_found": sum(1 for r in retrieved if not r["retrieval"].get("found"))}
        return out


# --------------------------------------------------------------------------- factories


def build(name: str, arg: str, *, ctx: Any, backend: Any = None, seed: int = 0, judge: Any = None, embedder: Any = None, **method_args: Any) -> AlceMethod:
    """Registry factory of method ``name``: ``<name>:<model>`` (default qwen2.5-coder-1.5b), or ``backend=`` a
    ready one; ``method_args``: its options model (:data:`OPTIONS`); ``judge``, ``embedder``, and ``retriever``
    when it is not a string (the option names a registered retriever): ready objects instead of those the
    options name."""
    from ..models import model_loader
    from ..registry import create

    retriever = None
    if not isinstance(method_args.get("retriever", ""), str):
        retriever = method_args.pop("retriever")
    try:
        opts = OPTIONS[name](**method_args)
    except ValidationError as e:
        raise VericiteError(f"method {name}: invalid {validation_message(e)}") from None
    if opts.documents == "retrieve" and retriever is None and not opts.index:
        raise VericiteError(f"method {name}: documents=retrieve needs an index: pass --index DIR (see `vericite docs index`)")
    model = arg or DEFAULT_MODEL
    if backend is None:
        backend = model_loader(ctx)(model)
    if retriever is None and opts.index and opts.documents != "given":
        spec = opts.retriever if ":" in opts.retriever else f"{opts.retriever}:{opts.index}"
        retriever = create("retrievers", spec, ctx)
    if name == "rerank" and judge is None:
        spec = opts.rerank_judge  # type: ignore[attr-defined]
        if spec is None or spec == f"llm:{model}":
            from ..judges.llm import LLMJudge

            judge = LLMJudge(backend)  # the method's own model, metered with it
        else:
            judge = create("judges", spec, ctx)
    if name == "closedbook" and embedder is None:
        how = opts.posthoc  # type: ignore[attr-defined]
        if how.startswith("embedder:"):
            embedder = create("embedders", how.split(":", 1)[1], ctx)
        elif how != "tfidf":
            raise VericiteError(f"method closedbook: posthoc must be tfidf or embedder:<spec>, not {how!r}")
    method = AlceMethod(name, backend, opts, seed=seed, retriever=retriever, judge=judge, embedder=embedder)
    if opts.prompt or opts.subtask != "auto":
        method.prompted(opts.subtask)  # a bad file or --shot is said before anything runs
    return method


def _factory(name: str) -> Any:
    def from_spec(arg: str, *, ctx: Any, **kwargs: Any) -> AlceMethod:
        return build(name, arg, ctx=ctx, **kwargs)

    from_spec.__doc__ = f"Registry factory: ``{name}:<model>`` (see :func:`build`)."
    from_spec.options_model = OPTIONS[name]  # type: ignore[attr-defined]  # (protocols.MethodOptions)
    return from_spec


vanilla_from_spec = _factory("vanilla")
summ_from_spec = _factory("summ")
snippet_from_spec = _factory("snippet")
rerank_from_spec = _factory("rerank")
closedbook_from_spec = _factory("closedbook")
