"""A task declares what evaluate, run and report need (issue 10, item 2): the KaLMA task's fields, format, suite,
judge purposes and counts; the commands serve any task from that declaration and know no KaLMA name themselves."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.registry import create

SRC = Path(__file__).resolve().parents[3] / "src" / "vericite"
KNOWLEDGE = [{"subject": "Q1", "subject_label": "Ann", "property": "place of birth", "value": "Rome"}]
LINE = {"id": "a", "question": "Where was Ann born?", "answer": "In Rome [Q1, place of birth: Rome]. A cat [NA].", "knowledge": KNOWLEDGE}


def evaluate(tmp_path, *args: str, lines=(LINE,)):
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return CliRunner().invoke(cli, ["evaluate", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "ev"), "-q", "--resamples", "0", *args])


def test_the_kalma_task_declares_its_fields_format_suite_judge_and_counts():
    from vericite.metrics import attribution, geval, kalma

    task = create("tasks", "kalma")
    assert task.input_fields == ("id", "question", "answer", "knowledge") and {"gold", "absent"} <= set(task.optional_fields)
    assert task.citation_format == "kg" and task.evidence == "knowledge" and task.metrics == ("kalma", "geval", "attribution")
    assert task.metric_names() == kalma.METRIC_NAMES + geval.METRIC_NAMES + attribution.METRIC_NAMES
    assert task.judge_purposes == ("alignment", "na") and task.judge_trust == "kalma-alignment"
    needs = task.needs()  # which metric needs which optional field: from the metrics' declared inputs
    assert set(needs["gold"]) == {n for n in kalma.METRIC_NAMES if n.startswith("citation_") and n != "citation_correctness"}
    assert needs["absent"] == ("na_precision", "na_recall", "na_f1") and needs["meta"] == ()
    parsed = create("formats", "kg").parse("In Rome [Q1, place of birth: Rome]. [Q9] [NA].", [])
    assert task.counts([parsed]) == {"citation_status": {"unknown_entity": 1, "no_property": 1}, "na_markers": 1}


def test_evaluate_serves_another_task_and_its_gate(tmp_path):
    r = evaluate(tmp_path, "--task", "fake", "--fail-under", "fake_cited_share=0.5")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert list(res["metrics"]) == ["fake_cited_share"] and res["metric_versions"] == {"fake": "fake@1"}
    assert res["judges"] == {} and res["evaluation"] == {} and res["counts"]["sentences"] == 2 and "citation_status" not in res["counts"]
    assert "Other metrics" in r.stdout and "citations:" not in r.stdout
    # a KaLMA metric is not a metric of the fake task
    r = evaluate(tmp_path, "--task", "fake", "--fail-under", "citation_correctness=0.5")
    assert r.exit_code != 0 and "unknown metric 'citation_correctness'" in r.output and "Traceback" not in r.output


def test_an_unknown_task_is_one_line(tmp_path):
    r = evaluate(tmp_path, "--task", "kalmaa")
    assert r.exit_code != 0 and "unknown task 'kalmaa'; did you mean 'kalma'" in r.output and "Traceback" not in r.output


def test_the_table_groups_metrics_by_their_family_in_results_json(tmp_path):
    r = evaluate(tmp_path)
    assert r.exit_code == 0, r.output
    out = r.stdout
    titles = ["Citation quality", "Text–citation alignment", "Conscious incompetence", "Text quality (G-Eval,"]
    assert all(t in out for t in titles) and [out.index(t) for t in titles] == sorted(out.index(t) for t in titles)
    assert out.index("Citation quality") < out.index("citation_correctness") < out.index("Text–citation alignment") < out.index("alignment_micro")
    assert "KaLMA" not in out.splitlines()[0]


def _literals(path: Path) -> list[tuple[int, str]]:
    """The string literals of a module that are not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}  # fmt: skip
    return [(n.lineno, n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_evaluate_run_and_report_know_no_kalma_metric():
    """The commands take metric names, families and counts from the task and results.json (the report's table of
    old files' metrics, report/legacy.py, aside)."""
    names = set(create("tasks", "kalma").metric_names())
    modules = [*sorted((SRC / "evaluate").glob("*.py")), SRC / "runs" / "results.py", SRC / "cli" / "evaluate.py", SRC / "cli" / "run.py",
               *(p for p in sorted((SRC / "report").glob("*.py")) if p.name != "legacy.py")]  # fmt: skip
    found = [f"{p.relative_to(SRC)}:{line}: {text!r}" for p in modules for line, text in _literals(p) if text in names or "KaLMA" in text]
    assert not found, "\n".join(found)


def test_run_serves_the_task_its_config_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    q = [{"id": "q1", "question": "Where was Ann born?", "knowledge": KNOWLEDGE}]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(x) + "\n" for x in q), encoding="utf-8")
    (tmp_path / "c.yaml").write_text("name: t\ndataset: q.jsonl\nmodel: fake\nresamples: 10\ntask: fake\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["run", "c.yaml", "--out", "o", "-q", "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "o" / "results.json").read_text())
    assert list(res["metrics"]) == ["fake_cited_share"] and res["config"]["task"] == "fake" and res["metric_versions"] == {"fake": "fake@1"}
    (tmp_path / "d.yaml").write_text("name: t\ndataset: q.jsonl\nmodel: fake\nresamples: 10\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["run", "d.yaml", "--out", "o2", "-q"]).exit_code == 0
    assert "task" not in json.loads((tmp_path / "o2" / "results.json").read_text())["config"]  # the default is not recorded, as before


def test_the_alce_task_is_trusted_by_alces_human_labels():
    """evaluate --task alce shows the judge's agreement with ALCE's human citation labels (judges/measured.json)."""
    assert create("tasks", "alce").judge_trust == "alce-human"
