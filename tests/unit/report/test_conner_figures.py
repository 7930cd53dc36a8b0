"""CONNER §4.4's figures in the report: factuality by page-view quartile (long tail) and by number of sentences
(long form), from the per-item samples; buckets, means, CIs and shares; a page without CONNER scores has none.
The same figures as SVG files of their own (``figures``, for scripts/conner_figures.py): the page's charts for one
run, a bar per run side by side for several."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from vericite.errors import DataError
from vericite.report import build_report
from vericite.report.charts import standalone_svg
from vericite.report.conner import FactualityItems, bucket_entry, buckets_markdown, figures, long_form, long_tail, read_items, views_text


def record(i, factuality, views=None, sentences=2, label=None):
    meta = {"topic": f"T{i}"} if views is None else {"topic": f"T{i}", "page_views": views}
    conner = {"factuality": factuality, "factuality_label": label or ("factual_consistent" if factuality > 0.5 else "non_verified"), "n_sentences": sentences}
    return {"id": f"w{i}", "question": "q", "output": "k", "meta": meta, "scores": {"conner": conner}}


def items(records):
    f = FactualityItems()
    for r in records:
        f.add(r)
    return f


def test_long_tail_quartiles_and_long_form_buckets():
    # page views rising with i; factuality rising with them (the long tail is less factual)
    recs = [record(i, i / 10, views=10 ** (3 + i // 2), sentences=1 + i % 7) for i in range(8)]
    found = items(recs + [{"scores": {"conner": {"not_computed": {"factuality": "no evidence"}}}}, {"id": "x", "scores": {}}])
    assert len(found.items) == 8 and found.without == 1
    tail = long_tail(found.items)
    assert [e["n"] for _, e in tail] == [2, 2, 2, 2]
    assert [e["value"] for _, e in tail] == pytest.approx([0.05, 0.25, 0.45, 0.65])
    assert tail[0][0] == "Q1: 1.0k–1.0k views" and tail[-1][0] == "Q4: 1.0M–1.0M views"
    form = long_form(found.items)
    assert [label for label, _ in form] == ["1 sentence", "2 sentences", "3 sentences", "4 sentences", "5 sentences", "6+ sentences"]
    assert form[-1][1]["n"] == 2 and form[-1][1]["value"] == pytest.approx((0.5 + 0.6) / 2)  # 6 and 7 sentences


def test_a_bucket_has_its_ci_and_shares():
    e = bucket_entry([{"factuality": 0.2, "label": "non_verified"}, {"factuality": 0.9, "label": "factual_consistent"},
                      {"factuality": 0.1, "label": "factual_inconsistent"}, {"factuality": 0.8, "label": "factual_consistent"}])
    assert e["value"] == pytest.approx(0.5) and e["n"] == 4
    assert 0.1 <= e["ci"][0] < 0.5 < e["ci"][1] <= 0.9
    assert (e["factual_consistent"], e["non_verified"], e["factual_inconsistent"]) == (0.5, 0.25, 0.25)
    assert bucket_entry([{"factuality": 0.3, "label": None}])["ci"] is None  # one item: no interval
    assert views_text(8992) == "9.0k" and views_text(417127302) == "417M" and views_text(12) == "12"


def write_run(tmp_path, recs):
    (tmp_path / "results.json").write_text(json.dumps({"kind": "evaluate", "metrics": {}, "counts": {}}), encoding="utf-8")
    (tmp_path / "samples.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    return tmp_path


def test_the_report_draws_both_figures(tmp_path):
    recs = [record(i, i / 10, views=10 ** (3 + i // 2), sentences=1 + i % 3) for i in range(8)]
    page = build_report(write_run(tmp_path, recs))
    assert 'id="conner"' in page and "Long tail and long form (CONNER §4.4)" in page
    assert "factuality by page views (quartiles)" in page and "factuality by number of sentences" in page
    assert page.count('class="grid-table conner-table"') == 2


def test_nq_has_no_long_tail_and_other_runs_no_section(tmp_path):
    page = build_report(write_run(tmp_path, [record(i, 0.5, sentences=i + 1) for i in range(3)]))
    assert "no item carries page views" in page and "factuality by number of sentences" in page
    other = tmp_path / "other"
    other.mkdir()
    page = build_report(write_run(other, [{"id": "a", "question": "q", "output": "x", "scores": {"kalma": {}}}]))
    assert 'id="conner"' not in page


# --- the figures as SVG files of their own (scripts/conner_figures.py) ---

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg):
    """The chart as a standalone file, parsed as XML (the XML declaration first, as the files have it)."""
    text = standalone_svg(svg)
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    return ElementTree.fromstring(text.encode("utf-8"))


def texts(root, cls):
    return [t.text for t in root.iter(SVG + "text") if t.get("class") == cls]


def bars(root):
    return [r for r in root.iter(SVG + "rect") if r.get("class") == "bar"]


def test_one_run_gives_the_pages_two_charts(tmp_path):
    recs = [record(i, i / 10, views=10 ** (3 + i // 2), sentences=1 + i % 3) for i in range(8)]
    found = items(recs)
    figs = figures([("run", found)])
    assert set(figs) == {"longtail", "longform"}
    page = build_report(write_run(tmp_path, recs))
    assert figs["longtail"] in page and figs["longform"] in page  # the very charts the report draws
    tail = parsed(figs["longtail"])
    assert texts(tail, "bar-label") == ["Q1: 1.0k–1.0k views", "Q2: 10.0k–10.0k views", "Q3: 100k–100k views", "Q4: 1.0M–1.0M views"]
    assert texts(tail, "bar-value") == ["0.050", "0.250", "0.450", "0.650"] and len(bars(tail)) == 4
    form = parsed(figs["longform"])
    assert texts(form, "bar-label") == ["1 sentence", "2 sentences", "3 sentences"]
    assert texts(form, "chart-title") == ["factuality by number of sentences"]


def test_several_runs_side_by_side_with_a_legend():
    # the same 8 dialogues under two judges: the second judge says 0.2 more everywhere; only run b has 6+ sentences
    a = items([record(i, i / 10, views=10 ** (3 + i // 2), sentences=1 + i % 2) for i in range(8)])
    b = items([record(i, i / 10 + 0.2, views=10 ** (3 + i // 2), sentences=1 + i % 2 + 5 * (i == 7)) for i in range(8)])
    figs = figures([("judge a", a), ("judge b", b)])
    tail = parsed(figs["longtail"])
    assert "grouped-bar-chart" in tail.get("class")
    assert texts(tail, "bar-label") == ["Q1: 1.0k–1.0k views", "Q2: 10.0k–10.0k views", "Q3: 100k–100k views", "Q4: 1.0M–1.0M views"]
    assert texts(tail, "legend") == ["judge a", "judge b"]
    assert texts(tail, "bar-value") == ["0.050", "0.250", "0.250", "0.450", "0.450", "0.650", "0.650", "0.850"]
    fills = [r.get("style") for r in bars(tail)]
    assert len(fills) == 8 and fills[0::2] == [fills[0]] * 4 and fills[1::2] == [fills[1]] * 4 and fills[0] != fills[1]
    titles = [r.find(SVG + "title").text for r in bars(tail)]
    assert titles[1].startswith("Q1: 1.0k–1.0k views, judge b: 0.250, 95% CI [") and titles[1].endswith(", n=2")
    form = parsed(figs["longform"])
    assert texts(form, "bar-label") == ["1 sentence", "2 sentences", "6+ sentences"]
    assert texts(form, "not-computed") == ["not computed: no item"]  # run a has no item of 6+ sentences
    assert len(bars(form)) == 5


def test_quartiles_whose_ranges_differ_are_named_by_rank():
    a = items([record(i, 0.5, views=1000 * (i + 1)) for i in range(4)])
    b = items([record(i, 0.5, views=2000 * (i + 1)) for i in range(4)])
    assert texts(parsed(figures([("a", a), ("b", b)])["longtail"]), "bar-label") == ["Q1", "Q2", "Q3", "Q4"]


def test_no_page_views_no_long_tail_figure_and_the_table():
    found = items([record(i, 0.25 * i, sentences=1, label="non_verified") for i in range(3)])
    assert list(figures([("nq", found)])) == ["longform"]
    assert figures([("empty", FactualityItems())]) == {}
    md = buckets_markdown([("nq|x", found)]).splitlines()
    assert md[0] == "| figure | bucket | run | n | factuality [95 % CI] | consistent | non-verified | inconsistent |"
    assert md[2].startswith("| long form | 1 sentence | nq\\|x | 3 | 0.250 [") and md[2].endswith("| 0.000 | 1.000 | 0.000 |")
    assert len(md) == 3


def test_read_items_from_a_folder(tmp_path):
    found = read_items(write_run(tmp_path, [record(i, 0.5, views=10, sentences=2) for i in range(3)] + [{"id": "x", "scores": {}}]))
    assert len(found.items) == 3 and found.without == 0
    with pytest.raises(DataError, match="no samples.jsonl"):
        read_items(tmp_path / "missing")
