"""The cost chart (``charts.cost_chart``) and VTG's token figure drawn from run folders (``token_figure``): a valid
SVG with one point per method at its median tokens, IQR whiskers, lower bounds hollow with an arrow, text escaped,
a metric missing or not computed a note (never a crash), missing files one clear line."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from vericite.errors import DataError
from vericite.report.charts import CostPoint, cost_chart, standalone_svg
from vericite.report.token_figure import FigureRun, token_figure

NS = "{http://www.w3.org/2000/svg}"


def groups(svg: str) -> list[ElementTree.Element]:
    return ElementTree.fromstring(svg).findall(f"{NS}g[@class='point-group']")


def text(svg: str) -> str:
    return " ".join(ElementTree.fromstring(svg).itertext())


def test_one_point_per_method_at_its_median_with_whiskers():
    pts = [CostPoint("vanilla", 1000, 900, 1100, 0.2, (0.1, 0.3)), CostPoint("vtg", 3000, 2500, 4000, 0.9, (0.8, 1.0))]
    svg = cost_chart("t", "tokens", "f1", pts, y_domain=(0.0, 1.0))
    g = groups(svg)
    assert [x.get("data-label") for x in g] == ["vanilla", "vtg"]
    vtg_circle = g[1].find(f"{NS}circle")
    van_circle = g[0].find(f"{NS}circle")
    assert float(vtg_circle.get("cx")) > float(van_circle.get("cx")) and float(vtg_circle.get("cy")) < float(van_circle.get("cy"))
    lines = g[1].findall(f"{NS}line")  # the IQR across, the CI up
    assert lines[0].get("y1") == lines[0].get("y2") and float(lines[0].get("x1")) < float(vtg_circle.get("cx")) < float(lines[0].get("x2"))
    assert lines[1].get("x1") == lines[1].get("x2") == vtg_circle.get("cx")
    assert "3,000 tokens per question" in vtg_circle.find(f"{NS}title").text
    assert not any(x.get("data-lower-bound") for x in g) and "(≥)" not in text(svg)
    ElementTree.fromstring(standalone_svg(svg).split("\n", 1)[1])  # a file of its own parses too


def test_a_lower_bound_is_hollow_with_an_arrow_and_said_in_the_legend():
    svg = cost_chart("t", "tokens", "f1", [CostPoint("rerank", 11000, 10000, 12000, 0.4, None, "judge tokens not recorded")])
    (g,) = groups(svg)
    assert g.get("data-lower-bound") == "true"
    assert g.find(f"{NS}path[@class='lower-bound']") is not None and g.find(f"{NS}circle").get("fill") == "#fff"
    assert "rerank (≥)" in text(svg) and "a lower bound: judge tokens not recorded" in g.find(f"{NS}circle/{NS}title").text


def test_text_is_escaped():
    svg = cost_chart('<b>"x"</b>', "tokens & more", "<f1>", [CostPoint("<script>&", 10, 5, 20, 0.5)], notes=["a <note> & more"])
    assert "<script>" not in svg and "&lt;script&gt;&amp;" in svg
    t = text(svg)
    assert "<script>&" in t and "a <note> & more" in t and '<b>"x"</b>' in t


def test_a_missing_metric_is_a_note_not_a_point_nor_a_crash():
    svg = cost_chart("t", "tokens", "f1", [CostPoint("vtg", 10, 5, 20, None, why="alce_citation_f1 not computed: no judge"), CostPoint("summ", 5, 4, 6, 0.3)])
    assert [g.get("data-label") for g in groups(svg)] == ["summ"]
    assert "not plotted: vtg (alce_citation_f1 not computed: no judge)" in text(svg)
    empty = cost_chart("t", "tokens", "f1", [CostPoint("vtg", 10, 5, 20, None, why="no evaluation given")])
    assert groups(empty) == [] and "no method has a value to plot" in text(empty)
    assert "no method to plot" in text(cost_chart("t", "tokens", "f1", []))


def write_run(folder: Path, recs: list[dict], metrics: dict | None = None) -> FigureRun:
    folder.mkdir(parents=True)
    (folder / "samples.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    ev = None
    if metrics is not None:
        ev = folder / "eval"
        ev.mkdir()
        (ev / "results.json").write_text(json.dumps({"metrics": metrics}), encoding="utf-8")
    return FigureRun(folder.name, folder, ev)


def rec(i: str, prompt: int, **extra) -> dict:
    return {"id": i, "usage": {"prompt_tokens": prompt, "completion_tokens": 0, "calls": 1}, **extra}


F1 = {"alce_citation_f1": {"value": 0.5, "ci": [0.4, 0.6], "range": [0, 1], "family": "Citations (ALCE)", "short_name": "F1"}}


def test_the_figure_from_run_folders_on_the_questions_in_common(tmp_path):
    a = write_run(tmp_path / "vtg", [rec("q1", 100), rec("q2", 200), rec("q3", 300), rec("q4", 400), rec("q9", 10_000)], F1)
    b = write_run(tmp_path / "rerank", [rec(q, 1000, rerank={"chosen": 0}) for q in ("q1", "q2", "q3", "q4")],
                  {"alce_citation_f1": {"value": None, "reason": "no judge"}})
    fig = token_figure([a, b])
    assert fig.n == 4 and [c.median for c in fig.costs] == [250.0, 1000.0]  # q9 is not common: left out
    assert fig.costs[0].quartiles == (175.0, 325.0)
    assert fig.rows()[0] == ("vtg", "250", "175–325", "0.500 [0.400, 0.600]", "no")
    assert fig.rows()[1] == ("rerank", "1,000", "1,000–1,000", "not computed", "judge tokens not recorded")
    assert "not plotted: rerank (alce_citation_f1 not computed: no judge)" in text(fig.svg)
    assert "| vtg | 250 | 175–325 | 0.500 [0.400, 0.600] | no |" in fig.markdown()
    other = token_figure([a, b], metric="rouge_lsum")
    assert all(p.value is None and p.why == "rouge_lsum not in its evaluation" for p in other.points)
    assert "no method has a value to plot" in text(other.svg)


def test_calls_of_unknown_tokens_and_answers_without_usage_are_lower_bounds(tmp_path):
    r1 = rec("q1", 100)
    r1["usage"]["uncounted_calls"] = 2
    a = write_run(tmp_path / "a", [r1, {"id": "q2"}], F1)
    (c,) = token_figure([a]).costs
    assert c.lower_bound == "2 calls of unknown tokens; 1 answers without usage"


def test_missing_files_are_one_clear_line(tmp_path):
    with pytest.raises(DataError, match=r"nowhere: no such run folder"):
        token_figure([FigureRun("x", tmp_path / "nowhere")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"empty: no samples.jsonl"):
        token_figure([FigureRun("x", tmp_path / "empty")])
    bare = write_run(tmp_path / "bare", [{"id": "q1", "output": "x"}])
    with pytest.raises(DataError, match=r"bare: its answers have no usage"):
        token_figure([bare])
    ok = write_run(tmp_path / "ok", [rec("q1", 5)])
    with pytest.raises(DataError, match=r"no results.json"):
        token_figure([FigureRun("ok", ok.generation, tmp_path / "no-eval")])
    other = write_run(tmp_path / "other", [rec("q2", 5)])
    with pytest.raises(DataError, match="no question in common"):
        token_figure([ok, other])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "samples.jsonl").write_text("{not json\n")
    with pytest.raises(DataError, match=r"line 1: not JSON"):
        token_figure([FigureRun("bad", tmp_path / "bad")])


def test_an_experiment_folder_draws_its_declared_metric_else_its_first_curves(tmp_path):
    from vericite.report.token_figure import experiment_token_section

    m = {"precision": {"value": 0.7}, "recall": {"value": 0.6}}
    for lv in (0, 1):
        write_run(tmp_path / f"level-{lv}", [rec("q1", 100 * (lv + 1))], m)
    rows = [{"level": lv, "metrics": m, "generation": {"method": "vtg", "method_args": {"trials": lv}}} for lv in (0, 1)]
    exp = {"x": "T", "curves": [{"title": "c", "metrics": ["recall", "precision"]}], "rows": rows, "token_figure": "alce_citation_f1"}
    html = experiment_token_section(tmp_path, {"vtg-trials": exp})
    assert "tokens per question against recall" in html and html.count('class="point-group"') == 2
    assert 'data-label="level 0"' in html and 'data-label="level 1"' in html  # one method: the levels name the points
    assert "tokens per question against precision" in experiment_token_section(tmp_path, {"t": {**exp, "token_figure": "precision"}})
    kalma = {"x": "k", "rows": [{"level": lv, "metrics": m} for lv in (0, 1)]}  # declares no token figure
    assert experiment_token_section(tmp_path, {"kalma": kalma, "bad": "x"}) == ""
    odd = experiment_token_section(tmp_path, {"t": {**exp, "rows": [{**rows[0], "level": "../../etc"}]}})
    assert "no token figure: level &#x27;../../etc&#x27; is not a level folder&#x27;s name" in odd
