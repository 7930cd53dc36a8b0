"""``vericite report`` of an experiment folder reads each level's samples.jsonl once for both things it draws from
it: the token figure (strictly: a bad line is the figure's one-line note) and the VTG trace (bad lines skipped). It
read each twice; the sections are what the two separate reads give."""

from __future__ import annotations

import builtins
import io
import json
from pathlib import Path

import pytest

from vericite.report.page import build_report
from vericite.report.token_figure import experiment_token_section
from vericite.report.vtg_trace import level_traces, vtg_trace_section

F1 = "alce_citation_f1"


def answer(i: int, level: int) -> dict:
    tokens = {"prompt_tokens": 100 * (level + 1) + i, "completion_tokens": 10}
    trace = {"sentences": [{"trials": [{"outcome": "verified-citations", "generation_verifier": {"entailed": True}}]}],
             "problems": {"no_citation": level}, "evidence_rounds": 1, "end": "end-marker",
             "components": {"sentence": {**tokens, "calls": 1}}}  # fmt: skip
    return {"id": f"q{i}", "question": f"Question {i}?", "output": f"Answer {i} [1].", "usage": tokens, "vtg": trace}


def experiment_folder(tmp_path: Path, damaged: bool) -> Path:
    """A ``vericite run`` folder of a VTG experiment with two levels (fake numbers); ``damaged``: level 1's
    samples.jsonl has a line that is not JSON (the figure says so, the trace skips it)."""
    run = tmp_path / "run"
    rows = []
    for level, method in enumerate(("vanilla", "vtg")):
        entry = {"value": 0.4 + level / 10, "ci": [0.3, 0.6], "n": 3, "range": [0.0, 1.0]}
        rows.append({"level": level, "generation": {"method": method}, "metrics": {F1: entry}})
        folder = run / f"level-{level}"
        (folder / "eval").mkdir(parents=True)
        lines = [json.dumps(answer(i, level)) + "\n" for i in range(3)]
        if damaged and level == 1:
            lines.insert(1, "{not json\n")
        (folder / "samples.jsonl").write_text("".join(lines), encoding="utf-8")
        (folder / "eval" / "results.json").write_text(json.dumps({"metrics": {F1: entry}}), encoding="utf-8")
    experiments = {"vtg-methods": {"x": "method", "token_figure": F1, "rows": rows}}
    (run / "results.json").write_text(json.dumps({"metrics": {}, "experiments": experiments}), encoding="utf-8")
    return run


class LevelReads:
    """The opens of a level's samples.jsonl (``level-<x>/samples.jsonl``), by path, from now on: ``open`` and
    ``io.open`` (what ``Path.read_text`` and ``read_bytes`` call) counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.paths: list[str] = []
        real = builtins.open

        def counted(file, *args, **kwargs):
            if isinstance(file, (str, Path)) and Path(file).name == "samples.jsonl" and Path(file).parent.name.startswith("level-"):
                self.paths.append(str(file))
            return real(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", counted)
        monkeypatch.setattr(io, "open", counted)


@pytest.mark.parametrize("damaged", [False, True])
def test_the_report_reads_each_level_once_and_shows_what_two_reads_showed(tmp_path, monkeypatch, damaged):
    run = experiment_folder(tmp_path, damaged)
    experiments = json.loads((run / "results.json").read_text())["experiments"]
    figure = experiment_token_section(run, experiments)  # each on its own: the file read by each
    trace = vtg_trace_section(level_traces(run, experiments))
    if damaged:
        assert "no token figure" in figure and "line 2: not JSON" in figure
    else:
        assert "<svg" in figure and "no token figure" not in figure
    assert '<section id="vtg-trace">' in trace
    reads = LevelReads(monkeypatch)
    html = build_report(run)
    assert sorted(reads.paths) == [str(run / f"level-{level}" / "samples.jsonl") for level in (0, 1)]  # once each
    assert figure in html and trace in html
