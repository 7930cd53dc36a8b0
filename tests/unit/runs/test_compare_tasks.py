"""``vericite compare`` serves any task from its declaration (issue 10): the task a run's results.json records
picks what is compared, each metric family rebuilds its statistics from samples.jsonl and declares the settings
two runs must share or may differ in, and the page groups metrics by the family each entry carries. Shown with
the fake task, whose family compare's code does not know."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.fakes.pipeline import FakeMetric
from vericite.metrics.base import AllowedDifference
from vericite.registry import registry_for

KNOWLEDGE = [
    {"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"},
    {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "baker"},
]
CITED = {
    "a": ["Ann was born in Rome [Q1, place of birth: Rome]. She bakes.", "Ann bakes [Q1, occupation: baker]. Rome."],
    "b": ["Ann was born in Rome [Q1, place of birth: Rome]. She bakes [Q1, occupation: baker].", "Ann bakes [Q1, occupation: baker]. Rome."],
}


def evaluate(tmp_path, name: str, answers, *args: str) -> object:
    lines = [{"id": f"q{i}", "question": "Who is Ann?", "answer": a, "knowledge": KNOWLEDGE} for i, a in enumerate(answers)]
    (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / f"{name}.jsonl"), "-o", str(tmp_path / name), "-q", "--resamples", "0", *args])
    assert r.exit_code == 0, r.output
    return tmp_path / name


def compare(*args) -> object:
    return CliRunner().invoke(cli, ["compare", *map(str, args)])


@pytest.fixture
def fake_runs(tmp_path):
    return {k: evaluate(tmp_path, k, CITED[k] * 3, "--task", "fake") for k in ("a", "b")}


def test_compare_serves_the_fake_task_from_its_declaration(fake_runs, tmp_path):
    a, b = fake_runs["a"], fake_runs["b"]
    r = compare(a, b, "--json", "--resamples", "200")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["task"] == "fake" and list(cmp["metrics"]) == ["fake_cited_share"]  # the task's metrics, none of KaLMA's
    m = cmp["metrics"]["fake_cited_share"]
    res = {k: json.loads((x / "results.json").read_text())["metrics"]["fake_cited_share"] for k, x in fake_runs.items()}
    assert m["a"] == pytest.approx(res["a"]["value"]) == 0.5 and m["b"] == pytest.approx(res["b"]["value"]) == 0.75
    assert m["diff"] == pytest.approx(0.25) and m["n_a"] == m["n_b"] == 6 and m["ci"] is not None and m["reason"] is None
    assert m["family"] is None and m["short_name"] == "fake_cited_share"  # as the runs' results.json declare it
    assert cmp["a"]["evaluation"] == {} and "judge" not in cmp["a"] and cmp["differences"] == []

    out = tmp_path / "cmp"
    assert compare(a, b, "--out", out, "--resamples", "50").exit_code == 0
    rows = [json.loads(x) for x in (out / "compare_samples.jsonl").read_text().splitlines()]
    assert [r["metrics"]["fake_cited_share"] for r in rows[:2]] == [{"a": 0.5, "b": 1.0, "diff": 0.5}, {"a": 0.5, "b": 0.5, "diff": 0.0}]
    assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert re.findall(r'class="chart-title"[^>]*>([^<]*)<', page) == ["B − A: Other metrics"]  # no family: the report's "Other"
    assert 'data-metric="fake_cited_share"' in page


def test_runs_of_different_tasks_are_refused_in_one_line(fake_runs, tmp_path):
    kalma = evaluate(tmp_path, "k", CITED["a"] * 3)
    r = compare(kalma, fake_runs["a"])
    assert r.exit_code != 0 and r.output.count("\n") == 1 and "Traceback" not in r.output
    assert "task 'kalma' and run B of task 'fake'" in r.output and "different tasks" in r.output


def test_a_run_of_an_unknown_task_is_one_line(fake_runs, tmp_path):
    b = tmp_path / "odd"
    shutil.copytree(fake_runs["b"], b)
    res = json.loads((b / "results.json").read_text())
    res["config"]["task"] = "fakee"
    (b / "results.json").write_text(json.dumps(res))
    r = compare(fake_runs["a"], b)
    assert r.exit_code != 0 and r.output.count("\n") == 1 and "unknown task 'fakee'" in r.output and "did you mean 'fake'" in r.output


def test_the_settings_compared_and_listed_are_the_family_s_declarations(fake_runs, tmp_path, monkeypatch):
    # the fake family declares a setting two runs must share and a judge they may differ in: compare's code is
    # the same, the declarations alone decide
    monkeypatch.setattr(FakeMetric, "compared_settings", {"share_rule": None, "rubric": "grader"}, raising=False)
    monkeypatch.setattr(FakeMetric, "allowed_differences", (AllowedDifference("fake grader", ("evaluation", "grader"), "grader"),), raising=False)
    b = tmp_path / "b2"
    shutil.copytree(fake_runs["b"], b)

    def edit(**evaluation):
        res = json.loads((b / "results.json").read_text())
        res["evaluation"] = evaluation
        (b / "results.json").write_text(json.dumps(res))

    edit(share_rule="any citation")
    r = compare(fake_runs["a"], b)
    assert r.exit_code != 0 and "scored differently" in r.output and "share_rule None vs 'any citation'" in r.output
    edit(rubric="strict")  # a setting that matters only with a grader: neither run had one
    r = compare(fake_runs["a"], b, "--json")
    assert r.exit_code == 0, r.output
    edit(rubric="strict", grader="fake@1")
    r = compare(fake_runs["a"], b)
    assert r.exit_code != 0 and "rubric None vs 'strict'" in r.output
    edit(grader="fake@1")
    r = compare(fake_runs["a"], b, "--json")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["differences"] == [{"what": "fake grader", "a": None, "b": "fake@1"}]
    assert cmp["b"]["grader"] == "fake@1" and cmp["b"]["evaluation"] == {"share_rule": None, "rubric": None}


class _Plain:
    """A family without PairedStatistics: its metric cannot be recomputed from samples.jsonl."""

    id = "plain@1"
    names = ("plain_score",)
    inputs = ("answer",)

    def compute(self, samples, answers):
        from vericite.metrics.base import MetricResult

        if not answers:
            return {"plain_score": MetricResult("plain_score", None, 0, reason="no answers")}
        cited = [all(s.citations for s in a.sentences) for a in answers]  # the answers whose every sentence cites
        return {"plain_score": MetricResult("plain_score", sum(cited) / len(cited), len(answers))}


class _PlainTask:
    name = "plain"
    input_fields = ("id", "question", "answer", "knowledge")
    optional_fields = ()
    field_help: dict = {}
    citation_format = "kg"
    evidence = "knowledge"
    metrics = ("fake", "plain")
    judge_purposes = ()
    judge_trust = None

    def metric_names(self):
        return (*FakeMetric.names, *_Plain.names)

    def suite(self, settings, *, judge, ctx):
        return [FakeMetric(), _Plain()]

    def counts(self, answers):
        return {}


@pytest.fixture
def plain_task():
    metrics, tasks = registry_for("metrics"), registry_for("tasks")
    metrics.register("plain", lambda arg, *, ctx, **o: _Plain())
    tasks.register("plain", lambda arg, *, ctx, **o: _PlainTask())
    yield
    metrics.unregister("plain")
    tasks.unregister("plain")


def test_a_family_without_paired_statistics_is_shown_not_compared(plain_task, tmp_path):
    a, b = (evaluate(tmp_path, k, CITED[k] * 2, "--task", "plain") for k in ("a", "b"))
    r = compare(a, b, "--json", "--resamples", "20")
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)["metrics"]
    assert list(m) == ["fake_cited_share", "plain_score"] and m["fake_cited_share"]["diff"] == pytest.approx(0.25)
    assert m["plain_score"]["diff"] is None and "cannot recompute it from samples.jsonl" in m["plain_score"]["reason"]
    # not paired, but each run's own value is shown, as its results.json reports it; no difference, no CI
    own = {k: json.loads((run / "results.json").read_text())["metrics"]["plain_score"]["value"] for k, run in (("a", a), ("b", b))}
    assert own == {"a": 0.0, "b": 0.5}
    assert (m["plain_score"]["a"], m["plain_score"]["b"]) == (0.0, 0.5) and m["plain_score"]["ci"] is None and m["plain_score"]["p_value"] is None
    table = compare(a, b, "--resamples", "20").output
    assert re.search(r"plain_score\s+0\.000\s+0\.500\s+—", table), table
    md = compare(a, b, "--format", "markdown", "--resamples", "20").output
    # n: nothing was counted (not "0/0"): a dash, the reason saying why
    assert "| plain_score | 0.000 | 0.500 | — |  |  | — | its metric family cannot recompute it from samples.jsonl" in md, md
    assert m["plain_score"]["n_a"] is None and m["plain_score"]["n_b"] is None and m["plain_score"]["only_in"] is None


def test_a_family_without_paired_statistics_with_intersect_says_its_values_are_over_each_runs_samples(plain_task, tmp_path):
    a = evaluate(tmp_path, "a", CITED["a"] * 2, "--task", "plain")
    b = evaluate(tmp_path, "b", CITED["b"] * 2 + CITED["b"][:1], "--task", "plain")  # one more sample: left out by --intersect
    m = json.loads(compare(a, b, "--json", "--intersect", "--resamples", "20").stdout)["metrics"]["plain_score"]
    assert (m["a"], m["b"], m["diff"]) == (0.0, 0.6, None)
    assert m["reason"].endswith("; A and B are each run's results.json value, over all its samples, not only the paired ones"), m["reason"]


def test_files_written_before_tasks_and_families_were_recorded(tmp_path):
    # an evaluation without config.task is the default task's; entries without family fall back to the legacy
    # table, on the page as in the run report
    runs = {}
    for k in ("a", "b"):
        runs[k] = evaluate(tmp_path, k, CITED[k] * 2)
        res = json.loads((runs[k] / "results.json").read_text())
        del res["config"]["task"]
        for entry in res["metrics"].values():
            for key in ("family", "range", "short_name"):
                del entry[key]
        (runs[k] / "results.json").write_text(json.dumps(res))
    out = tmp_path / "cmp"
    r = compare(runs["a"], runs["b"], "--out", out, "--json", "--resamples", "50")
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert "task" not in cmp and "family" not in cmp["metrics"]["citation_correctness"]
    for k in ("a", "b"):
        res = json.loads((runs[k] / "results.json").read_text())["metrics"]
        assert [cmp["metrics"][n][k] for n in res] == [res[n]["value"] for n in res]
    assert CliRunner().invoke(cli, ["report", str(out)]).exit_code == 0
    titles = re.findall(r'class="chart-title"[^>]*>([^<]*)<', (out / "report.html").read_text(encoding="utf-8"))
    assert titles == ["B − A: Citation quality", "B − A: Text–citation alignment"]  # the families of the legacy table
