"""``vericite compare``'s terminal and markdown output: the same notes in both, and the metrics neither run computed
for one reason folded into one line under the table (compare.json keeps every metric)."""

from __future__ import annotations

from vericite.cli.compare import _folded_lines, format_markdown, print_table
from vericite.cli.output import md_cell

BOTH = "not computed in A and B: "


def m(diff=None, reason=None):
    if diff is None:
        return {"a": None, "b": None, "diff": None, "ci": None, "p_value": None, "n_a": 4, "n_b": 4, "verdict": None, "reason": reason}
    return {"a": 0.5, "b": 0.5 + diff, "diff": diff, "ci": [diff - 0.1, diff + 0.1], "p_value": 0.5, "n_a": 4, "n_b": 4, "verdict": "no clear difference", "reason": None}


def comparison():
    judge = "no four-class judge (--attribution-judge llm4:<model>)"
    return {
        "a": {"path": "runs/a"}, "b": {"path": "runs/b"},
        "samples": {"paired": 4, "only_a": 0, "only_b": 0, "intersect": False, "same_questions": True, "evidence": "passages", "evidence_differs": 2},
        "bootstrap": {"resamples": 100, "seed": 0},
        "differences": [],
        "metrics": {
            "str_em": m(0.25),
            "attribution_supportive": m(reason=BOTH + judge),
            "na_precision": m(reason="not computed in B: no absent set"),
            "attribution_irrelevant": m(reason=BOTH + judge),
            "qa_em": m(reason=BOTH + "no qa_em score in samples.jsonl (--metrics qa_em,qa_f1)"),
            "qa_f1": m(reason=BOTH + "no qa_f1 score in samples.jsonl (--metrics qa_em,qa_f1)"),
            "geval_fluency": m(reason=BOTH + "no geval_fluency score: --geval-model"),
        },
    }


def test_metrics_not_computed_in_both_for_one_reason_are_one_line():
    assert _folded_lines(comparison()) == [
        BOTH + "attribution_supportive, attribution_irrelevant (no four-class judge (--attribution-judge llm4:<model>))",
        BOTH + "qa_em, qa_f1 (no <metric> score in samples.jsonl (--metrics qa_em,qa_f1))",
        BOTH + "geval_fluency (no geval_fluency score: --geval-model)",  # alone: its own name, not the placeholder
    ]


def test_markdown_has_the_terminals_notes_and_the_folded_lines(capsys):
    md = format_markdown(comparison())
    rows = [x.split(" | ")[0].lstrip("| ") for x in md.splitlines() if x.startswith("| ") and not x.startswith("| metric")]
    assert rows == ["str_em", "na_precision"]  # a metric one run lacks stays a row, with its reason
    assert "not computed in B: no absent set" in md
    assert "- 4 paired samples (--same-questions: paired by id and question; the passages differ in 2 of them)" in md
    for line in _folded_lines(comparison()):
        assert f"- {md_cell(line)}\n" in md
    print_table(comparison())
    out = capsys.readouterr().out
    assert "4 paired samples (--same-questions: paired by id and question; the passages differ in 2 of them)" in out
    assert "na_precision: not computed in B: no absent set" in out and "n/c: not computed, because:" in out
    for line in _folded_lines(comparison()):
        assert out.count(line) == 1
    assert not [x for x in out.splitlines() if x.strip().startswith(("attribution_", "qa_", "geval_"))]


def test_no_dangling_because_when_every_missing_metric_is_folded(capsys):
    cmp = comparison()
    del cmp["metrics"]["na_precision"]
    print_table(cmp)
    out = capsys.readouterr().out
    assert "because" not in out and "better: the better run where the CI excludes 0 and p < 0.05, else —" in out


def test_markdown_escapes_names_in_angle_brackets():
    """A judge or model name such as ``llm4:<model>`` (or the ``<metric>`` placeholder) is written as entities, so
    GitHub shows it rather than dropping it as an unknown HTML tag; a "|" does not split the cell."""
    cmp = comparison()
    cmp["differences"] = [{"what": "judge", "a": "llm:<model>", "b": "nli:a|b & c"}]
    md = format_markdown(cmp)
    assert "<" not in md and ">" not in md
    assert "llm4:&lt;model&gt;" in md and "no &lt;metric&gt; score" in md
    assert "- differs: judge: A llm:&lt;model&gt; / B nli:a\\|b &amp; c\n" in md


def test_a_metric_computed_in_one_run_only_shows_no_n_and_says_so_in_every_output(capsys):
    """Its n is ``—`` (compare.json: null), never ``0/0`` or ``4/0``, and its reason starts "only in A" in the
    markdown, the terminal and the HTML report alike; a compare.json written before (0 for the run without it)
    reads the same."""
    from vericite.report.compare import metrics_section
    from vericite.runs.compare_output import n_text

    only = {**m(reason="only in A; not computed in B: no absent set"), "a": 0.75, "n_a": 4, "n_b": None, "only_in": "A"}
    cmp = comparison()
    cmp["metrics"] = {"str_em": m(0.25), "na_precision": only}
    assert n_text(only) == "—" and n_text(m(0.25)) == "4/4" and n_text({**only, "n_b": 0}) == "—"  # the old file's 0
    md = format_markdown(cmp)
    assert "| str_em | 0.500 | 0.750 | +0.250 | [0.150, 0.350] | 0.500 | 4/4 | no clear difference |" in md, md
    assert "| na_precision | 0.750 | — | — |  |  | — | only in A; not computed in B: no absent set |" in md, md
    print_table(cmp)
    assert "na_precision: only in A; not computed in B: no absent set" in capsys.readouterr().out
    html = metrics_section(cmp["metrics"])
    row = html[html.index('data-metric="na_precision"'):]
    row = row[: row.index("</tr>")]
    assert '<td class="num">0.750</td>' in row and '<td class="num">—</td><td class="reason">only in A; not computed in B: no absent set</td>' in row, row
    assert "4/0" not in html and "0/0" not in html and '<td class="num">4/4</td>' in html
