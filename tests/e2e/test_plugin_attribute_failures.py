"""A plugin's attribute that raises when vericite reads it after the object was built (a property: a judge's
``id``, a metric family's ``id`` or ``names``, a task's ``input_fields``) is the plugin's failure as a call's is,
never a traceback: one line naming the plugin, the attribute and the exception, handled where the object is used as
its calls' failures are (a judge's or a task's: evaluate ends in that line; a metric family's: its metrics are not
computed, with the line as the reason, and the evaluation goes on; a family whose ``names`` cannot be read has the
task's metrics that no other family gave not computed). The plugins are registered as in ``test_plugin_kinds_failures.py``; each property answers the
Protocol check made while the object is built (which reads it on Python 3.11, and looks it up statically on 3.12)
and raises whenever it is read after that, as a property that depends on state would."""

from __future__ import annotations

import json
import sys
import typing

import pytest

from tests.e2e.test_plugin_kinds_failures import FakeMetric, FakeTask, invoke, kalma_lines, one_line, plugin  # noqa: F401  (plugin: a fixture)
from vericite import registry
from vericite.fakes.judges import KeywordJudge


def late(value, exc: Exception) -> property:
    """A property that gives ``value`` to the Protocol check (a read from ``typing``) and raises ``exc`` on any
    other read (what the object's own ``__init__`` sets is ignored)."""

    def get(self):
        if sys._getframe(1).f_code.co_filename == typing.__file__:
            return value
        raise exc

    return property(get, lambda self, v: None)


class LateIdJudge(KeywordJudge):
    id = late("late-id@1", RuntimeError("the judge's model is not loaded"))  # type: ignore[assignment]


def test_evaluate_with_a_plugin_judge_whose_id_raises_ends_in_one_line_naming_it(tmp_path, plugin):
    plugin(registry.judges, "late-id", LateIdJudge)
    r = invoke(["evaluate", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q", "--judge", "late-id"])
    assert one_line(r) == "error: judge 'late-id' (plugin) failed reading 'id': RuntimeError: the judge's model is not loaded"


class LateNamesMetric(FakeMetric):
    """A family whose ``names`` raise when read: its own ``compute`` (which reads them) fails, and so does vericite's
    read of them when it marks the family's metrics not computed."""

    names = late(("fake_cited_share",), KeyError("names"))  # type: ignore[assignment]


class LateIdMetric(FakeMetric):
    """A family that computes, and whose ``id`` (its version, read by vericite once it has computed) raises."""

    id = late("fake@1", RuntimeError("no version before the first call"))  # type: ignore[assignment]

    def compute(self, samples, answers):
        from vericite.metrics.base import MetricResult

        return {"fake_cited_share": MetricResult("fake_cited_share", 0.5, len(answers), version="fake@1")}


class LateIdAndNamesMetric(LateIdMetric):
    names = late(("fake_cited_share",), KeyError("names"))  # type: ignore[assignment]


def task_with(family: str) -> type:
    class TaskWithFamily(FakeTask):
        metrics = (family,)

        def suite(self, settings, *, judge, ctx):
            return [registry.create("metrics", family, ctx)]

    return TaskWithFamily


@pytest.mark.parametrize("family, make, reason", [
    ("late-names", LateNamesMetric, "metric 'late-names' (plugin) failed: KeyError: 'names'"),
    ("late-id", LateIdMetric, "metric 'late-id' (plugin) failed reading 'id': RuntimeError: no version before the first call"),
    ("late-id-and-names", LateIdAndNamesMetric, "metric 'late-id-and-names' (plugin) failed reading 'id': RuntimeError: no version before the first call"),
])  # fmt: skip
def test_evaluate_with_a_plugin_metric_whose_id_or_names_raise_has_its_metrics_not_computed_and_goes_on(tmp_path, plugin, family, make, reason):
    # as a plugin family that raises in compute (test_plugin_kinds_failures.py): not computed, the line the reason
    plugin(registry.metrics, family, make)
    plugin(registry.tasks, f"with-{family}", task_with(family))
    r = invoke(["evaluate", "--task", f"with-{family}", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    m = res["metrics"]["fake_cited_share"]
    assert m["value"] is None and m["reason"] == reason, m
    assert "fake" not in res["metric_versions"] and res["counts"]["sentences"] == 1


class LateFieldsTask(FakeTask):
    input_fields = late(("id", "question", "answer", "knowledge"), ValueError("no schema loaded"))  # type: ignore[assignment]


def test_evaluate_with_a_plugin_task_whose_input_fields_raise_ends_in_one_line(tmp_path, plugin):
    plugin(registry.tasks, "late-fields", LateFieldsTask)
    r = invoke(["evaluate", "--task", "late-fields", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert one_line(r) == "error: task 'late-fields' (plugin) failed reading 'input_fields': ValueError: no schema loaded"


class LateJudgeMetric(FakeMetric):
    """A family with a judge, read through a property that raises (its judge not ready): evaluate's answer-by-answer
    pass (its checkpoint) leaves it to the corpus run, which computes it (its ``compute`` needs no judge)."""

    judge = late(None, RuntimeError("judge not ready"))  # type: ignore[assignment]


class ReadOnlyJudgeMetric(FakeMetric):
    """A family whose judge is a read-only property: evaluate cannot put its memo in front of the judge, so the family
    is scored over the corpus only, its judge asked then."""

    asked = 0

    @property
    def judge(self):
        return KeywordJudge()

    def compute(self, samples, answers):
        from vericite.types import JudgePair

        ReadOnlyJudgeMetric.asked += len(self.judge.judge([JudgePair(claim="a", evidence="a")]))
        return super().compute(samples, answers)


@pytest.mark.parametrize("family, make", [("late-judge", LateJudgeMetric), ("read-only-judge", ReadOnlyJudgeMetric)])
def test_evaluate_with_a_plugin_metric_whose_judge_cannot_be_read_or_replaced_computes_it_over_the_corpus(tmp_path, plugin, family, make):
    plugin(registry.metrics, family, make)
    plugin(registry.tasks, f"with-{family}", task_with(family))
    r = invoke(["evaluate", "--task", f"with-{family}", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["metrics"]["fake_cited_share"]["value"] == 1.0 and res["metric_versions"]["fake"] == "fake@1"
    if make is ReadOnlyJudgeMetric:
        assert ReadOnlyJudgeMetric.asked == 1


class BrokenReuseMetric(FakeMetric):
    """A family with a judge (scored answer by answer into the checkpoint) whose ``reuse_checkpointed`` raises."""

    def __init__(self) -> None:
        self.judge = KeywordJudge()

    def reuse_checkpointed(self, samples, answers, scores):
        raise ValueError("scores from another version")


def test_evaluate_with_a_plugin_metric_whose_reuse_checkpointed_raises_scores_it_over_the_corpus(tmp_path, plugin):
    plugin(registry.metrics, "broken-reuse", BrokenReuseMetric)
    plugin(registry.tasks, "with-broken-reuse", task_with("broken-reuse"))
    r = invoke(["evaluate", "--task", "with-broken-reuse", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert r.exit_code == 0 and r.exception is None and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["metrics"]["fake_cited_share"]["value"] == 1.0 and res["metric_versions"]["fake"] == "fake@1"
