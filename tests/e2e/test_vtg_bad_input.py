"""``vericite generate --method vtg`` with a judge that raises: the run finishes, every sentence unverified, the
failures counted in the trace and the summary, and one warning line says so (exit 0: the answers are there)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.fakes.judges import KeywordJudge

from tests.support.vtg import DOCS, script_model  # noqa: F401  (a fixture)


class Exploding(KeywordJudge):
    def judge(self, pairs):
        raise ValueError("no verdict today")


def test_a_judge_that_raises_is_counted_traced_and_said(tmp_path, script_model):
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps([{"question": "Which cities are capitals?", "docs": [{"title": d.title, "text": d.text} for d in DOCS]}]), encoding="utf-8")
    registry.judges.register("exploding", lambda arg, *, ctx, **o: Exploding(), replace=True)
    try:
        r = CliRunner().invoke(cli, ["generate", "--method", "vtg", "--dataset", str(data), "--model", script_model, "--judge", "exploding",
                                     "--k", "2", "--trials", "1", "--out", str(tmp_path / "g"), "-q", "--no-cache"])  # fmt: skip
    finally:
        registry.judges.unregister("exploding")
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert "warning: vtg: " in r.output and " judge calls failed (their pairs judged not entailed" in r.output
    rec = json.loads((tmp_path / "g" / "samples.jsonl").read_text().splitlines()[0])
    assert rec["vtg"]["judge_error"] == "judge fake@1: judge 'exploding' (plugin) failed: ValueError: no verdict today"  # the plugin named
    assert all(not s["verified"] for s in rec["vtg"]["sentences"] if s["kept"])
    summary = json.loads((tmp_path / "g" / "manifest.json").read_text())["summary"]["vtg"]
    assert summary["problems"]["judge_errors"] == rec["vtg"]["problems"]["judge_errors"] > 0 and summary["verified_sentences"] == 0


def test_a_retriever_that_finds_nothing_is_counted_and_said(tmp_path, script_model):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "u1", "title": "Mitochondrion", "text": "The mitochondrion is an organelle."}) + "\n", encoding="utf-8")
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"]).exit_code == 0
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "z1", "question": "Which cities are capitals?"}) + "\n", encoding="utf-8")
    for method, model in (("vtg", script_model), ("vanilla", "fake")):
        out = tmp_path / method
        r = CliRunner().invoke(cli, ["generate", "--method", method, "--dataset", str(questions), "--index", str(tmp_path / "idx"), "--model", model,
                                     "--judge", "fake", "--trials", "1", "--out", str(out), "-q", "--no-cache"] if method == "vtg" else
                               ["generate", "--method", method, "--dataset", str(questions), "--index", str(tmp_path / "idx"), "--model", model,
                                "--out", str(out), "-q", "--no-cache"])  # fmt: skip
        assert r.exit_code == 0 and "Traceback" not in r.output, r.output
        assert "warning: the retriever found no document for 1 of 1 questions, which were answered without documents" in r.output
        assert json.loads((out / "manifest.json").read_text())["summary"]["retrieved"]["none_found"] == 1
        rec = json.loads((out / "samples.jsonl").read_text().splitlines()[0])
        assert rec["retrieval"]["found"] == 0 and rec["passages"] == []
        if method == "vtg":
            assert rec["vtg"]["problems"]["retrieval_empty"] >= 1 and rec["vtg"]["problems"]["unverified_sentences"] >= 1
