"""The KaLMA task (KaLMA / BioKaLMA, metrics.md §1): answers that cite knowledge-graph triples, scored for
citation quality, text-citation alignment, conscious incompetence ([NA]) and G-Eval text quality.

What a line holds (README "Input of vericite evaluate"): ``id`` (the line number stands in when it is missing),
``question``, ``answer`` (the model output with ``[QID, property: value]`` citations and ``[NA]``; a ``vericite
generate`` record's ``output``) and ``knowledge`` (the triples given to the model: correctness is judged against
them); optionally ``gold`` (the minimum knowledge set) and ``absent`` (the knowledge removed from the graph), and
``gold_entities`` and ``meta``, which are kept. Which metric needs which field is declared by the metrics' specs
(:meth:`KalmaTask.needs`): without ``gold`` citation precision, recall and F1 are not computed, without
``absent`` [NA] precision, recall and F1, without a judge alignment and [NA], without a G-Eval model G-Eval.

The suite: the ``kalma`` family (the twelve KaLMA metrics, judged by the command's judge for alignment and [NA],
trusted by its accuracy on KaLMA alignment pairs), ``geval`` (with ``--geval-model``) and ``attribution`` (with
``--attribution-judge``: every (sentence, cited triple) pair classified by a four-class judge, ``metrics/attribution.py``). Counts: citations by
parse status and [NA] markers. The report has no section of its own for this task: it draws every metric from
the families, ranges and short names its entries carry in results.json.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..judges.trust import ALIGNMENT_TASK
from ..metrics import attribution, geval, kalma
from ..metrics.base import MetricSpec, Unavailable
from ..registry import create
from ..totals import status_totals
from ..types import AttributedAnswer

NAME = "kalma"


class KalmaTask:
    """The ``kalma`` task (see the module docstring)."""

    name = NAME
    input_fields = ("id", "question", "answer", "knowledge")
    optional_fields = ("gold", "absent", "gold_entities", "meta")
    field_help = {
        "answer": "the model output as a string",
        "knowledge": "the graph given to the model",
        "gold": "the minimum knowledge set",
        "absent": "the knowledge removed from the graph",
    }
    citation_format = "kg"
    evidence = "knowledge"
    metrics = ("kalma", "geval", "attribution")
    judge_purposes = ("alignment", "na")
    judge_trust = ALIGNMENT_TASK
    #: of the settings only some tasks read (``evaluate.pipeline.TASK_SETTINGS``), those ``suite`` reads; the others
    #: given (``--index``, ``--lm``, ``--relevance-model``: conner's) are said to be ignored in one line
    settings_read = ("geval_model",)

    def specs(self) -> dict[str, MetricSpec]:
        """Every metric of the suite with its declaration, in order."""
        return {**kalma.SPECS, **geval.SPECS, **attribution.SPECS}

    def metric_names(self) -> tuple[str, ...]:
        return tuple(self.specs())

    def needs(self) -> dict[str, tuple[str, ...]]:
        """Optional field -> the metrics that are not computed without it (from the metrics' declared inputs)."""
        return {f: tuple(n for n, s in self.specs().items() if f in s.inputs) for f in self.optional_fields}

    def suite(self, settings: Any, *, judge: Any, ctx: Any) -> list[Any]:
        """The ``kalma`` family with the command's judge, hypothesis template and match mode, and ``geval`` with
        the command's G-Eval model (or, without one, its metrics not computed)."""
        common = {"resamples": settings.resamples, "seed": settings.seed}
        out = [create("metrics", "kalma", ctx, judge=judge, hypothesis=settings.hypothesis, match=settings.match, **common)]
        model = getattr(settings, "geval_model", None)
        if model:
            out.append(create("metrics", f"geval:{model}", ctx, **common))
        else:
            out.append(Unavailable(geval.VERSION, tuple(geval.SPECS.values()), "no G-Eval model (--geval-model)"))
        out.append(attribution.family_for(settings, ctx))
        return out

    def counts(self, answers: Sequence[AttributedAnswer]) -> dict[str, Any]:
        return {"citation_status": status_totals(a.status_counts() for a in answers), "na_markers": sum(a.na_count for a in answers)}


def from_spec(arg: str, *, ctx: Any, **options: Any) -> KalmaTask:
    """Registry factory (``registry.tasks``): ``kalma``."""
    if arg or options:
        from ..errors import VericiteError

        raise VericiteError(f"the kalma task takes no argument or options (got {NAME}:{arg} {options or ''})".rstrip())
    return KalmaTask()
