"""``--json`` / ``--format table|json|markdown`` for the metric table of evaluate, run and judge-eval (issue 9):
stdout holds only the JSON document (progress and warnings go to stderr); markdown is a GitHub table."""

from __future__ import annotations

import html
import json
import re

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.cli.output import markdown_table, md_cell

KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"},
             {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]


def answers(path, bad_line: bool = True):
    recs = [
        {"id": "a", "question": "Where was Ann born?", "answer": "Ann was born in Rome [Q1, place of birth: Rome].", "knowledge": KNOWLEDGE,
         "gold": KNOWLEDGE[:1]},
        {"id": "b", "question": "What did Ann do?", "answer": "She was a poet [Q1, occupation: poet]. She liked cats [NA].",
         "knowledge": KNOWLEDGE, "gold": KNOWLEDGE[1:]},
    ]
    lines = [json.dumps(r) for r in recs] + (["not json"] if bad_line else [])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def split_row(line: str) -> list[str]:
    """The cells of one GitHub table row as GitHub shows them ("\\|" is a pipe inside a cell, "&lt;" a "<")."""
    assert line.startswith("|") and line.endswith("|"), line
    cells = re.split(r"(?<!\\)\|", line[1:-1])
    return [html.unescape(c.strip().replace("\\|", "|")) for c in cells]


def parse_markdown_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The first GitHub table in ``text``: header cells and body rows; checks the delimiter row."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    block = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        block.append(line)
    header, delim, body = split_row(block[0]), split_row(block[1]), [split_row(x) for x in block[2:]]
    assert all(re.fullmatch(r":?-{3,}:?", d) for d in delim) and len(delim) == len(header)
    assert all(len(r) == len(header) for r in body)
    return header, body


# --------------------------------------------------------------------------- evaluate


def test_evaluate_json_is_pure_json_on_stdout(tmp_path, monkeypatch):
    import vericite.progress as progress

    monkeypatch.setattr(progress, "LOG_INTERVAL_S", 0.0)  # progress lines on every step: they must go to stderr
    answers(tmp_path / "in.jsonl")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert "judging:" in r.stderr and "input lines could not be evaluated" in r.stderr
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert doc["kind"] == "evaluate" and doc["results"] == f"{tmp_path / 'ev'}/results.json"
    assert set(doc["metrics"]) == set(res["metrics"])
    for name, m in res["metrics"].items():
        assert doc["metrics"][name] == {k: m.get(k) for k in ("value", "ci", "n", "judge", "higher_is_better", "reason")}
    assert doc["metrics"]["citation_correctness"]["value"] == pytest.approx(0.5)
    assert doc["metrics"]["geval_fluency"]["value"] is None and "G-Eval" in doc["metrics"]["geval_fluency"]["reason"]
    assert doc["counts"]["bad_lines"] == 1 and doc["judges"]["alignment"]["id"] == "triple@1"
    assert "gate" not in doc


def test_evaluate_json_says_whether_the_gate_passed(tmp_path):
    answers(tmp_path / "in.jsonl")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q",
                                 "--format", "json", "--fail-under", "citation_correctness=0.9"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["gate"]["passed"] is False and len(doc["gate"]["failures"]) == 2  # the metric and the bad line
    assert "FAIL citation_correctness" in r.stderr


def test_evaluate_markdown_table(tmp_path):
    answers(tmp_path / "in.jsonl")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    header, body = parse_markdown_table(r.stdout)
    assert header == ["metric", "value", "95% CI", "n", "judge"]
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    rows = {row[0]: row for row in body}
    assert list(rows) == list(res["metrics"])
    for name, m in res["metrics"].items():
        metric, value, ci, n, judge = rows[name]
        assert n == str(m["n"])
        if m["value"] is None:
            assert value == "—" and ci == "" and judge == f"not computed: {m['reason']}"
        else:
            assert float(value) == pytest.approx(m["value"], abs=5e-4) and judge == (m["judge"] or "")
            lo, hi = (float(x) for x in re.fullmatch(r"\[(.+), (.+)\]", ci).groups())
            assert lo == pytest.approx(m["ci"][0], abs=5e-4) and hi == pytest.approx(m["ci"][1], abs=5e-4)
    assert "- judge for alignment: triple@1" in r.stdout and "input lines could not be evaluated" not in r.stdout


def test_markdown_cells_escape_pipes_and_line_breaks():
    rows = [{"metric": "x", "value": None, "ci": None, "n": 0, "judge": None, "reason": "a | b\nc"}]
    header, body = parse_markdown_table(markdown_table(rows))
    assert body == [["x", "—", "", "0", "not computed: a | b c"]]
    assert md_cell("a|b") == "a\\|b"


def test_markdown_cells_escape_html_one_function_for_evaluate_and_compare(tmp_path):
    # evaluate's cells left "<" and ">" as they were: GitHub took "<b>" for a tag (and dropped "llm4:<model>")
    from vericite.cli import compare

    assert md_cell("<b>a|b</b>\nc & d") == "&lt;b&gt;a\\|b&lt;/b&gt; c &amp; d"
    assert md_cell("llm:<m>|x", code=True) == "llm:<m>\\|x"  # in a code span entities would show as written
    assert compare.md_cell is md_cell  # compare escapes with the same function
    answers(tmp_path / "in.jsonl", bad_line=False)
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q", "--judge", "fake:<b>a|b", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    _, body = parse_markdown_table(r.stdout)
    rows = {row[0]: row for row in body}
    assert rows["alignment_micro"][4] == "fake:<b>a|b@1"  # shown as written: the pipe stays in its cell, "<b>" is text
    assert "<b>" not in r.stdout and "<model>" not in r.stdout
    assert "- judge for alignment: fake:&lt;b&gt;a\\|b@1" in r.stdout  # the lines below the table too


def test_json_and_another_format_is_one_line_error(tmp_path):
    answers(tmp_path / "in.jsonl")
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "--json", "--format", "markdown"])
    assert r.exit_code == 2 and "--json and --format markdown" in r.output and "Traceback" not in r.output


# --------------------------------------------------------------------------- judge-eval and run


def test_judge_eval_json_and_markdown(tmp_path):
    rows = [("She was born in Rome.", "place of birth: Rome", "supports"), ("She was born in Paris.", "place of birth: Rome", "refutes"),
            ("He played the piano.", "instrument: piano", "supports"), ("He played the violin.", "instrument: piano", "refutes")]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps({"evidence": e, "claim": c, "label": g}) + "\n" for e, c, g in rows), encoding="utf-8")
    args = ["judge-eval", "--judge", "triple", "--data", str(data), "--out", str(tmp_path / "j")]
    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    res = json.loads((tmp_path / "j" / "results.json").read_text())
    assert doc["judge"] == "triple@1" and doc["judge_kind"] == "triple" and doc["n"] == 4
    assert doc["metrics"]["balanced_accuracy"]["value"] == res["balanced_accuracy"] == 1.0
    assert doc["metrics"]["balanced_accuracy"]["ci"] == res["ci"]["balanced_accuracy"]
    assert doc["confusion"] == res["confusion"] and "wrote" in r.stderr

    r = CliRunner().invoke(cli, [*args, "--format", "markdown"])
    assert r.exit_code == 0, r.output
    header, body = parse_markdown_table(r.stdout)
    assert header == ["metric", "value", "95% CI", "n", "judge"]
    table = {row[0]: row for row in body}
    assert table["balanced_accuracy"][1:] == ["1.000", "[1.000, 1.000]", "4", "triple@1"]
    assert table["unparseable"][1] == "0.000"


def test_run_json_and_markdown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    q = [{"id": "q1", "question": "Where was Ann born?", "knowledge": KNOWLEDGE, "gold": KNOWLEDGE[:1]},
         {"id": "q2", "question": "What did Ann do?", "knowledge": KNOWLEDGE}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(x) + "\n" for x in q), encoding="utf-8")
    (tmp_path / "c.yaml").write_text("name: t\ndataset: q.jsonl\nmodel: fake\nresamples: 50\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", "c.yaml", "--out", "o", "--json", "-q"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert doc["kind"] == "run" and doc["experiments"] == {}
    assert {k: v["value"] for k, v in doc["metrics"].items()} == {k: v["value"] for k, v in res["metrics"].items()}
    assert "results: o/results.json" in r.stderr

    r = CliRunner().invoke(cli, ["run", "c.yaml", "--out", "o2", "--format", "markdown", "-q"])
    assert r.exit_code == 0, r.output
    header, body = parse_markdown_table(r.stdout)
    assert header[0] == "metric" and [row[0] for row in body] == list(res["metrics"])


def test_run_with_an_experiment_prints_its_levels(tmp_path, monkeypatch, shared_data):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "e.yaml").write_text(
        "name: t\ndataset: biokalma-gold\nmodel: fake\nlimit: 3\nresamples: 20\nexperiment: conscious-incompetence\nlevels: [0, 2]\n", encoding="utf-8"
    )
    r = CliRunner().invoke(cli, ["run", "e.yaml", "--out", "o", "--json", "-q"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["experiments"]["conscious-incompetence"]["rows"]
    res = json.loads((tmp_path / "o" / "results.json").read_text())["experiments"]["conscious-incompetence"]["rows"]
    assert [x["level"] for x in rows] == [0, 2] and all(x["n"] == 3 for x in rows)
    assert [{k: v["value"] for k, v in x["metrics"].items()} for x in rows] == [{k: v["value"] for k, v in x["metrics"].items()} for x in res]

    r = CliRunner().invoke(cli, ["run", "e.yaml", "--out", "o2", "--format", "markdown", "-q"])
    assert r.exit_code == 0, r.output
    levels = r.stdout[r.stdout.index("**conscious-incompetence**"):]
    header, body = parse_markdown_table(levels)
    assert header[:2] == ["level", "correctness"] and [row[0] for row in body] == ["0", "2"]


def test_evaluate_summary_says_well_formed_not_ok(tmp_path):
    """A parse status "ok" means well-formed, not correct: the summary line never prints it as "ok" (issue 9)."""
    src = answers(tmp_path / "a.jsonl", bad_line=False)
    r = CliRunner().invoke(cli, ["evaluate", "-i", str(src), "-o", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    line = " ".join(r.stdout.split())  # rich wraps the summary line
    assert "citations: " in line and "well-formed" in line
    assert "'ok'" not in line and "citations by status" not in line
