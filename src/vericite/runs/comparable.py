"""What ``vericite compare`` reads of a task, from its declaration alone: the metrics it reports, each metric
family's statistics rebuilt from samples.jsonl, the inputs of a sample two runs must share, the settings they
must have been scored with, and the ones they may differ in.

The task is the one a run's results.json records (``config.task``; files written before tasks were recorded
are the default task's). Each family of the task's suite is read through its class, which its registry factory
names (``protocols.FamilyFactory``; a factory that is the class itself needs no such name), so comparing two
runs builds no judge and loads no model. A family that is ``protocols.PairedStatistics`` gives its metrics'
statistics and declares its settings; the metrics of a family that is not are shown, not compared, with the
reason.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..evaluate.inputs import DEFAULT_TASK, load_task
from ..metrics.base import AllowedDifference, CorpusStatistics
from ..protocols import FamilyFactory, PairedStatistics
from ..types import Sample

#: the reason given for a metric whose family cannot rebuild its statistics from samples.jsonl
NOT_PAIRED = "its metric family cannot recompute it from samples.jsonl, so it is not compared"
#: the key of a metric's ``details`` that holds why its plugin family could not rebuild its statistics (it is then
#: neither computed nor given a reason: not compared, with this line)
FAILED = "statistics_failed"
#: besides what the families read, a sample's inputs are its question and the evidence its answer cites
SAMPLE_FIELDS = tuple(f.name for f in dataclasses.fields(Sample))


def task_name(results: Mapping[str, Any]) -> str:
    """The task a results.json was written for: ``config.task``, else the default (files written before)."""
    config = results.get("config")
    name = config.get("task") if isinstance(config, Mapping) else None
    return name if isinstance(name, str) and name else DEFAULT_TASK


@dataclass(frozen=True)
class Comparable:
    """A task as compare reads it (module docstring). ``names``: its metrics, in order; ``families``: its
    families that are PairedStatistics, in suite order; ``inputs``: the record fields a sample's inputs are;
    ``compared``: the settings of results.json ``evaluation`` two runs must share, each with the setting it
    matters only with (or None); ``allowed``: the settings they may differ in, listed; ``evidence``: the input
    the answers cite, which ``compare --same-questions`` lets differ."""

    task: str
    names: tuple[str, ...]
    families: tuple[Any, ...]
    inputs: tuple[str, ...]
    compared: Mapping[str, str | None]
    allowed: tuple[AllowedDifference, ...]
    evidence: str | None = None  # the input the answers cite (the task's ``evidence``): --same-questions lets it differ

    def statistics(self, records: Sequence[Mapping[str, Any]]) -> CorpusStatistics:
        """Every comparable metric over ``records`` (samples.jsonl lines, in the order they are paired), as its
        family defines it. A metric none of them gives has no statistic and no reason (:meth:`paired`)."""
        from ..errors import PluginError

        out = CorpusStatistics()
        for family in self.families:
            try:
                cs = family.statistics_from_records(records)
            except PluginError as e:  # a plugin family's bug: its metrics not compared, the line kept as the reason
                if e.kind != "metric":
                    raise
                for name in getattr(family, "names", ()):
                    out.details.setdefault(name, {})[FAILED] = str(e)
                continue
            out.statistics.update(cs.statistics)
            out.reasons.update(cs.reasons)
            out.ns.update(cs.ns)
            out.details.update(cs.details)
        return out

    @staticmethod
    def paired(cs: CorpusStatistics, name: str) -> bool:
        """Whether the metric ``name`` was recomputed (a statistic, or the reason it cannot be computed)."""
        return name in cs.statistics or name in cs.reasons


def _family_class(name: str) -> Any:
    from ..registry import registry_for

    factory = registry_for("metrics").get(name)
    return factory.family if isinstance(factory, FamilyFactory) else factory


@dataclass(frozen=True)
class PluginFamily:
    """A plugin's metric family as compare reads it: its class's declarations, its ``statistics_from_records``
    guarded (``registry.GuardedCall``: what it raises is a ``PluginError`` of kind ``metric`` naming the plugin)."""

    names: tuple[str, ...]
    inputs: tuple[str, ...]
    compared_settings: Mapping[str, str | None]
    allowed_differences: Sequence[Any]
    statistics_from_records: Any


def _guarded(name: str, family: Any) -> Any:
    """``family`` (a PairedStatistics class) itself when it is vericite's own, else a :class:`PluginFamily`."""
    from ..registry import GuardedCall, metrics

    if metrics.is_builtin(name):
        return family
    return PluginFamily(tuple(getattr(family, "names", ())), tuple(getattr(family, "inputs", ())), family.compared_settings, family.allowed_differences,
                        GuardedCall(family.statistics_from_records, metrics.plugin_label(name, name), "metric"))  # fmt: skip


def comparable(name: str) -> Comparable:
    """The task registered as ``name``, as compare reads it."""
    task = load_task(name)
    classes = [_family_class(f) for f in task.metrics]
    families = tuple(_guarded(f, c) for f, c in zip(task.metrics, classes) if isinstance(c, PairedStatistics))
    wanted = ["question", task.evidence, *(i for c in classes for i in getattr(c, "inputs", ()))]
    inputs = tuple(dict.fromkeys(f for f in wanted if f in SAMPLE_FIELDS and f != "id"))
    compared: dict[str, str | None] = {}
    for f in families:
        for key, when in f.compared_settings.items():
            compared.setdefault(key, when)
    allowed = tuple(AllowedDifference(*d) for f in families for d in f.allowed_differences)
    evidence = task.evidence if task.evidence in inputs else None
    return Comparable(name, tuple(task.metric_names()), families, inputs, compared, allowed, evidence)
