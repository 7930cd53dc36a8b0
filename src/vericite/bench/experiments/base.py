"""What every experiment is: an :class:`Experiment` (the levels of a run and how to build each level's samples
from a dataset) and the :class:`Transformed` samples a level gets. KaLMA's experiments are in ``kalma.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from ...errors import VericiteError
from ...types import Sample

__all__ = ["Experiment", "Transformed", "factory"]


class Transformed(list):  # list[Sample]
    """The samples a transform returns (a plain list of :class:`Sample`), plus ``skipped``: the ids of input
    samples left out, with ``n_skipped`` their count and ``skip_reason`` why."""

    def __init__(self, samples: Sequence[Sample] = (), skipped: Sequence[str] = (), skip_reason: str = "") -> None:
        super().__init__(samples)
        self.skipped: list[str] = list(skipped)
        self.skip_reason = skip_reason

    @property
    def n_skipped(self) -> int:
        return len(self.skipped)


@dataclass(frozen=True)
class Experiment:
    """An experiment (KaLMA's are in kalma.py): what varies (``x_label``), its ``levels`` (the first is the baseline), and
    how to build the samples of a level (``apply(samples, level, seed)``). ``eligible(sample, levels)`` says
    whether a sample can take part at every level; the others are skipped at every level alike.

    How a reader draws it (``presentation()``, written into results.json beside the rows): ``descending``, the
    levels from the largest down (retrieval accuracy reads from the gold graphs, 100 %, down, as in KaLMA
    Figure 5); ``curves``, the charts of metrics against the levels, as (title, metric names); the metrics in
    none of them are drawn together; ``token_figure`` (only when set), the metric each level's tokens per question
    are drawn against (VTG's Figure 4)."""

    name: str
    x_label: str
    levels: tuple[Any, ...]
    apply: Callable[[Sequence[Sample], Any, int], Transformed] = field(repr=False)
    description: str = ""
    section: str = ""
    eligible: Callable[[Sample, Sequence[Any]], bool] | None = field(default=None, repr=False)
    descending: bool = False
    curves: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # what a level changes in the generation (GenerateConfig fields: method, method_args), from the level and the
    # config's own method_args; None: every level is generated alike (KaLMA's experiments change the samples)
    generation: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = field(default=None, repr=False)
    # the metric VTG's Figure 4 draws each level's tokens per question against (the report's token figure);
    # None: the report draws none
    token_figure: str | None = None

    def generation_at(self, level: Any, method_args: dict[str, Any]) -> dict[str, Any]:
        """The GenerateConfig fields ``level`` sets (nothing when the experiment changes only samples)."""
        return {} if self.generation is None else dict(self.generation(level, dict(method_args)))

    def samples_at(self, samples: Sequence[Sample], level: Any, seed: int = 0, *, levels: Sequence[Any] | None = None) -> Transformed:
        """The samples for ``level``; ``levels`` are all the levels of this run (default: ``self.levels``), so
        that the same samples are skipped at each."""
        run_levels = tuple(levels) if levels is not None else self.levels
        keep, skipped = list(samples), []
        if self.eligible is not None:
            keep = [s for s in samples if self.eligible(s, run_levels)]
            skipped = [s.id for s in samples if not self.eligible(s, run_levels)]
        out = self.apply(keep, level, seed)
        reason = out.skip_reason or (f"not eligible at every level of {list(run_levels)}" if skipped else "")
        return Transformed(out, skipped + out.skipped, reason)

    def iter_levels(self, samples: Sequence[Sample], seed: int = 0, levels: Sequence[Any] | None = None) -> Iterator[tuple[Any, Transformed]]:
        run_levels = tuple(levels) if levels is not None else self.levels
        for level in run_levels:
            yield level, self.samples_at(samples, level, seed, levels=run_levels)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "x": self.x_label, "levels": list(self.levels), "section": self.section, **self.presentation()}

    def presentation(self) -> dict[str, Any]:
        shown = {"descending": self.descending, "curves": [{"title": t, "metrics": list(names)} for t, names in self.curves]}
        return {**shown, "token_figure": self.token_figure} if self.token_figure else shown


def factory(exp: Experiment) -> Callable[..., Experiment]:
    """The registry factory of an experiment that takes no argument (``name``, not ``name:arg``): its levels and
    options are set in the run config."""

    def from_spec(arg: str, *, ctx: Any, **options: Any) -> Experiment:
        if arg:
            raise VericiteError(f"experiment {exp.name!r} takes no argument (got {exp.name}:{arg}); set its levels in the run config")
        return exp

    from_spec.__doc__ = f"Registry factory: ``{exp.name}``."
    return from_spec
