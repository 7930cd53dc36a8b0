"""A pooled generate (``--ray``, ``--concurrency``) whose driver died while writing a finished batch's samples:
the rest of that batch is in the checkpoint (``.ray-calls.jsonl``), and ``--resume`` takes it from there, never
asking the model for those samples again (tests/e2e/test_ray_killed.py kills a real driver; this kills one at the exact
place, between two samples of one batch)."""

from __future__ import annotations

import json

import pytest

from vericite.models.fake import FakeBackend
from vericite.runs.config import GenerateConfig
from vericite.runs.distributed import generate_pooled
from vericite.runs.rundir import RunDir
from vericite.types import Sample

from tests.support.pooled import counting_run


class Killed(BaseException):
    """The driver's death, here: nothing after it runs (no ``except Exception`` catches it)."""


def test_a_driver_killed_mid_batch_resumes_without_asking_a_checkpointed_sample_again(tmp_path, monkeypatch):
    samples, asked, run = counting_run(tmp_path / "r", 12, workers=1, batch_size=3)

    real_append = RunDir.append

    def dying_append(self, record):
        if len(self.done_ids) == 4:  # s00..s03 written: the batch s03-s05 is checkpointed, s04 and s05 not written
            raise Killed
        real_append(self, record)

    monkeypatch.setattr(RunDir, "append", dying_append)
    with pytest.raises(Killed):
        run(resume=False)
    monkeypatch.setattr(RunDir, "append", real_append)
    checkpointed = {o["id"] for line in (tmp_path / "r" / ".ray-calls.jsonl").read_text().splitlines() for o in json.loads(line)["result"]}
    assert checkpointed == {f"s{i:02d}" for i in range(6)} and asked == sorted(checkpointed)

    asked.clear()
    manifest = run(resume=True)
    assert asked == [f"s{i:02d}" for i in range(6, 12)]  # s04 and s05 come from the checkpoint
    ids = [json.loads(line)["id"] for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert ids == [s.id for s in samples] and manifest["status"] == "complete"


def test_a_pooled_resume_reads_an_older_manifest_as_the_method_says(tmp_path):
    # the pooled driver compares manifests as the sequential loop does (ManifestUpgrading): a few-shot
    # conner-knowledge folder written before demo_words was recorded put its demonstrations in whole
    from vericite.errors import VericiteError

    samples = [Sample(f"q{i}", f"Question {i}?", meta={"reference_knowledge": f"Gold {i}."}) for i in range(4)]
    cfg = GenerateConfig(dataset="x", model="fake", method="conner-knowledge", shot=2, demo_draw="run", cache=False)

    def run(resume, n):
        return generate_pooled(cfg, tmp_path / "r", ray=None, workers=1, resume=resume, samples=samples[:n], backend_factory=lambda: FakeBackend(), progress=False)

    run(False, 3)
    path = tmp_path / "r" / "manifest.json"
    old = json.loads(path.read_text())
    assert old["demo_words"] == 200
    del old["demo_words"]
    path.write_text(json.dumps(old))
    with pytest.raises(VericiteError, match=r"cannot resume .*demo_words: 'whole .* -> 200"):
        run(True, 4)
