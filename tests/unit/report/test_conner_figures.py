"""CONNER §4.4's figures in the report: factuality by page-view quartile (long tail) and by number of sentences
(long form), from the per-item samples; buckets, means, CIs and shares; a page without CONNER scores has none."""

from __future__ import annotations

import json

import pytest

from vericite.report import build_report
from vericite.report.conner import FactualityItems, bucket_entry, long_form, long_tail, views_text


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
