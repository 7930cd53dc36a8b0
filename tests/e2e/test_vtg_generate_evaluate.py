"""VTG end to end with fakes: ``vericite generate --method vtg`` over an ALCE file (the scripted model, the
keyword judge as the verifiers' judge), then ``vericite evaluate --task alce`` of the run folder: the answer is an
ALCE item, every ALCE metric applies, and ``--resume`` continues at the next question."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

from tests.support.vtg import DOCS, script_model  # noqa: F401  (a fixture)

ITEMS = [
    {"question": "Which cities are capitals?", "answer": "Paris and Rome are capitals.", "claims": ["Paris is a capital."],
     "docs": [{"title": d.title, "text": d.text} for d in DOCS]},
    {"question": "Which city is in France?", "answer": "Paris.", "claims": ["Paris is in France."],
     "docs": [{"title": d.title, "text": d.text} for d in DOCS]},
]  # fmt: skip


def run(*args, code=0):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    assert r.exit_code == code, r.output
    return r


def test_generate_then_evaluate(tmp_path, script_model):
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    gen = tmp_path / "vtg1"
    common = ["generate", "--method", "vtg", "--dataset", data, "--model", script_model, "--judge", "fake", "--k", 2,
              "--queries", 2, "--docs-per-query", 1, "--trials", 2, "--out", gen, "-q", "--no-cache"]  # fmt: skip
    run(*common, "--limit", 1)
    run(*common, "--resume")
    records = [json.loads(x) for x in (gen / "samples.jsonl").read_text().splitlines()]
    assert len(records) == 2 and len({r["id"] for r in records}) == 2  # the resumed run answered the second only
    assert records[0]["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    assert records[0]["usage"]["calls"] > 4 and records[0]["vtg"]["judge"]["calls"] > 0
    manifest = json.loads((gen / "manifest.json").read_text())
    text = json.dumps(manifest)
    assert '"vtg@1"' in text
    assert '"vtg-cite@1"' in text and '"docs_per_query": 1' in text and '"verifier_judge": "fake"' in text
    run("evaluate", "--task", "alce", "--input", gen, "--judge", "fake", "--out", tmp_path / "e1", "-q", "--resamples", 20)
    res = json.loads((tmp_path / "e1" / "results.json").read_text())
    m = res["metrics"]
    assert m["alce_citation_recall"]["n"] == 2 and m["alce_citation_recall"]["value"] == 1.0
    assert m["alce_citation_precision"]["value"] == 1.0 and m["rouge_lsum"]["n"] == 2


def test_ablation_flags_and_bad_option(tmp_path, script_model):
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS[:1]), encoding="utf-8")
    run("generate", "--method", "vtg", "--dataset", data, "--model", script_model, "--judge", "fake", "--k", 2,
        "--no-verifier", "--no-simplifier", "--no-query-generation", "--out", tmp_path / "a", "-q", "--no-cache")  # fmt: skip
    rec = json.loads((tmp_path / "a" / "samples.jsonl").read_text().splitlines()[0])
    assert rec["output"].startswith("Paris is the capital of France [2].") and rec["vtg"]["judge"]["calls"] == 0
    r = run("generate", "--method", "vtg", "--dataset", data, "--model", script_model, "--trials", -1, "--out", tmp_path / "b", code=2)
    assert "trials" in r.output and "Traceback" not in r.output


def test_resume_over_an_index_rebuilt_in_place_is_refused(tmp_path, script_model):
    # VTG retrieves from --index: its manifest records the index's corpus (index_corpus), so a folder resumed over
    # an index rebuilt at the same path from other documents is one line, the folder untouched
    import shutil

    def index(docs):
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text("".join(json.dumps({"id": d.id, "title": d.title, "text": d.text}) + "\n" for d in docs), encoding="utf-8")
        shutil.rmtree(tmp_path / "idx", ignore_errors=True)
        run("docs", "index", corpus, "--index", tmp_path / "idx", "-q")

    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(ITEMS), encoding="utf-8")
    gen = tmp_path / "vtg1"
    common = ["generate", "--method", "vtg", "--dataset", data, "--model", script_model, "--judge", "fake", "--k", 2, "--index", tmp_path / "idx",
              "--queries", 2, "--docs-per-query", 1, "--trials", 2, "--out", gen, "-q", "--no-cache"]  # fmt: skip
    index(DOCS)
    run(*common, "--limit", 1)
    assert json.loads((gen / "manifest.json").read_text())["index_corpus"]["passages"] == len(DOCS)
    index(DOCS[:3])
    before = {p.name: p.read_bytes() for p in gen.iterdir() if p.is_file() and p.name != ".lock"}
    r = run(*common, "--resume", code=2)
    assert r.output.startswith("error: cannot resume") and "index_corpus" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert {p.name: p.read_bytes() for p in gen.iterdir() if p.is_file() and p.name != ".lock"} == before
