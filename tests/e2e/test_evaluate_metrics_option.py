"""``--metrics a,b,c`` for any task: only those metrics are written (the KaLMA task here; ALCE's suite computes
only those, tests/e2e/test_alce_evaluate.py); an unknown name is one line with a did-you-mean."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

LINE = {"id": "a", "question": "Where was Ann born?", "answer": "In Rome [Q1, place of birth: Rome].",
        "knowledge": [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]}  # fmt: skip


def run(tmp_path, *args):
    (tmp_path / "in.jsonl").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    return CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q", "--resamples", "0", *args])


def test_only_the_metrics_asked_for(tmp_path):
    r = run(tmp_path, "--metrics", "citation_correctness, alignment_micro")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert list(res["metrics"]) == ["citation_correctness", "alignment_micro"] and res["metrics"]["citation_correctness"]["value"] == 1.0
    assert res["config"]["metrics"] == ["citation_correctness", "alignment_micro"]


def test_an_unknown_metric_is_one_line(tmp_path):
    r = run(tmp_path, "--metrics", "citation_corectness")
    assert r.exit_code != 0 and "'citation_corectness' is not a metric of task kalma; did you mean 'citation_correctness'" in r.output
    assert "Traceback" not in r.output


def test_an_empty_metric_list_is_one_line_not_all_metrics(tmp_path):
    # an unset shell variable (--metrics "$M") used to compute every metric, as if the option were not given
    for empty in ("", ",", " , "):
        r = run(tmp_path, "--metrics", empty)
        assert r.exit_code == 2 and "names no metric: give A,B,C among task kalma's (citation_correctness" in r.output, r.output
        assert "Traceback" not in r.output and not (tmp_path / "ev" / "results.json").exists()


def test_an_empty_metric_list_in_python_is_refused_too():
    import pytest

    from vericite.errors import VericiteError
    from vericite.evaluate.pipeline import check_metric_selection
    from vericite.evaluate.inputs import load_task

    assert check_metric_selection(None, load_task("kalma")) is None
    with pytest.raises(VericiteError, match="an empty list names no metric"):
        check_metric_selection([], load_task("kalma"))
