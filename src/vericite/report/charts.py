"""SVG charts drawn here, no library: a bar per metric with its CI (``bar_chart``; several series side by side:
``grouped_bar_chart``), metrics against an experiment's levels (``line_chart``), cost against quality, a point per
method (``cost_chart``: VTG's Figure 4), and a chart as an SVG file of its own (``standalone_svg``, used by scripts/kalma_tables.py,
scripts/conner_figures.py and benchmarks/bench_vtg.py for the docs)."""

from __future__ import annotations

import math
import textwrap
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from .assets import read_asset
from .format import ci_of, clip, esc, fmt_level, metric_value
from .presentation import series_label

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]
DASHES = ["", "6 3", "2 3", "8 3 2 3", "", "6 3", "2 3", "8 3 2 3"]

#: the charts' own style (assets/chart.css): part of the report's stylesheet, and embedded in a chart saved on its own
CHART_CSS = read_asset("chart.css")


def _nice_range(values: Iterable[float], default: tuple[float, float]) -> tuple[float, float]:
    vals = [v for v in values if v is not None]
    lo, hi = default
    if vals:
        lo, hi = min(lo, min(vals)), max(hi, max(vals))
    if hi <= lo:
        hi = lo + 1
    return lo, hi


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    step = (hi - lo) / n
    return [lo + i * step for i in range(n + 1)]


def _open(kind: str, title: str, width: int, height: int, title_x: float) -> list[str]:
    """A chart's SVG element (class ``chart <kind>``) and its title, as the opening lines of ``out``."""
    return [
        f'<svg class="chart {kind}" role="img" aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
        f'<text class="chart-title" x="{title_x}" y="18">{esc(title)}</text>',
    ]


def _y_grid(lo: float, hi: float, y: Any, left: float, plot_w: float) -> list[str]:
    """Horizontal grid lines and their tick labels for a vertical value axis from ``lo`` to ``hi``."""
    out = []
    for t in _ticks(lo, hi):
        out.append(f'<line class="grid" x1="{left}" y1="{y(t):.1f}" x2="{left + plot_w}" y2="{y(t):.1f}"/>')
        out.append(f'<text class="tick" x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    return out


def _bar_domain(entries: Iterable[Any], domain: tuple[float, float] | None) -> tuple[float, float]:
    """The value axis of a bar chart: ``domain`` when every value and CI bound lies in it, else one that holds them."""
    values: list[float] = []
    for m in entries:
        v, _why = metric_value(m)
        if v is not None:
            values.append(v)
            ci = ci_of(m)
            if ci:
                values.extend(ci)
    return domain if domain is not None and all(domain[0] <= v <= domain[1] for v in values) else _nice_range(values, (0.0, 1.0))


def _bar_row(name: str, m: Any, x: Any, lo: float, hi: float, y: float, h: float, pad: float, value_x: float, fill: str = "") -> list[str]:
    """One bar from ``y`` to ``y + h`` (``pad`` inside): the value's bar, its CI as a whisker and its value at
    ``value_x``; a metric not computed gets its reason instead. ``fill``: a colour of its own (else the style's)."""
    mid = y + h / 2
    v, why = metric_value(m)
    if v is None:
        return [f'<text class="not-computed" x="{x(lo) + 6:.0f}" y="{mid + 4:.1f}">not computed: {esc(clip(why, 60))}</text>']
    ci = ci_of(m)
    n = m.get("n") if isinstance(m, Mapping) else None
    tip = f"{name}: {v:.3f}" + (f", 95% CI [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ", no CI") + (f", n={n}" if n is not None else "")
    x0 = x(max(lo, min(0.0, hi)) if lo <= 0 <= hi else lo)
    xv = x(v)
    style = f' style="fill:{fill}"' if fill else ""
    out = [f'<rect class="bar" x="{min(x0, xv):.1f}" y="{y + pad:g}" width="{max(abs(xv - x0), 1):.1f}" height="{h - 2 * pad:g}"{style}>'
           f"<title>{esc(tip)}</title></rect>"]  # fmt: skip
    if ci:
        a, b, half = x(ci[0]), x(ci[1]), min(6.0, h / 2 - 1)
        out.append(
            f'<g class="whisker"><line x1="{a:.1f}" y1="{mid:.1f}" x2="{b:.1f}" y2="{mid:.1f}"/>'
            f'<line x1="{a:.1f}" y1="{mid - half:.1f}" x2="{a:.1f}" y2="{mid + half:.1f}"/>'
            f'<line x1="{b:.1f}" y1="{mid - half:.1f}" x2="{b:.1f}" y2="{mid + half:.1f}"/></g>'
        )
    out.append(f'<text class="bar-value" x="{value_x}" y="{mid + 4:.1f}">{v:.3f}</text>')
    return out


def bar_chart(title: str, rows: Sequence[tuple[str, Mapping[str, Any]]], domain: tuple[float, float] | None) -> str:
    """A horizontal bar per metric with its 95 % CI as a whisker; a metric not computed gets its reason instead."""
    label_w, plot_w, right_w, row_h, top = 170, 290, 56, 28, 30
    width = label_w + plot_w + right_w
    height = top + row_h * len(rows) + 24
    lo, hi = _bar_domain((m for _, m in rows), domain)

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    out = _open("bar-chart", title, width, height, label_w)
    axis_y = top + row_h * len(rows)
    for t in _ticks(lo, hi):
        out.append(f'<line class="grid" x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{axis_y}"/>')
        out.append(f'<text class="tick" x="{x(t):.1f}" y="{axis_y + 15}" text-anchor="middle">{t:g}</text>')
    for i, (name, m) in enumerate(rows):
        y = top + i * row_h
        out.append(f'<text class="bar-label" x="{label_w - 8}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">{esc(name)}</text>')
        out += _bar_row(name, m, x, lo, hi, y, row_h, 6, label_w + plot_w + 8)
    out.append("</svg>")
    return "".join(out)


def grouped_bar_chart(title: str, groups: Sequence[str], series: Sequence[tuple[str, Sequence[Mapping[str, Any] | None]]],
                      domain: tuple[float, float] | None) -> str:
    """:func:`bar_chart` with several series: per group (a label on the left) a bar of each series in its colour,
    its CI as a whisker, a legend under the chart; a series without an entry for a group says "no item" there."""
    label_w, plot_w, right_w, bar_h, gap, top = 170, 290, 56, 18, 10, 30
    k = max(len(series), 1)
    group_h = bar_h * k + gap
    width = label_w + plot_w + right_w
    axis_y = top + group_h * len(groups)
    height = axis_y + 30 + 18 * len(series)
    lo, hi = _bar_domain((m for _, pts in series for m in pts if m is not None), domain)

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    out = _open("bar-chart grouped-bar-chart", title, width, height, label_w)
    for t in _ticks(lo, hi):
        out.append(f'<line class="grid" x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{axis_y}"/>')
        out.append(f'<text class="tick" x="{x(t):.1f}" y="{axis_y + 15}" text-anchor="middle">{t:g}</text>')
    for gi, group in enumerate(groups):
        y0 = top + gi * group_h + gap / 2
        out.append(f'<text class="bar-label" x="{label_w - 8}" y="{y0 + bar_h * k / 2 + 4:.1f}" text-anchor="end">{esc(group)}</text>')
        for si, (name, pts) in enumerate(series):
            m = pts[gi] if gi < len(pts) else None
            out += _bar_row(f"{group}, {name}", m if m is not None else {"value": None, "reason": "no item"}, x, lo, hi,
                            y0 + si * bar_h, bar_h, 3, label_w + plot_w + 8, PALETTE[si % len(PALETTE)])
    for si, (name, _) in enumerate(series):
        ly = axis_y + 34 + si * 18
        out.append(f'<rect x="{label_w}" y="{ly - 9}" width="14" height="10" style="fill:{PALETTE[si % len(PALETTE)]}"/>'
                   f'<text class="legend" x="{label_w + 20}" y="{ly}">{esc(name)}</text>')  # fmt: skip
    out.append("</svg>")
    return "".join(out)


def line_chart(title: str, x_label: str, levels: Sequence[Any], series: Sequence[tuple[str, list[Mapping[str, Any] | None]]]) -> str:
    """Metrics against an experiment's levels (KaLMA Figures 4 and 5): one line per metric, the 95 % CI as a
    whisker at each point; a level where the metric was not computed leaves a gap. The legend gives each
    metric's short name."""
    left, right, top, bottom, plot_w, plot_h = 46, 140, 30, 44, 340, 200
    width, height = left + plot_w + right, top + plot_h + bottom
    values = []
    for _, pts in series:
        for m in pts:
            if m is not None:
                v, _ = metric_value(m)
                if v is not None:
                    values.append(v)
                    ci = ci_of(m)
                    if ci:
                        values.extend(ci)
    lo, hi = _nice_range(values, (0.0, 1.0))
    k = len(levels)

    def x(i: int) -> float:
        return left + (plot_w / 2 if k == 1 else 20 + i * (plot_w - 40) / (k - 1))

    def y(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    out = _open("line-chart", title, width, height, left)
    out += _y_grid(lo, hi, y, left, plot_w)
    out.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}"/>')
    for i, lv in enumerate(levels):
        out.append(f'<text class="tick" x="{x(i):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{esc(fmt_level(lv))}</text>')
    out.append(f'<text class="axis-label" x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle">{esc(x_label)}</text>')
    out.append(
        f'<text class="axis-label" x="12" y="{top + plot_h / 2}" text-anchor="middle" transform="rotate(-90 12 {top + plot_h / 2})">score</text>'
    )
    for si, (name, pts) in enumerate(series):
        colour, dash = PALETTE[si % len(PALETTE)], DASHES[si % len(DASHES)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        segment: list[str] = []
        segments: list[list[str]] = []
        marks: list[str] = []
        for i, m in enumerate(pts):
            v, why = metric_value(m) if m is not None else (None, "no row")
            if v is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            segment.append(f"{x(i):.1f},{y(v):.1f}")
            ci = ci_of(m) if m is not None else None
            tip = f"{name} at {fmt_level(levels[i])}: {v:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
            if ci:
                marks.append(
                    f'<line class="ci" stroke="{colour}" x1="{x(i):.1f}" y1="{y(ci[0]):.1f}" x2="{x(i):.1f}" y2="{y(ci[1]):.1f}"/>'
                )
            marks.append(f'<circle class="point" cx="{x(i):.1f}" cy="{y(v):.1f}" r="3.5" fill="{colour}"><title>{esc(tip)}</title></circle>')
        if segment:
            segments.append(segment)
        out.append(f'<g class="series" data-metric="{esc(name)}">')
        for seg in segments:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash_attr} points="{" ".join(seg)}"/>')
        out.extend(marks)
        out.append("</g>")
        ly = top + 10 + si * 20
        lx = left + plot_w + 16
        out.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 24}" y2="{ly}" stroke="{colour}" stroke-width="2"{dash_attr}/>'
            f'<text class="legend" x="{lx + 30}" y="{ly + 4}">{esc(series_label(name, pts))}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def standalone_svg(svg: str) -> str:
    """A chart of :func:`bar_chart` / :func:`grouped_bar_chart` / :func:`line_chart` / :func:`cost_chart` as an SVG file of its own (for docs): its style and a
    white background embedded, no page needed."""
    head, sep, rest = svg.partition(">")
    if not sep or not head.startswith("<svg"):
        raise ValueError("not an SVG chart")
    style = (
        "<style>.chart{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}"
        + CHART_CSS.replace("\n", "")
        + "</style><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>"
    )
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + head + ">" + style + rest + "\n"


class CostPoint(NamedTuple):
    """One method on :func:`cost_chart`: its cost (``median`` with whiskers ``low``–``high``) and its quality
    (``value`` with ``ci``; None: not plotted, ``why`` says why); ``lower_bound`` says why the cost is only a
    lower bound ("" when it is not)."""

    label: str
    median: float
    low: float
    high: float
    value: float | None
    ci: tuple[float, float] | None = None
    lower_bound: str = ""
    why: str = ""


def _axis_ticks(hi: float) -> list[float]:
    """0 to ``hi`` (or just above) in 1, 2 or 5 × 10^k steps, about five of them."""
    if hi <= 0:
        return [0.0, 1.0]
    raw = hi / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    return [i * step for i in range(int(math.ceil(hi / step - 1e-9)) + 1)]


def _tick_text(t: float) -> str:
    return f"{t / 1000:g}k" if t >= 1000 else f"{t:g}"


def cost_chart(title: str, x_label: str, y_label: str, points: Sequence[CostPoint], notes: Sequence[str] = (),
               y_domain: tuple[float, float] | None = None) -> str:
    """Cost against quality (VTG's Figure 4 with its citation quality): a point per method at its median cost,
    horizontal whiskers from ``low`` to ``high``, the quality's CI as a vertical whisker; a cost that is a lower
    bound is drawn hollow with an arrow to the right (at least this much) and ``≥`` in the legend. A method whose
    quality is missing is not plotted: a note under the chart names it and why, as it does each of ``notes``
    (wrapped, whole)."""
    left, plot_w, legend_w, top, plot_h, bottom, line_h = 56, 360, 190, 30, 220, 44, 15
    shown = [p for p in points if p.value is not None]
    missing = [p for p in points if p.value is None]
    lines = [f"not plotted: {p.label} ({p.why or 'no value'})" for p in missing] + list(notes)
    if not shown:
        lines.insert(0, "no method has a value to plot" if points else "no method to plot")
    lines = [part for line in lines for part in (textwrap.wrap(line, 96) or [""])]
    width = left + plot_w + legend_w
    height = top + plot_h + bottom + line_h * len(lines)
    x_ticks = _axis_ticks(max([p.high for p in shown] + [p.median for p in shown] + [0.0]) * 1.04)
    x_hi = x_ticks[-1]
    ys = [v for p in shown for v in ([p.value] + list(p.ci or ())) if v is not None]
    lo, hi = y_domain if y_domain is not None and all(y_domain[0] <= v <= y_domain[1] for v in ys) else _nice_range(ys, (0.0, 1.0))

    def x(v: float) -> float:
        return left + min(max(v, 0.0), x_hi) / x_hi * plot_w

    def y(v: float) -> float:
        return top + plot_h - (min(max(v, lo), hi) - lo) / (hi - lo) * plot_h

    out = _open("cost-chart", title, width, height, left)
    out += _y_grid(lo, hi, y, left, plot_w)
    for t in x_ticks:
        out.append(f'<line class="grid" x1="{x(t):.1f}" y1="{top}" x2="{x(t):.1f}" y2="{top + plot_h}"/>')
        out.append(f'<text class="tick" x="{x(t):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{_tick_text(t)}</text>')
    out.append(f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}"/>')
    out.append(f'<text class="axis-label" x="{left + plot_w / 2}" y="{top + plot_h + 36}" text-anchor="middle">{esc(x_label)}</text>')
    out.append(
        f'<text class="axis-label" x="12" y="{top + plot_h / 2}" text-anchor="middle" transform="rotate(-90 12 {top + plot_h / 2})">{esc(y_label)}</text>'
    )
    for i, p in enumerate(points):
        if p.value is None:
            continue
        colour = PALETTE[i % len(PALETTE)]
        cx, cy = x(p.median), y(p.value)
        bound = f" (a lower bound: {p.lower_bound})" if p.lower_bound else ""
        tip = (f"{p.label}: {p.median:,.0f} tokens per question{bound}, whiskers {p.low:,.0f}–{p.high:,.0f}; "
               f"{y_label} {p.value:.3f}" + (f" [{p.ci[0]:.3f}, {p.ci[1]:.3f}]" if p.ci else ""))
        lb = ' data-lower-bound="true"' if p.lower_bound else ""
        out.append(f'<g class="point-group" data-label="{esc(p.label)}"{lb}>')
        out.append(f'<line class="ci" stroke="{colour}" x1="{x(p.low):.1f}" y1="{cy:.1f}" x2="{x(p.high):.1f}" y2="{cy:.1f}"/>')
        if p.ci:
            out.append(f'<line class="ci" stroke="{colour}" x1="{cx:.1f}" y1="{y(p.ci[0]):.1f}" x2="{cx:.1f}" y2="{y(p.ci[1]):.1f}"/>')
        if p.lower_bound:
            out.append(
                f'<path class="lower-bound" stroke="{colour}" fill="none" d="M{cx + 5:.1f},{cy:.1f}h16m-5,-4l5,4l-5,4"/>'
                f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" fill="#fff" stroke="{colour}" stroke-width="2">'
                f"<title>{esc(tip)}</title></circle>"
            )
        else:
            out.append(f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" fill="{colour}"><title>{esc(tip)}</title></circle>')
        out.append("</g>")
        ly, lx = top + 10 + i * 20, left + plot_w + 16
        mark = (f'<circle cx="{lx + 6}" cy="{ly}" r="4.5" fill="#fff" stroke="{colour}" stroke-width="2"/>' if p.lower_bound
                else f'<circle cx="{lx + 6}" cy="{ly}" r="4.5" fill="{colour}"/>')
        out.append(mark + f'<text class="legend" x="{lx + 16}" y="{ly + 4}">{esc(clip(p.label, 22))}{" (≥)" if p.lower_bound else ""}</text>')
    for j, line in enumerate(lines):
        out.append(f'<text class="chart-note" x="{left}" y="{top + plot_h + bottom + 4 + j * line_h}">{esc(line)}</text>')
    out.append("</svg>")
    return "".join(out)
