"""`vericite generate --method vanilla|summ|snippet|rerank|closedbook --dataset <ALCE file> --ndoc --shot`, then
`vericite export alce`: the result file ALCE's eval.py reads, read back."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.datasets.alce import read_alce

from tests.support.alce import write_alce_files

ITEMS = [
    {
        "sample_id": "s-1",
        "question": "Who has the highest goals in world football?",
        "qa_pairs": [{"question": "Men?", "short_answers": ["Daei", "Ali Daei"]}, {"question": "All-time?", "short_answers": ["Bican"]}],
        "annotations": [{"long_answer": "Ali Daei."}, {"long_answer": "Josef Bican."}],
        "answer": "Ali Daei and Josef Bican.",
        "docs": [{"id": str(i), "title": f"T{i}", "text": f"text {i} Daei", "summary": f"summary {i}", "extraction": f"span {i}"} for i in range(7)],
    },
    {"question": "Why is the sky blue?", "answer": "Scattering.", "claims": ["c1", "c2", "c3"], "docs": [{"title": "Sky", "text": "Rayleigh scattering."}]},
]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def files(tmp_path):
    return write_alce_files(tmp_path, ITEMS)


@pytest.mark.parametrize("method", ["vanilla", "summ", "snippet", "rerank", "closedbook"])
def test_generate_then_export_round_trip(tmp_path, files, method):
    data, prompt = files
    out = tmp_path / "v1"
    extra = ["--judge", "fake"] if method == "rerank" else []
    r = run("generate", "--method", method, "--dataset", data, "--model", "fake", "--ndoc", 5, "--shot", 2, "--method-arg", f"prompt={prompt}", *extra, "--out", out, "-q", "--no-cache")
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["method"] == f"{method}@{2 if method in ('summ', 'snippet') else 1}" and manifest["config"]["ndoc"] == 5 and manifest["config"]["shot"] == 2
    assert manifest["prompt_files"]["file"]["sha256"] and manifest["seed"] == 0
    records = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    # the fake model echoes the first 40 words of its prompt: the summary it writes for the second question's
    # document says "irrelevant" (the instruction's word), so that document is skipped; its extraction does not
    assert [len(r["passages"]) for r in records] == [5, 0 if method == "summ" else 1]
    assert all(isinstance(r["output"], str) for r in records)

    result = tmp_path / "result.json"
    r = run("export", "alce", out, "--out", result)
    assert r.exit_code == 0, r.output
    exported = json.loads(result.read_text())
    assert exported["args"]["ndoc"] == 5 and exported["args"]["shot"] == 2 and exported["args"]["vericite"]["method"] == f"{method}@{2 if method in ('summ', 'snippet') else 1}"
    asqa, eli5 = exported["data"]
    # what ALCE's eval.py reads: output, docs (title, text), qa_pairs, annotations or answer, claims
    assert asqa["output"] == records[0]["output"] and [d["text"] for d in asqa["docs"]] == [p["text"] for p in records[0]["passages"]]
    assert asqa["qa_pairs"][0]["short_answers"] == ["Daei", "Ali Daei"] and asqa["annotations"][1]["long_answer"] == "Josef Bican."
    assert asqa["answer"] == "Ali Daei and Josef Bican." and eli5["claims"] == ["c1", "c2", "c3"] and eli5["answer"] == "Scattering."
    # read back as a dataset: the same questions, gold fields and the documents the answers were given
    back = read_alce(result)
    first = read_alce(data)
    assert [s.id for s in back] == [s.id for s in first] and [s.question for s in back] == [s.question for s in first]
    assert back[0].qa_pairs == first[0].qa_pairs and back[1].claims == first[1].claims
    assert [p.text for p in back[0].passages] == [p["text"] for p in records[0]["passages"]]
    assert len(back[1].passages) == len(records[1]["passages"])
    assert {k: v for k, v in back[0].meta["alce"].items() if k != "output"} == first[0].meta["alce"]


def test_summ_shows_the_files_summaries(tmp_path, files):
    data, prompt = files
    r = run("generate", "--method", "summ", "-d", data, "-m", "fake", "--ndoc", 2, "--shot", 0, "--method-arg", f"prompt={prompt}", "--limit", 1, "-o", tmp_path / "s", "-q", "--no-cache")
    assert r.exit_code == 0, r.output
    record = json.loads((tmp_path / "s" / "samples.jsonl").read_text().splitlines()[0])
    assert [p["summary"] for p in record["passages"]] == ["summary 0", "summary 1"] and record["shorter"]["written"] == []


def test_flags_of_another_method_and_a_missing_index_are_one_line(tmp_path, files):
    data, _ = files
    r = run("generate", "--method", "kalma", "--ndoc", 3, "-d", "demo", "-m", "fake", "-o", tmp_path / "k", "-q")
    assert r.exit_code != 0 and "ndoc" in r.output and "Traceback" not in r.output
    r = run("generate", "--method", "vanilla", "-d", "demo", "-m", "fake", "-o", tmp_path / "d", "-q")
    assert r.exit_code != 0 and "pass --index DIR" in r.output and "Traceback" not in r.output


def test_export_reports_what_it_leaves_out(tmp_path, files):
    data, prompt = files
    out = tmp_path / "v"
    assert run("generate", "--method", "vanilla", "-d", data, "-m", "fake", "--shot", 0, "--method-arg", f"prompt={prompt}", "-o", out, "-q", "--no-cache").exit_code == 0
    lines = (out / "samples.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["output"] = None
    (out / "samples.jsonl").write_text(lines[0] + "\n" + json.dumps(bad) + "\n{torn\n", encoding="utf-8")
    r = run("export", "alce", out, "--out", tmp_path / "qampari.json")
    assert r.exit_code == 0 and "1 answers in" in r.output
    assert "left out id asqa_eval-2: output is not a string" in r.output and "left out line 3" in r.output
    r = run("export", "alce", tmp_path / "nothing", "--out", tmp_path / "x.json")
    assert r.exit_code != 0 and "is not a run folder" in r.output


@pytest.mark.shared
@pytest.mark.parametrize("method", ["vanilla", "summ", "snippet", "rerank", "closedbook"])
def test_the_issues_command_on_alces_eli5_sample(tmp_path, method):
    from tests.conftest import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "alce" / "prompts").is_dir(), "../shared/data/alce is not beside this checkout")
    eli5 = d / "alce" / "samples" / "eli5_eval_bm25_top10_30q.json"
    extra = ["--judge", "fake"] if method == "rerank" else []
    r = run("generate", "--method", method, "--dataset", eli5, "--model", "fake", "--ndoc", 5, "--shot", 2, *extra, "--limit", 2, "--out", tmp_path / "v1", "-q", "--no-cache")
    assert r.exit_code == 0, r.output
    manifest = json.loads((tmp_path / "v1" / "manifest.json").read_text())
    kind = {"summ": "sum_or_ext", "snippet": "sum_or_ext", "closedbook": "closedbook"}.get(method, "default")
    assert manifest["prompt_files"]["eli5"]["file"].endswith(f"eli5_{kind}.json") and manifest["prompt_files"]["eli5"]["demos"] == [2, 3]
