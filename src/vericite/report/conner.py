"""CONNER §4.4's two analyses of factuality (seed conner_2310.07289, Figure 2), drawn from the per-item samples of
a ``conner`` evaluation (``scores.conner``: ``factuality``, ``factuality_label``, ``n_sentences``; ``meta``:
``page_views``):

- **long tail**: factuality by how often the item's Wikipedia topic is viewed (WoW's dialogues carry their topic's
  page views), in quartiles of the items' page views (equal counts; ties may fall either side of a boundary);
- **long form**: factuality by the number of sentences of the knowledge (1, 2, 3, 4, 5, 6 or more).

Per bucket: n, the mean aggregated P(supports) with a 95 % percentile bootstrap CI over the bucket's items
(1000 resamples, seed 0), and the shares of items factual-consistent, non-verified and factual-inconsistent.
Only items whose factuality was computed count; the section says how many had none, or no page views.

``figures`` draws the same two figures for one evaluation folder or several side by side (``read_items`` reads a
folder's samples), for scripts/conner_figures.py, which writes them as SVG files of their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from .. import jsonl
from ..stats import bootstrap_cis, point, ratio_of_sums
from .charts import bar_chart, grouped_bar_chart
from .format import esc, fmt, num
from .sections import section

LABELS = ("factual_consistent", "non_verified", "factual_inconsistent")
SENTENCE_BUCKETS = (1, 2, 3, 4, 5, 6)  # 6: six or more
RESAMPLES, SEED = 1000, 0
#: the figures' titles, on the page and in the SVG files
TAIL_TITLE, FORM_TITLE = "factuality by page views (quartiles)", "factuality by number of sentences"


class FactualityItems:
    """The items of a run's samples.jsonl that the analyses use, gathered one record at a time."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []  # {"factuality", "label", "page_views"?, "n_sentences"?}
        self.without = 0  # conner items whose factuality was not computed

    def add(self, record: Any) -> None:
        conner = jsonl.family_scores(record, "conner")
        if conner is None:
            return
        value = num(conner.get("factuality"))
        if value is None:
            self.without += 1
            return
        item: dict[str, Any] = {"factuality": value, "label": conner.get("factuality_label")}
        meta = record.get("meta")
        views = num(meta.get("page_views")) if isinstance(meta, Mapping) else None
        if views is not None:
            item["page_views"] = views
        sentences = num(conner.get("n_sentences"))
        if sentences is not None and sentences >= 1:
            item["n_sentences"] = int(sentences)
        self.items.append(item)

    def __bool__(self) -> bool:
        return bool(self.items) or self.without > 0


def bucket_entry(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A bucket as a metric-like entry (what the bar chart draws): mean factuality, its CI, n and the shares."""
    n = len(items)
    values = [float(it["factuality"]) for it in items]
    stat = ratio_of_sums(values, [1.0] * n)
    lo, hi = bootstrap_cis({"f": stat}, n, resamples=RESAMPLES, seed=SEED)["f"] if n > 1 else (None, None)
    entry: dict[str, Any] = {"value": point(stat, n) if n else None, "n": n, "ci": [lo, hi] if lo is not None else None}
    if not n:
        entry["reason"] = "no item"
    for label in LABELS:
        entry[label] = sum(1 for it in items if it.get("label") == label) / n if n else None
    return entry


def views_text(v: float) -> str:
    for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= size:
            x = v / size
            return f"{x:.0f}{suffix}" if x >= 100 else f"{x:.1f}{suffix}"
    return f"{v:.0f}"


def long_tail(items: Sequence[Mapping[str, Any]], buckets: int = 4) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) per quartile of page views, fewest views first."""
    have = sorted((it for it in items if "page_views" in it), key=lambda it: it["page_views"])
    k = min(buckets, len(have))
    out = []
    for b in range(k):
        part = have[b * len(have) // k : (b + 1) * len(have) // k]
        if part:
            label = f"Q{b + 1}: {views_text(part[0]['page_views'])}–{views_text(part[-1]['page_views'])} views"
            out.append((label, bucket_entry(part)))
    return out


def long_form(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) per number of sentences (1 ... 5, then 6 or more); empty buckets are left out."""
    have = [it for it in items if "n_sentences" in it]
    out = []
    for b in SENTENCE_BUCKETS:
        part = [it for it in have if (it["n_sentences"] >= b if b == SENTENCE_BUCKETS[-1] else it["n_sentences"] == b)]
        if part:
            out.append((f"{b}{'+' if b == SENTENCE_BUCKETS[-1] else ''} sentence{'s' if b > 1 else ''}", bucket_entry(part)))
    return out


def _table(rows: Sequence[tuple[str, Mapping[str, Any]]], head: str) -> str:
    th = f"<tr><th>{esc(head)}</th><th>n</th><th>factuality</th><th>95% CI</th><th>consistent</th><th>non-verified</th><th>inconsistent</th></tr>"
    trs = []
    for label, e in rows:
        ci = e.get("ci")
        ci_text = f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else "—"
        trs.append(f"<tr><td>{esc(label)}</td><td>{e['n']}</td><td>{fmt(e['value'])}</td><td>{ci_text}</td>"
                   + "".join(f"<td>{fmt(e[k])}</td>" for k in LABELS) + "</tr>")  # fmt: skip
    return f'<table class="grid-table conner-table"><thead>{th}</thead><tbody>{"".join(trs)}</tbody></table>'


def conner_section(found: FactualityItems) -> str:
    """The section "Long tail and long form (CONNER §4.4)"; empty when no item has CONNER scores."""
    if not found:
        return ""
    items = found.items
    parts = ['<p class="muted">Mean aggregated P(supports) of the knowledge per bucket (bars), its 95% bootstrap CI '
             "(whiskers), and the shares of items by verdict; from the items whose factuality was computed "
             f"({len(items)}; {found.without} without).</p>"]  # fmt: skip
    tail = long_tail(items)
    n_views = sum(1 for it in items if "page_views" in it)
    if tail:
        parts.append("<h3>Long tail: factuality by the topic's page views</h3>")
        parts.append(f'<p class="muted">Quartiles of the page views of the {n_views} items that carry them (WoW topics).</p>')
        parts.append('<div class="charts">' + bar_chart(TAIL_TITLE, tail, (0.0, 1.0)) + "</div>")
        parts.append(_table(tail, "page views"))
    else:
        parts.append('<p class="muted">Long tail: no item carries page views (only WoW\'s dialogues do).</p>')
    form = long_form(items)
    if form:
        parts.append("<h3>Long form: factuality by the knowledge's number of sentences</h3>")
        parts.append('<div class="charts">' + bar_chart(FORM_TITLE, form, (0.0, 1.0)) + "</div>")
        parts.append(_table(form, "sentences"))
    else:
        parts.append('<p class="muted">Long form: no item records its number of sentences (evaluations before n_sentences).</p>')
    return section("conner", "Long tail and long form (CONNER §4.4)", "".join(parts))


def read_items(folder: str | Path) -> FactualityItems:
    """The items of an evaluation folder's ``samples.jsonl`` (a torn or bad line is skipped, as the page does);
    :class:`~vericite.errors.DataError` when the folder has no samples.jsonl."""
    found = FactualityItems()
    for record in jsonl.folder_samples(folder, "a `vericite evaluate --task conner` folder"):
        found.add(record)
    return found


def _aligned(per_run: Sequence[Sequence[tuple[str, dict[str, Any]]]], key: Any) -> tuple[list[str], list[list[dict[str, Any] | None]]]:
    """Buckets of several runs side by side: the groups (in the order of ``key``) and each run's entry per group.
    A group's label is the runs' common label, else its key (quartiles whose page-view ranges differ by run)."""
    keys = sorted({key(i, label) for buckets in per_run for i, (label, _) in enumerate(buckets)})
    groups: list[str] = []
    columns: list[list[dict[str, Any] | None]] = [[] for _ in per_run]
    for k in keys:
        labels = {label for buckets in per_run for i, (label, _) in enumerate(buckets) if key(i, label) == k}
        groups.append(labels.pop() if len(labels) == 1 else str(k[1]))
        for column, buckets in zip(columns, per_run):
            column.append(next((e for i, (label, e) in enumerate(buckets) if key(i, label) == k), None))
    return groups, columns


def _form_key(_i: int, label: str) -> tuple[int, str]:
    return int(label.split()[0].rstrip("+")), label


def figures(runs: Sequence[tuple[str, FactualityItems]]) -> dict[str, str]:
    """§4.4's figures as SVG charts, ``{"longtail": ..., "longform": ...}``, for one run (``(label, items)``: the
    page's bar charts) or several (a bar per run in each bucket, a legend of the labels; each run's quartiles are
    its own, matched by rank). A figure no run has a bucket for is left out."""
    out = {}
    for name, title, buckets, key in (("longtail", TAIL_TITLE, long_tail, lambda i, _label: (i, f"Q{i + 1}")),
                                      ("longform", FORM_TITLE, long_form, _form_key)):  # fmt: skip
        per_run = [buckets(found.items) for _, found in runs]
        if not any(per_run):
            continue
        if len(runs) == 1:
            out[name] = bar_chart(title, per_run[0], (0.0, 1.0))
        else:
            groups, columns = _aligned(per_run, key)
            out[name] = grouped_bar_chart(title, groups, [(label, col) for (label, _), col in zip(runs, columns)], (0.0, 1.0))
    return out


def buckets_markdown(runs: Sequence[tuple[str, FactualityItems]]) -> str:
    """The figures' numbers as a Markdown table: a row per figure, bucket and run."""
    head = "| figure | bucket | run | n | factuality [95 % CI] | consistent | non-verified | inconsistent |\n|---|---|---|---|---|---|---|---|\n"
    rows = []
    for figure, buckets in (("long tail", long_tail), ("long form", long_form)):
        for label, found in runs:
            for bucket, e in buckets(found.items):
                ci = f" [{fmt(e['ci'][0])}, {fmt(e['ci'][1])}]" if e.get("ci") else ""
                rows.append(f"| {figure} | {bucket} | {label.replace('|', chr(92) + '|')} | {e['n']} | {fmt(e['value'])}{ci} | "
                            + " | ".join(fmt(e[k]) for k in LABELS) + " |")  # fmt: skip
    return head + "".join(r + "\n" for r in rows)
