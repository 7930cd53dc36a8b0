"""Fakes of the pipeline's extension points: a dataset, a method, a metric, a builder, an experiment and a task.
Together they make a whole run without any model: the ``fake`` task names the ``kg`` format and the ``fake``
metric; the ``fake`` method answers ``fake`` dataset questions by citing the first triple it was given."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from ..bench.experiments.base import Transformed
from ..errors import VericiteError
from ..jsonl import text_lines
from ..types import AttributedAnswer, GenParams, Message, Sample
from .knowledge import DEMO_FACTS, graph_from

METHOD_ID = "fake-method@1"


# --------------------------------------------------------------------------- dataset


class FakeDataset:
    """Questions about the demo graph's entities (``fakes.knowledge.DEMO_FACTS``), one per entity: the
    knowledge is the entity's one-hop triples, the gold set its first two, no ``absent``."""

    name = "fake"

    def load(self, *, n: int | None = None, **options: Any) -> list[Sample]:
        graph = graph_from(DEMO_FACTS)
        out = []
        for i, (entity_id, (label, _)) in enumerate(DEMO_FACTS.items(), 1):
            triples = graph.one_hop(entity_id)
            out.append(Sample(f"fake-{i}", f"Who or what is {label}?", knowledge=triples, gold=triples[:2], meta={"dataset": "fake"}))
        return out[:n] if n is not None else out


# --------------------------------------------------------------------------- method


def _cite_first_triple(messages: Sequence[Message], params: GenParams) -> str:
    """The fake model: cites the first knowledge line of the prompt, or says [NA]."""
    for line in str(messages[-1].get("content", "")).splitlines():
        if line.startswith("[") and ": " in line:
            value = line[1:-1].split(": ", 1)[1]
            return f"It is {value} {line}."
    return "I do not know [NA]."


class FakeMethod:
    """Asks ``backend`` (default: a FakeBackend that cites the first triple it is shown) with the question and
    the knowledge as ``[id, property: value]`` lines; parses the reply with the ``kg`` format."""

    id = METHOD_ID

    def __init__(self, backend: Any = None, max_tokens: int = 64, seed: int = 0) -> None:
        if backend is None:
            from ..models.fake import FakeBackend

            backend = FakeBackend("fake:method", replies=_cite_first_triple)
        self.backend = backend
        self.params = GenParams(max_tokens=max_tokens, seed=seed)

    def manifest(self) -> dict[str, Any]:
        return {"method": self.id, "model": self.backend.identity().to_dict(), "params": self.params.to_dict()}

    def answer(self, sample: Sample) -> dict[str, Any]:
        from ..attribution.kg import KgFormat

        lines = [f"[{t.subject}, {t.property}: {t.value}]" for t in sample.knowledge]
        messages = [{"role": "user", "content": "\n".join([f"Question: {sample.question}", *lines])}]
        completion = self.backend.generate([messages], self.params)[0]
        parsed = KgFormat().parse(completion.text, sample.knowledge)
        record = sample.to_dict()
        record.update(
            method=self.id,
            output=completion.text,
            answer=parsed.to_dict(),
            citation_status=parsed.status_counts(),
            usage={"prompt_tokens": completion.prompt_tokens, "completion_tokens": completion.completion_tokens},
        )
        return record


# --------------------------------------------------------------------------- metric


class FakeMetric:
    """``fake_cited_share``: the share of sentences, over the corpus, that carry at least one citation. Its runs
    compare (``PairedStatistics``): the statistic is rebuilt from the parsed answer of each samples.jsonl record;
    it has no settings to share."""

    id = "fake@1"
    names = ("fake_cited_share",)
    inputs = ("answer",)
    compared_settings: dict[str, str | None] = {}
    allowed_differences: tuple[Any, ...] = ()

    def compute(self, samples: Sequence[Sample], answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        from ..metrics.base import MetricResult

        if len(samples) != len(answers):
            raise VericiteError(f"{len(samples)} samples but {len(answers)} answers")
        sentences = [s for a in answers for s in a.sentences]
        cited = sum(1 for s in sentences if s.citations)
        name = self.names[0]
        if not sentences:
            return {name: MetricResult(name, None, len(answers), reason="no sentences", version=self.id)}
        return {name: MetricResult(name, cited / len(sentences), len(answers), version=self.id, details={"sentences": len(sentences), "cited": cited})}

    @staticmethod
    def statistics_from_records(records: Sequence[Any]) -> Any:
        """The share as a ratio of each answer's cited sentences to its sentences, read from the records' parsed
        ``answer``; not computed without sentences."""
        from ..metrics.base import CorpusStatistics, ratio_of_sums

        answers = [AttributedAnswer.from_dict(r["answer"]) for r in records]
        cited = [sum(1 for s in a.sentences if s.citations) for a in answers]
        sentences = [len(a.sentences) for a in answers]
        name = FakeMetric.names[0]
        cs = CorpusStatistics({name: ratio_of_sums(cited, sentences)}, ns={name: len(answers)})
        if not sum(sentences):
            cs.reasons[name] = "no sentences"
        return cs


# --------------------------------------------------------------------------- builder


class FakeBuilder:
    """Writes the fake dataset's samples to ``out`` as JSONL; ``resume`` keeps the lines already there and adds
    the missing ones. Returns a build log like the real builder's (``entries``, ``status``)."""

    id = "fake-builder@1"

    def __init__(self, n: int | None = None) -> None:
        self.n = n

    def build(self, out: str | os.PathLike[str], *, resume: bool = False) -> dict[str, Any]:
        path = Path(out)
        done: set[str] = set()
        if path.exists():
            if not resume:
                raise VericiteError(f"{path} already exists: pass resume=True to continue it")
            done = {json.loads(line)["id"] for line in text_lines(path.read_text(encoding="utf-8")) if line.strip()}
        samples = FakeDataset().load(n=self.n)
        with open(path, "a", encoding="utf-8") as f:
            for s in samples:
                if s.id not in done:
                    f.write(json.dumps(s.to_dict(), ensure_ascii=False) + "\n")
        return {"builder": self.id, "entries": len(samples), "added": len(samples) - len(done & {s.id for s in samples}), "status": "complete", "out": str(path)}


# --------------------------------------------------------------------------- experiment


class FakeExperiment:
    """Level n drops the first n triples of each sample's knowledge (``meta["dropped"] = n``); samples with
    fewer triples than the largest level of the run are skipped at every level."""

    name = "fake"
    x_label = "dropped triples"
    levels = (0, 1)
    section = ""

    def samples_at(self, samples: Sequence[Sample], level: Any, seed: int = 0, *, levels: Sequence[Any] | None = None) -> Transformed:
        most = max([int(x) for x in (levels if levels is not None else self.levels)] + [0])
        n = int(level)
        kept = [replace(s, knowledge=list(s.knowledge[n:]), meta=dict(s.meta, dropped=n)) for s in samples if len(s.knowledge) >= most]
        skipped = [s.id for s in samples if len(s.knowledge) < most]
        return Transformed(kept, skipped, f"fewer than {most} triples" if skipped else "")

    def presentation(self) -> dict[str, Any]:
        return {"descending": False, "curves": []}

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "x": self.x_label, "levels": list(self.levels), "section": self.section, **self.presentation()}


# --------------------------------------------------------------------------- task


class FakeTask:
    """A task declaration: input lines carry id, question, answer and knowledge; answers cite triples
    (``kg``); the suite is the ``fake`` metric; no judge; it counts the answers' sentences."""

    name = "fake"
    input_fields = ("id", "question", "answer", "knowledge")
    optional_fields = ("meta",)
    field_help = {"knowledge": "the triples the answer may cite"}
    citation_format = "kg"
    evidence = "knowledge"
    metrics = ("fake",)
    judge_purposes: tuple[str, ...] = ()
    judge_trust = None

    def metric_names(self) -> tuple[str, ...]:
        return FakeMetric.names

    def suite(self, settings: Any, *, judge: Any, ctx: Any) -> list[Any]:
        from ..registry import create

        return [create("metrics", "fake", ctx)]

    def counts(self, answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        return {"sentences": sum(len(a.sentences) for a in answers)}


# --------------------------------------------------------------------------- registry factories


def dataset_from_spec(arg: str, *, ctx: Any, **options: Any) -> FakeDataset:
    """Registry factory: ``fake``."""
    return FakeDataset()


class FakeMethodOptions(BaseModel):
    """The fake method's own options (its ``method_args``)."""

    model_config = ConfigDict(extra="forbid")

    max_tokens: int = Field(default=64, ge=1)


def method_from_spec(arg: str, *, ctx: Any, backend: Any = None, seed: int = 0, **options: Any) -> FakeMethod:
    """Registry factory: ``fake`` (its own fake model) or ``fake:<model name>`` (loaded the way ``ctx`` says);
    ``options``: :class:`FakeMethodOptions`."""
    opts = FakeMethodOptions(**options)
    if backend is None and arg:
        from ..models import model_loader

        backend = model_loader(ctx)(arg)
    return FakeMethod(backend, max_tokens=opts.max_tokens, seed=seed)


method_from_spec.options_model = FakeMethodOptions  # type: ignore[attr-defined]  # (protocols.MethodOptions)


def metric_from_spec(arg: str, *, ctx: Any, **options: Any) -> FakeMetric:
    """Registry factory: ``fake``."""
    return FakeMetric()


metric_from_spec.family = FakeMetric  # type: ignore[attr-defined]  # (protocols.FamilyFactory)


def builder_from_spec(arg: str, *, ctx: Any, n: int | None = None) -> FakeBuilder:
    """Registry factory: ``fake`` (``n=`` caps the entries)."""
    return FakeBuilder(n)


def experiment_from_spec(arg: str, *, ctx: Any, **options: Any) -> FakeExperiment:
    """Registry factory: ``fake``."""
    return FakeExperiment()


def task_from_spec(arg: str, *, ctx: Any, **options: Any) -> FakeTask:
    """Registry factory: ``fake``."""
    return FakeTask()
