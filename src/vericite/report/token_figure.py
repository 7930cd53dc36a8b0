"""VTG's Figure 4 (§3.7, token consumption): tokens per question of each method on the same questions, against a
quality metric of its evaluation (citation F1 by default), drawn from run folders (no model loaded).

One function, :func:`token_figure`, draws it for both places it shows: ``vericite report`` of an experiment folder
whose experiment declares ``token_figure`` (VTG's; :func:`experiment_token_section`: one point per level, named by
its method, its tokens from ``level-<x>/samples.jsonl``, its metric from ``level-<x>/eval/results.json``) and
``benchmarks/bench_vtg.py --svg`` over loose run folders. Each point is the median of the tokens per question over
the questions every run answered, its horizontal whiskers the interquartile range (25th to 75th percentile), its
vertical whisker the metric's 95 % CI; a method whose tokens are a lower bound (the judge's tokens not recorded,
calls of unknown tokens: ``runs/cost.py``) is drawn hollow with an arrow. Missing files are one clear line
(:class:`~vericite.errors.DataError`), a metric not computed a note on the chart."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import DataError
from ..jsonl import read_json_object
from ..runs.cost import Cost, SamplesFile, common_ids, cost, read_samples, records, records_of
from .charts import CostPoint, cost_chart
from .format import ci_of, esc, fmt_level, metric_value
from .presentation import curves, ordered_metrics, shown
from .sections import section

DEFAULT_METRIC = "alce_citation_f1"
WHISKERS = "interquartile range (25th–75th percentile)"


@dataclass(frozen=True)
class FigureRun:
    """A method's run: its name on the figure, its generation folder, its evaluation folder (None: not given)."""

    name: str
    generation: Path
    evaluation: Path | None = None


@dataclass
class TokenFigure:
    metric: str
    n: int  # the questions in common
    costs: list[Cost]
    points: list[CostPoint]
    notes: list[str] = field(default_factory=list)
    svg: str = ""

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """(method, tokens median, IQR, metric, lower bound) per method, as the figure's table shows them."""
        out = []
        for c, p in zip(self.costs, self.points):
            lo, hi = c.quartiles
            value = "not computed" if p.value is None else f"{p.value:.3f}" + (f" [{p.ci[0]:.3f}, {p.ci[1]:.3f}]" if p.ci else "")
            out.append((c.name, f"{c.median:,.0f}", f"{lo:,.0f}–{hi:,.0f}", value, c.lower_bound or "no"))
        return out

    def markdown(self) -> str:
        head = f"| method | tokens per question (median) | IQR | {self.metric} [95% CI] | lower bound |\n|---|---:|---:|---:|---|\n"
        return head + "".join(f"| {' | '.join(r)} |\n" for r in self.rows())

    def html_table(self) -> str:
        head = (f"<tr><th>method</th><th>tokens per question (median)</th><th>IQR</th><th>{esc(self.metric)}</th>"
                "<th>lower bound</th></tr>")
        body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>" for r in self.rows())
        return f'<table class="grid-table"><thead>{head}</thead><tbody>{body}</tbody></table>'


def metric_of(evaluation: Path | None, metric: str) -> tuple[Mapping[str, Any] | None, str]:
    """The entry of ``metric`` in an evaluation's results.json, or (None, why); a folder without a readable
    results.json is one clear line."""
    if evaluation is None:
        return None, "no evaluation given"
    path = Path(evaluation) / "results.json"
    if not path.is_file():
        raise DataError(f"{evaluation}: no results.json (evaluate the run first: vericite evaluate)")
    results = read_json_object(path, "the evaluation's corpus numbers")
    metrics = results.get("metrics")
    if not isinstance(metrics, Mapping) or metric not in metrics:
        return None, f"{metric} not in its evaluation"
    v, why = metric_value(metrics[metric])
    return (metrics[metric], "") if v is not None else (None, f"{metric} not computed: {why}")


def _evaluated_ids(evaluation: Path | None) -> set[str] | None:
    if evaluation is None or not (Path(evaluation) / "samples.jsonl").is_file():
        return None
    try:
        return set(records(evaluation))
    except DataError:
        return None


def token_figure(runs: Sequence[FigureRun], metric: str = DEFAULT_METRIC, title: str | None = None, *,
                 read: Callable[[Path], SamplesFile] = read_samples) -> TokenFigure:  # fmt: skip
    """The figure over ``runs``: tokens per question on the questions every run answered against ``metric`` of
    each run's evaluation. A run folder without samples.jsonl or whose answers have no usage, an evaluation
    without results.json: one clear line (:class:`DataError`). ``read``: how a generation folder's samples.jsonl
    is read (the report page's reads each level's once, for this and its VTG trace)."""
    if not runs:
        raise DataError("no run folder to draw")
    recs = {r.name: records_of(read(Path(r.generation))) for r in runs}
    ids = common_ids(recs)
    costs = [cost(r.name, recs[r.name], ids, r.generation) for r in runs]
    points, notes = [], []
    y_range: tuple[float, float] | None = None
    for r, c in zip(runs, costs):
        entry, why = metric_of(r.evaluation, metric)
        value = metric_value(entry)[0] if entry is not None else None
        if entry is not None:
            y_range = y_range or shown(metric, entry).range
            evaluated = _evaluated_ids(r.evaluation)
            if evaluated is not None and evaluated != set(ids):
                notes.append(f"{r.name}: {metric} over its evaluation's {len(evaluated)} answers, tokens over the {len(ids)} questions in common")
        lo, hi = c.quartiles
        points.append(CostPoint(r.name, c.median, lo, hi, value, ci_of(entry) if entry is not None else None, c.lower_bound, why))
        if c.lower_bound:
            notes.append(f"{r.name}: a lower bound ({c.lower_bound})")
    head = f"Points: median tokens per question over the {len(ids)} questions every method answered; horizontal whiskers: {WHISKERS}"
    if any(p.ci for p in points):
        head += f"; vertical: the 95% CI of {metric}"
    fig = TokenFigure(metric, len(ids), costs, points, [head, *notes])
    if any(p.lower_bound for p in points):
        fig.notes.insert(1, "Hollow point with an arrow: the tokens are a lower bound (at least this many)")
    fig.svg = cost_chart(title or f"Tokens per question against {metric}", "tokens per question (prompt + completion, every call)",
                         metric, points, fig.notes, y_range)
    return fig


def _level_name(row: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
    methods = [str((r.get("generation") or {}).get("method") or "") for r in rows]
    method = str((row.get("generation") or {}).get("method") or "")
    if method and len(set(methods)) == len(methods):
        return method
    return f"level {fmt_level(row.get('level'))}"


def _folder_name(level: Any) -> bool:
    """Whether ``level-<level>`` names a folder inside the run folder (results.json is read as untrusted)."""
    text = str(level)
    return bool(text) and text not in (".", "..") and "/" not in text and "\\" not in text and "\0" not in text


def _first_curve_metric(exp: Mapping[str, Any], level_metrics: Sequence[Mapping[str, Any]]) -> str | None:
    """The first metric of the experiment's first curve that its levels report (its table order otherwise)."""
    first: dict[str, Any] = {}
    for m in level_metrics:
        for k, entry in m.items():
            first.setdefault(k, entry)
    groups = curves(exp, ordered_metrics(first))
    return groups[0][1][0] if groups else None


def _no_figure(experiment: str, why: str) -> str:
    """The one-line note that takes the place of an experiment's figure."""
    return f'<div class="experiment" data-token-figure="{esc(experiment)}"><h3>{esc(experiment)}</h3><p class="warn">no token figure: {esc(why)}</p></div>'


def experiment_token_section(run_dir: Path, experiments: Mapping[str, Any], *,
                             read: Callable[[Path], SamplesFile] = read_samples) -> str:  # fmt: skip
    """The figure of each experiment of a ``vericite run`` folder that declares one (its entry's ``token_figure``:
    the metric; VTG's experiments, whose levels answer the same questions), as HTML; "" when there is none. A
    metric its levels do not report gives way to the first of the experiment's first curve. A level whose files are
    missing, or a level not named as a folder can be, gives a one-line note in place of its figure. ``read``: how
    a level's samples.jsonl is read (:func:`token_figure`)."""
    parts = []
    for ename, exp in experiments.items():
        if not isinstance(exp, Mapping) or not isinstance(exp.get("token_figure"), str):
            continue
        metric = exp["token_figure"]
        rows = [r for r in (exp.get("rows") or []) if isinstance(r, Mapping)]
        bad = [r.get("level") for r in rows if not _folder_name(r.get("level"))]
        if not rows or bad:
            why = f"level {str(bad[0])!r} is not a level folder's name" if bad else "no level"
            parts.append(_no_figure(ename, why))
            continue
        level_metrics = [r.get("metrics") if isinstance(r.get("metrics"), Mapping) else {} for r in rows]
        chosen = metric if any(metric in m for m in level_metrics) else _first_curve_metric(exp, level_metrics) or metric
        runs = [FigureRun(_level_name(r, rows), run_dir / f"level-{r.get('level')}", run_dir / f"level-{r.get('level')}" / "eval") for r in rows]
        try:
            fig = token_figure(runs, chosen, title=f"{ename}: tokens per question against {chosen}", read=read)
        except DataError as e:
            parts.append(_no_figure(ename, str(e)))
            continue
        parts.append(
            f'<div class="experiment" data-token-figure="{esc(ename)}"><h3>{esc(ename)} <span class="muted">(VTG Figure 4: tokens against '
            f'{esc(chosen)})</span></h3><div class="charts">{fig.svg}</div><details><summary>numbers</summary>{fig.html_table()}</details></div>'
        )
    if not parts:
        return ""
    return section("token-figure", "Tokens per question", "".join(parts))
