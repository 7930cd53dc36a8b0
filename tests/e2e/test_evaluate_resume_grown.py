"""``evaluate --resume`` over answers that grew: ``generate`` answers some questions, ``evaluate`` scores them,
``generate --resume`` answers more into the same folder, and ``evaluate --resume`` keeps the answers already scored
(their records unchanged), judges only the new ones, and writes what an evaluation from scratch writes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.support.checkpoint import Cut
from vericite.cli.main import cli

from tests.support.vtg import DOCS, script_model  # noqa: F401  (a fixture)


def invoke(*args, code=0):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == code, r.output
    return r


def results_without_time(folder):
    res = json.loads((folder / "results.json").read_text())
    res.pop("created")
    return res


def items(n):
    """``n`` ELI5-like questions over the scripted model's documents (each with its claims)."""
    docs = [{"title": d.title, "text": d.text} for d in DOCS]
    return [{"question": f"Which cities are capitals ({i})?", "answer": "Paris and Rome are capitals.", "claims": [f"Paris is a capital ({i}).", "Rome is a capital."], "docs": docs} for i in range(n)]


def test_generate_evaluate_generate_more_then_evaluate_resume_scores_only_the_new_answers(tmp_path, monkeypatch, script_model):
    """The case of the issue: VTG answers ELI5 questions 1-3, they are evaluated; ``generate --resume`` adds 4-5;
    ``evaluate --resume`` judges answers 4 and 5 only, and its results are those of an evaluation from scratch."""
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(items(5)), encoding="utf-8")
    gen, out, scratch = tmp_path / "vtg", tmp_path / "eval", tmp_path / "scratch"
    generate = ["generate", "--method", "vtg", "--dataset", data, "--model", script_model, "--judge", "fake", "--k", 2,
                "--queries", 2, "--docs-per-query", 1, "--trials", 2, "--out", gen, "-q", "--no-cache"]  # fmt: skip
    evaluate = ["evaluate", "--task", "alce", "--input", gen, "--judge", "fake", "-q", "--resamples", 50]
    invoke(*generate, "--limit", 3)
    first = Cut(monkeypatch)
    invoke(*evaluate, "--out", out)
    judged = first.pairs  # before generate --resume, whose verifiers ask the same fake judge
    assert judged > 0
    before = (gen / "samples.jsonl").read_text()
    invoke(*generate, "--limit", 5, "--resume")  # answers 4 and 5 appended
    after = (gen / "samples.jsonl").read_text()
    assert after.startswith(before) and after.count("\n") == 5

    resumed = Cut(monkeypatch)
    r = invoke(*evaluate, "--out", out, "--resume")
    assert "3 answers already scored (unchanged), 2 more in" in r.output, r.output
    whole = Cut(monkeypatch)
    invoke(*evaluate, "--out", scratch)
    assert 0 < resumed.pairs < whole.pairs and resumed.pairs == whole.pairs - judged  # only the new answers judged
    got, want = results_without_time(out), results_without_time(scratch)
    assert got["metrics"] == want["metrics"] and got["metrics"]["alce_citation_recall"]["n"] == 5
    assert got["counts"] == want["counts"] and got["judge_usage"] == want["judge_usage"]
    assert (out / "samples.jsonl").read_text() == (scratch / "samples.jsonl").read_text()
    lines = [json.loads(x) for x in (out / ".evaluate-answers.jsonl").read_text().splitlines()]
    assert len(lines) == 6 and all(len(x["record_sha256"]) == 64 for x in lines[1:])

    again = Cut(monkeypatch)
    r = invoke(*evaluate, "--out", out, "--resume")  # the same answers: nothing judged, nothing said
    assert again.calls == 0 and "note:" not in r.output
