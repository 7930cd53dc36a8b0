"""A resumed run whose dataset now asks other questions under the ids already answered is refused, by the local loop
(tests/e2e/test_generate_resume_changed_dataset.py) and by the pooled one (``--concurrency``, ``--ray``) alike."""

from __future__ import annotations

import pytest

from vericite.errors import VericiteError
from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.types import Sample, Triple


def samples(questions):
    return [Sample(f"s{i}", q, [Triple("Q1", "occupation", "painter", "Ann")]) for i, q in enumerate(questions)]


def run(out, questions, resume=False):
    cfg = GenerateConfig(dataset="x", model="fake", knowledge="given", cache=False)
    return generate_pooled(cfg, out, ray=None, workers=1, resume=resume, samples=samples(questions),
                           backend_factory=lambda: FakeBackend(default="Ann was a painter [Q1, occupation: painter]."), progress=False)  # fmt: skip


def test_the_pooled_run_refuses_a_changed_dataset(tmp_path):
    run(tmp_path / "r", ["What did Ann do?", "Where?"][:1])
    run(tmp_path / "r", ["What did Ann do?", "Where?"], resume=True)  # the same questions: resumes
    with pytest.raises(VericiteError, match="sample s0 asked 'What did Ann do[?]' in the run, the dataset now asks 'Who[?]'"):
        run(tmp_path / "r", ["Who?", "Where?", "When?"], resume=True)
