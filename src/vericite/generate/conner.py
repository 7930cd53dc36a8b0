"""``conner-knowledge``: knowledge for a query, as CONNER acquires it (seed conner_2310.07289 §4.1, App. F–G).

``source`` says where the knowledge comes from:

- ``generate`` (default): the model writes it. Zero-shot (``shot=0``) with CONNER's best prompt of Table 11,
  ``Topic: {topic}\\nGenerate a Wikipedia to answer the given question.\\nQuestion: {query}\\nWikipedia:``;
  few-shot (``shot=n``) with n demonstrations in the template of Table 12 (the same words, each followed by its
  reference knowledge), drawn by the run's seed from the *other* questions of the run (never the item itself).
- ``retrieve``: the top passage BM25 finds in ``index`` for the query (CONNER's retrieved knowledge);
- ``reference``: the dataset's own (NQ: the gold passage; WoW: the gold knowledge sentence).

The record's ``output`` is the knowledge (what ``vericite evaluate --task conner`` measures); ``knowledge_source``,
``prompt`` and, few-shot, the ids of the ``demonstrations`` are kept with it.
"""

from __future__ import annotations

import random
import time
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import VericiteError, validation_message
from ..types import GenParams, Sample

VERSION = "conner-knowledge@1"
PROMPT_ID = "conner-knowledge@1"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
INSTRUCTION = "Generate a Wikipedia to answer the given question."


class ConnerKnowledgeOptions(BaseModel):
    """``--method-arg KEY=VALUE`` (``--shot``, ``--index``, ``--max-tokens``, ``--temperature`` as flags)."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["generate", "retrieve", "reference"] = "generate"
    shot: int = Field(default=0, ge=0)
    index: str | None = None
    max_tokens: int = Field(default=150, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)


def block(sample: Sample, knowledge: str | None = None) -> str:
    topic = (sample.meta or {}).get("topic")
    head = f"Topic: {topic}\n" if topic else ""
    text = f"{head}{INSTRUCTION}\nQuestion: {sample.question}\nWikipedia:"
    return text + (f" {knowledge}" if knowledge is not None else "")


def reference_knowledge(sample: Sample, passages: dict[str, str] | None = None) -> str | None:
    """The dataset's reference knowledge: ``meta.reference_knowledge`` (WoW), else NQ's gold passage by
    ``meta.gold_document``."""
    meta = sample.meta or {}
    if meta.get("reference_knowledge"):
        return str(meta["reference_knowledge"])
    doc = meta.get("gold_document")
    if doc and passages is not None:
        return passages.get(str(doc))
    return None


class ConnerKnowledge:
    """The method (module docstring)."""

    id = VERSION

    def __init__(self, backend: Any, opts: ConnerKnowledgeOptions, *, seed: int = 0, retriever: Any = None) -> None:
        self.backend, self.opts, self.seed, self.retriever = backend, opts, seed, retriever
        self.params = GenParams(max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p, seed=seed)
        self.pool: list[Sample] = []
        self._passages: dict[str, str] | None = None

    def _reference(self, sample: Sample) -> str | None:
        if self._passages is None and (sample.meta or {}).get("gold_document"):
            from ..datasets.nq import reference_passages

            self._passages = reference_passages()
        return reference_knowledge(sample, self._passages)

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None:
        """Keeps the run's questions as the few-shot pool; refuses what cannot be done before anything runs."""
        self.pool = list(samples)
        o = self.opts
        if o.source == "retrieve" and self.retriever is None:
            raise VericiteError("method conner-knowledge: source=retrieve needs an index: --index DIR (vericite docs index)")
        if o.source == "reference" or (o.source == "generate" and o.shot):
            missing = [s.id for s in samples[:50] if self._reference(s) is None]
            if missing:
                raise VericiteError(f"method conner-knowledge: dataset {dataset} has no reference knowledge (e.g. {missing[0]}): source=reference and few-shot need it")
            if o.source == "generate" and o.shot >= len(samples):
                raise VericiteError(f"method conner-knowledge: shot={o.shot} needs more than {o.shot} questions in the run (it has {len(samples)}); demonstrations are never the item itself")

    def demonstrations(self, sample: Sample) -> list[Sample]:
        others = [s for s in self.pool if s.id != sample.id]
        rng = random.Random(f"{self.seed}:{sample.id}")
        return rng.sample(others, min(self.opts.shot, len(others)))

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
            text = "\n\n".join([*(block(d, self._reference(d)) for d in demos), block(sample)])
            c = self.backend.generate([[{"role": "user", "content": text}]], self.params)[0]
            output = " ".join((c.text or "").split())
            usage = {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens}
            cached = bool(c.cached)
            record.update(prompt=PROMPT_ID, shot=o.shot)
            if demos:
                record["demonstrations"] = [d.id for d in demos]
        from ..attribution.passages import parse_passage_answer

        record.update(output=output, answer=parse_passage_answer(output).to_dict(), usage=usage, cached=cached, seconds=round(time.perf_counter() - t0, 3))
        return record

    def manifest(self) -> dict[str, Any]:
        return {
            "method": self.id,
            "model": self.backend.identity().to_dict() if self.backend is not None else None,
            "prompt": PROMPT_ID,
            "source": self.opts.source,
            "shot": self.opts.shot,
            "index": self.opts.index,
            "seed": self.seed,
            "params": self.params.to_dict(),
        }


def from_spec(arg: str, *, ctx: Any, backend: Any = None, seed: int = 0, retriever: Any = None, **method_args: Any) -> ConnerKnowledge:
    """Registry factory: ``conner-knowledge:<model>`` (default qwen2.5-coder-1.5b), or ``backend=`` a ready one."""
    from ..models import model_loader
    from ..registry import create

    try:
        opts = ConnerKnowledgeOptions(**method_args)
    except ValidationError as e:
        raise VericiteError(f"method conner-knowledge: invalid {validation_message(e)}") from None
    if backend is None and opts.source == "generate":
        backend = model_loader(ctx)(arg or DEFAULT_MODEL)
    if retriever is None and opts.index and opts.source == "retrieve":
        retriever = create("retrievers", f"bm25:{opts.index}", ctx, k=1)
    return ConnerKnowledge(backend, opts, seed=seed, retriever=retriever)


from_spec.options_model = ConnerKnowledgeOptions  # type: ignore[attr-defined]
