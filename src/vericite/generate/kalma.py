"""KaLMA attributed generation (paper §3), the ``kalma`` :class:`~vericite.protocols.Method`: knowledge (given
with the question, or retrieved from a graph) -> one-shot prompt with [NA] -> one model call -> parsed answer
with triple citations. The generic run loop (``vericite.runs.loop``) drives it over a dataset into a run
folder; its options (``method_args``) are :class:`KalmaOptions`."""

from __future__ import annotations

import time
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import VericiteError, validation_message
from ..totals import status_totals
from ..types import GenParams, Sample, Triple
from .prompts.kalma import Demonstration, KalmaPrompt, packaged_source

METHOD_ID = "kalma@1"
DEFAULT_MODEL = "qwen2.5-coder-1.5b"


class KalmaOptions(BaseModel):
    """KaLMA's own options (a run config's ``method_args``, or its flat keys ``knowledge: given`` ...).

    ``knowledge``: the knowledge given with each question, or retrieved from the graph at ``store`` (``auto``:
    retrieve when a graph is given). ``demonstration``: the one-shot example (a vericite or BioKaLMA prompt
    file; default: the dataset's, else vericite's own)."""

    model_config = ConfigDict(extra="forbid")

    knowledge: Literal["auto", "given", "retrieve"] = "auto"
    store: str | None = None
    demonstration: str | None = None
    max_tokens: int = Field(default=384, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)


class KalmaGenerator:
    """The KaLMA :class:`~vericite.protocols.Method`: answers one sample at a time; ``answer`` returns the
    record written to samples.jsonl, ``manifest`` what decides the answers, ``summarise`` its part of a run's
    summary. With a ``retriever`` the knowledge is retrieved for each question, else the question's own is
    given. ``store``: a graph store this method opened, closed by ``close``."""

    id = METHOD_ID

    def __init__(self, backend: Any, prompt: KalmaPrompt, params: GenParams, retriever: Any | None = None, *, store: Any = None) -> None:
        self.backend = backend
        self.prompt = prompt
        self.params = params
        self.retriever = retriever
        self.store = store

    @property
    def knowledge_mode(self) -> str:
        return "given" if self.retriever is None else "retrieve"

    def manifest(self) -> dict[str, Any]:
        from ..attribution.kg import PARSER_ID

        return {
            "method": self.id,
            "model": self.backend.identity().to_dict(),
            "prompt": self.prompt.id,
            "demonstration": self.prompt.demonstration.source,
            "demonstration_sha256": self.prompt.demonstration.sha256,
            "parser": PARSER_ID,
            "knowledge_mode": self.knowledge_mode,
            "retriever": getattr(self.retriever, "id", None),
            "seed": self.params.seed,
            "params": self.params.to_dict(),
        }

    def upgrade_manifest(self, old: Mapping[str, Any]) -> dict[str, Any]:
        """A ``kalma@1`` manifest written before vericite's own demonstration was recorded as
        ``vericite:demonstration.json`` (``protocols.ManifestUpgrading``): it recorded that file's absolute path, which
        differs from one install or checkout to another; read as the name, so ``--resume`` from another install
        continues the run (another demonstration file still differs)."""
        demo = old.get("demonstration")
        if old.get("method") != self.id or not isinstance(demo, str):
            return dict(old)
        return {**old, "demonstration": packaged_source(demo)}

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None:
        """Questions answered with the knowledge given must carry some (:class:`~vericite.protocols.SampleChecking`)."""
        if self.retriever is None and not any(s.knowledge for s in samples):
            raise VericiteError(f"the questions of {dataset!r} carry no knowledge: pass --store DIR to retrieve it from a graph")

    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Citation-status totals and [NA] markers over the answers; with retrieval, how many questions found no
        entity of the graph and how many mentions were not found, and the entity accuracy where the questions
        name gold entities (:class:`~vericite.protocols.Summarising`)."""
        summary: dict[str, Any] = {
            "citation_status": status_totals(r.get("citation_status", {}) for r in records),
            "na_count": sum(r.get("na_count", 0) for r in records),
        }
        retrieved = [r["retrieval"] for r in records if isinstance(r.get("retrieval"), dict)]
        if retrieved:
            summary["retrieval"] = {
                "questions": len(retrieved),
                "no_entity_found": sum(1 for x in retrieved if not x.get("entities")),
                "mentions_not_found": sum(len(x.get("not_found") or []) for x in retrieved),
            }
        accs = [r["retrieval"]["accuracy"] for r in records if r.get("retrieval", {}).get("accuracy")]
        if accs:
            summary["retrieval_accuracy"] = {
                k: round(sum(a[k] for a in accs if a[k] is not None) / max(1, sum(1 for a in accs if a[k] is not None)), 4)
                for k in ("entity_recall", "entity_precision", "covers_gold")
            }
            summary["retrieval_accuracy"]["n"] = len(accs)
        return summary

    def close(self) -> None:
        """Close the graph store this method opened (not the model: whoever loaded it owns it)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def knowledge_for(self, sample: Sample) -> tuple[list[Triple], dict[str, Any] | None]:
        if self.retriever is None:
            return list(sample.knowledge), None
        from ..knowledge.retrieval import retrieval_accuracy

        t0 = time.perf_counter()
        res = self.retriever.retrieve(sample.question)
        info = res.to_dict()
        info["seconds"] = round(time.perf_counter() - t0, 4)
        # said on every record, so a graph that does not know the question's entities cannot pass unseen
        info["not_found"] = [m.text for m in res.mentions if m.chosen is None]
        if sample.gold_entities:
            info["accuracy"] = retrieval_accuracy([e.id for e in res.entities], sample.gold_entities)
        return res.triples, info

    def answer(self, sample: Sample) -> dict[str, Any]:
        from ..attribution.kg import graph_from_triples, parse_kg_answer

        knowledge, retrieval = self.knowledge_for(sample)
        messages = self.prompt.messages(sample.question, knowledge)
        t0 = time.perf_counter()
        completion = self.backend.generate([messages], self.params)[0]
        seconds = time.perf_counter() - t0
        parsed = parse_kg_answer(completion.text, graph_from_triples(knowledge))
        record: dict[str, Any] = sample.to_dict()
        record["knowledge"] = [t.to_dict() for t in knowledge]
        record.update(
            method=METHOD_ID,
            prompt=self.prompt.id,
            output=completion.text,
            answer=parsed.to_dict(),
            citation_status=parsed.status_counts(),
            na_count=parsed.na_count,
            usage={"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens},
            cached=completion.cached,
            seconds=round(seconds, 3),
        )
        if retrieval is not None:
            record["retrieval"] = retrieval
        return record


def from_spec(
    arg: str,
    *,
    ctx: Any,
    backend: Any = None,
    graph: Any = None,
    retriever: Any = None,
    seed: int = 0,
    **method_args: Any,
) -> KalmaGenerator:
    """Registry factory: ``kalma:<model name>`` (default: qwen2.5-coder-1.5b), loaded the way ``ctx`` says, or
    ``backend=`` a ready one; ``method_args``: :class:`KalmaOptions`; ``graph``: a ready KnowledgeGraph, or
    ``retriever``: a Retriever or a retriever spec (``kalma:oxigraph:<store>``), to retrieve knowledge with.
    A store named by ``store`` is opened read-only here and closed by the method's ``close``."""
    from ..models import model_loader

    try:
        opts = KalmaOptions(**method_args)
    except ValidationError as e:
        raise VericiteError(f"method kalma: invalid {validation_message(e)}") from None
    mode = opts.knowledge
    if mode == "auto":
        mode = "retrieve" if (opts.store or graph is not None or retriever is not None) else "given"
    opened = None
    if mode == "retrieve" and retriever is None:
        if graph is None:
            if not opts.store:
                raise VericiteError("--knowledge retrieve needs a graph: pass --store DIR (see `vericite kg load`)")
            from ..knowledge.store import open_store

            graph = opened = open_store(opts.store)  # read-only: `kg lookup` and other runs may read it meanwhile
        from ..knowledge.retrieval import KalmaRetriever

        retriever = KalmaRetriever(graph)
    elif mode == "retrieve" and isinstance(retriever, str):
        from ..registry import create

        retriever = create("retrievers", retriever, ctx)
    try:
        prompt = KalmaPrompt(Demonstration.load(opts.demonstration))
        if backend is None:
            backend = model_loader(ctx)(arg or DEFAULT_MODEL)
    except BaseException:
        if opened is not None:
            opened.close()
        raise
    params = GenParams(max_tokens=opts.max_tokens, temperature=opts.temperature, seed=seed)
    return KalmaGenerator(backend, prompt, params, retriever if mode == "retrieve" else None, store=opened)


from_spec.options_model = KalmaOptions  # type: ignore[attr-defined]  # (protocols.MethodOptions)
