"""``MetricRun.failed``: the run of a plugin family that failed names each of its metrics not computed, with the
line as the reason; declarations it cannot read (a property raising a ``PluginError`` of kind ``metric``) or that
are not what the Protocol says are left out, and without readable ``names`` the run names none and carries the
line as ``unnamed`` (evaluate gives it to the task's metrics no family reported)."""

from __future__ import annotations

import pytest

from vericite.errors import PluginError
from vericite.metrics.base import MetricRun, MetricSpec


class Family:
    def __init__(self, **declared):
        self.__dict__.update(declared)


def raising(kind: str) -> property:
    def get(self):
        raise PluginError(f"{kind} 'x' (plugin) failed reading 'names': KeyError: 'names'", kind=kind)

    return property(get)


def test_a_failed_familys_metrics_are_named_from_its_specs_else_its_names():
    spec = MetricSpec("a", ("answer", "gold"), higher_is_better=False, version="7")
    run = MetricRun.failed(Family(id="fam@3", names=("a", "b"), specs=(spec,), inputs=("answer", "knowledge")), [1, 2], "why")
    assert run.id is None and run.unnamed is None and list(run.results) == ["a", "b"]
    assert run.results["a"].spec is spec and run.results["a"].reason == "why" and run.results["a"].value is None
    assert run.results["b"].spec == MetricSpec("b", ("answer", "knowledge"), version="3") and run.scores == [{}, {}]


def test_specs_or_inputs_that_are_not_lists_are_left_out():
    run = MetricRun.failed(Family(id="fam@2", names=["a"], specs=3, inputs="answer"), [1], "why")
    assert run.results["a"].spec == MetricSpec("a", ("answer",), version="2")


@pytest.mark.parametrize("names", [None, "ab", 3, ("a", None)])
def test_names_that_are_not_a_list_of_strings_name_no_metric_and_the_line_is_kept(names):
    run = MetricRun.failed(Family(id="fam@1", names=names), [1], "why")
    assert run.results == {} and run.unnamed == "why"


def test_declarations_that_raise_when_read_are_left_out():
    class Late(Family):
        id = raising("metric")
        inputs = raising("metric")
        specs = raising("metric")

    run = MetricRun.failed(Late(names=("a",)), [1], "why")
    assert run.results["a"].spec == MetricSpec("a", ("answer",), version="1")

    class LateNames(Family):
        names = raising("metric")

    assert MetricRun.failed(LateNames(), [1], "why").unnamed == "why"

    class OtherKind(Family):
        names = raising("backend")  # not the family's own failure: it goes on up

    with pytest.raises(PluginError):
        MetricRun.failed(OtherKind(), [1], "why")
