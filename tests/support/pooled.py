"""A pooled KaLMA generate over ``n`` numbered questions whose fake model records which question it was asked
(``asked``: "s00", "s01", ...), for the tests that interrupt or kill a pooled run and check what ``--resume`` asks
again (tests/unit/runs/test_pooled_*.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.types import Sample, Triple


def counting_run(folder: Path, n: int, *, workers: int, batch_size: int) -> tuple[list[Sample], list[str], Callable[[bool], Any]]:
    """(the samples, the questions the model was asked in order, ``run(resume)`` -> the run's manifest)."""
    samples = [Sample(f"s{i:02d}", f"Question {i:02d}?", [Triple("Q1", "occupation", "painter", "Ann")]) for i in range(n)]
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given", cache=False)
    asked: list[str] = []

    def reply(messages, params):
        asked.append("s" + re.findall(r"Question (\d\d)[?]", messages[-1]["content"])[-1])
        return "Ann was a painter [Q1, occupation: painter]."

    def run(resume: bool) -> Any:
        return generate_pooled(cfg, folder, ray=None, workers=workers, resume=resume, samples=samples,
                               backend_factory=lambda: FakeBackend(replies=reply), progress=False, batch_size=batch_size)  # fmt: skip

    return samples, asked, run
