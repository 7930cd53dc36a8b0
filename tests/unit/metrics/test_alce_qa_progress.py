"""ALCE's QA model (qa_em, qa_f1, qa_hit) runs in the corpus's scoring, after the per-answer bar: one call of the
model per sub-question of every answer, minutes on a CPU for ASQA, so a bar over the answers moves as each is
answered. The values and the model's questions are those without it. A stand-in QA model (no transformers)."""

from __future__ import annotations

import contextlib

import vericite.metrics.alce_qa as alce_qa
from vericite.metrics.alce_family import AlceMetric
from vericite.registry import create
from vericite.types import QAPair, Sample


class StandInQA:
    asked: list[tuple[str, str]] = []

    def __init__(self, model: str) -> None:
        self.id = model

    def answer(self, question: str, context: str) -> str:
        StandInQA.asked.append((question, context))
        return context.split()[0] if question.startswith("who") else ""


def corpus():
    samples = [
        Sample("a", "Who?", qa_pairs=[QAPair("who wrote it", ("Paul Simon",)), QAPair("who sang it", ("Art Garfunkel",))]),
        Sample("b", "When?"),  # no sub-questions: nothing to answer
        Sample("c", "Who?", qa_pairs=[QAPair("who sang it", ("Art",))]),
    ]
    fmt = create("formats", "alce")
    return samples, [fmt.parse(t) for t in ("Paul Simon wrote it [1].", "In 1970 [2].", "Art Garfunkel sang it [1].")]


def test_the_qa_model_moves_a_bar_over_the_answers_and_changes_no_value(monkeypatch):
    monkeypatch.setattr(alce_qa, "QAModel", StandInQA)
    monkeypatch.setattr(alce_qa, "qa_unavailable", lambda model: None)
    samples, answers = corpus()
    names = ["qa_em", "qa_f1", "qa_hit"]
    StandInQA.asked = []
    plain = AlceMetric(None, subtask="asqa", metrics=names, qa_model="stand-in", resamples=0).score_answers(samples, answers)
    asked_plain, StandInQA.asked = StandInQA.asked, []
    bars: list[dict] = []

    def bar(total, description):  # type: ignore[no-untyped-def]
        b = {"total": total, "description": description, "steps": []}
        bars.append(b)
        return contextlib.nullcontext(lambda n=1: b["steps"].append((n, len(StandInQA.asked))))

    shown = AlceMetric(None, subtask="asqa", metrics=names, qa_model="stand-in", resamples=0).score_answers(samples, answers, progress=bar)
    assert shown.scores == plain.scores and shown.results == plain.results and StandInQA.asked == asked_plain
    assert plain.results["qa_em"].value is not None and plain.results["qa_em"].n == 2
    (b,) = [b for b in bars if "QA model" in b["description"]]
    assert b["description"] == "answering sub-questions (ALCE's QA model)"
    # the two answers with sub-questions, each once its questions were answered (2, then 1 more)
    assert b["total"] == 2 and b["steps"] == [(1, 2), (1, 3)]
