"""Issue 12: "progress per question and per sentence". VTG names the sentence and trial it is on
(``protocols.StepShowing``); the run's progress line says it while a long answer runs."""

from __future__ import annotations

import time

from vericite import progress
from vericite.fakes.judges import KeywordJudge
from vericite.generate.vtg import build
from vericite.protocols import StepShowing
from vericite.registry import BuildContext
from vericite.runs.loop import run_method
from vericite.types import Sample

from tests.support.vtg import DOCS, QUESTION, scripted

PARIS = "Paris is the capital of France."
MARS = "Mars is red."


def vtg(backend):
    return build("", ctx=BuildContext(), backend=backend, judge=KeywordJudge(), k=2, docs_per_query=1, trials=1)


def test_vtg_reports_each_sentence_trial_and_evidence_round():
    m = vtg(scripted([PARIS, MARS]))
    assert isinstance(m, StepShowing)
    steps: list[str] = []
    m.show_steps(steps.append)
    m.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert steps[0] == "sentence 1, trial 1"
    assert "sentence 2, trial 1" in steps and "sentence 2, evidence finder" in steps and "sentence 2, trial 2" in steps


def test_the_run_s_progress_line_names_the_sample_and_its_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.05)
    m = vtg(scripted([PARIS]))
    inner = m.backend.generate

    def slow(*a, **k):  # a slow model: the line is written while the answer runs
        time.sleep(0.15)
        return inner(*a, **k)

    monkeypatch.setattr(m.backend, "generate", slow)
    run_method(m, [Sample("q1", QUESTION, passages=list(DOCS))], tmp_path / "run", config={"method": "vtg"}, progress=True)
    err = capsys.readouterr().err
    assert "sample q1, sentence 1, trial 1 running for" in err or "sample q1, sentence 2, trial 1 running for" in err, err
