"""A plugin's attribute that raises when vericite reads it after the object was built (a property: a judge's
``id``, a metric family's ``names``, a task's ``input_fields``) is the plugin's failure as a call's is, never a
traceback: one line naming the plugin, the attribute and the exception, handled where the object is used as its
calls' failures are. The plugins are registered as in ``test_plugin_kinds_failures.py``; each property answers the
Protocol check made while the object is built (which reads it on Python 3.11, and looks it up statically on 3.12)
and raises whenever it is read after that, as a property that depends on state would."""

from __future__ import annotations

import sys
import typing

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
    names = late(("fake_cited_share",), KeyError("names"))  # type: ignore[assignment]


class TaskWithLateNames(FakeTask):
    metrics = ("late-names",)

    def suite(self, settings, *, judge, ctx):
        return [registry.create("metrics", "late-names", ctx)]


def test_evaluate_with_a_plugin_metric_whose_names_raise_names_the_plugin_and_its_attribute(tmp_path, plugin):
    plugin(registry.metrics, "late-names", LateNamesMetric)
    plugin(registry.tasks, "with-late-names", TaskWithLateNames)
    r = invoke(["evaluate", "--task", "with-late-names", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert one_line(r) == "error: metric 'late-names' (plugin) failed reading 'names': KeyError: 'names'"


class LateFieldsTask(FakeTask):
    input_fields = late(("id", "question", "answer", "knowledge"), ValueError("no schema loaded"))  # type: ignore[assignment]


def test_evaluate_with_a_plugin_task_whose_input_fields_raise_ends_in_one_line(tmp_path, plugin):
    plugin(registry.tasks, "late-fields", LateFieldsTask)
    r = invoke(["evaluate", "--task", "late-fields", "-i", str(kalma_lines(tmp_path)), "-o", str(tmp_path / "ev"), "-q"])
    assert one_line(r) == "error: task 'late-fields' (plugin) failed reading 'input_fields': ValueError: no schema loaded"
