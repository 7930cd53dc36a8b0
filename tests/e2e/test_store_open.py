"""Issue 9, defects 3 and 7: a store is opened by path in one way (knowledge.store.open_store). Reading creates
nothing and refuses a folder that holds no store; it is read-only, so `kg lookup` works while `generate` reads
the same store; `kg load` creates a store only in a new or empty folder; and a question whose entities the graph
does not know is reported, not silently answered without knowledge."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import DataError
from vericite.knowledge.store import open_store
from vericite.models.fake import FakeBackend

GRAPH = [
    {"id": "Q1", "label": "Ann Smith", "types": ["human"]},
    {"subject": "Q1", "property": "occupation", "value": "painter"},
    {"subject": "Q1", "property": "place of birth", "value": "Leeds"},
]


def fake_nlp(text: str):
    """Stands in for spaCy's NER: every run of two capitalised words is a PERSON."""
    return SimpleNamespace(ents=[SimpleNamespace(text=m, label_="PERSON") for m in re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", text)])


@pytest.fixture()
def store_dir(tmp_path) -> Path:
    g = tmp_path / "graph.jsonl"
    g.write_text("".join(json.dumps(x) + "\n" for x in GRAPH), encoding="utf-8")
    d = tmp_path / "kg"
    r = CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(d)])
    assert r.exit_code == 0, r.output
    return d


def questions(tmp_path: Path, *texts: str) -> Path:
    p = tmp_path / "q.jsonl"
    p.write_text("".join(json.dumps({"id": f"q{i}", "question": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    return p


@pytest.fixture()
def no_spacy(monkeypatch):
    import vericite.knowledge.retrieval as retrieval

    monkeypatch.setattr(retrieval, "load_ner", lambda model=None: fake_nlp)


def test_reading_commands_refuse_a_folder_that_is_not_a_store_and_leave_it_alone(tmp_path):
    runs = tmp_path / "runs"
    (runs / "r1").mkdir(parents=True)
    (runs / "r1" / "samples.jsonl").write_text("{}\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder, what in ((runs, "holds other files"), (empty, "is empty")):
        before = sorted(p.name for p in folder.iterdir())
        for args in (["stats"], ["lookup", "Ann Smith"], ["hop", "Q1"]):
            r = CliRunner().invoke(cli, ["kg", *args, "--store", str(folder)])
            assert r.exit_code == 2 and "Traceback" not in r.output, (args, r.output)
            assert f"{folder} is not a vericite graph store (the folder {what})" in r.output
            assert sorted(p.name for p in folder.iterdir()) == before  # nothing was created there
    r = CliRunner().invoke(cli, ["kg", "stats", "--store", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "no graph store at" in r.output and not (tmp_path / "missing").exists()


def test_generate_refuses_a_store_folder_that_is_not_a_store(tmp_path, no_spacy, monkeypatch):
    import vericite.models

    monkeypatch.setattr(vericite.models, "load_model", lambda name, **kw: FakeBackend())
    runs = tmp_path / "runs"
    (runs / "r1").mkdir(parents=True)
    before = sorted(str(p) for p in runs.rglob("*"))
    r = CliRunner().invoke(cli, ["generate", "-d", str(questions(tmp_path, "Where was Ann Smith born?")), "-m", "fake",
                                 "--store", str(runs), "-o", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 2 and f"{runs} is not a vericite graph store" in r.output, r.output
    assert sorted(str(p) for p in runs.rglob("*")) == before


def test_kg_load_creates_a_store_only_in_a_new_or_empty_folder(tmp_path, store_dir):
    g = tmp_path / "graph.jsonl"
    empty = tmp_path / "empty"
    empty.mkdir()
    r = CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(empty)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(store_dir)])  # into an existing store
    assert r.exit_code == 0, r.output
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    r = CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(other)])
    assert r.exit_code == 2 and "is not a vericite graph store" in r.output and "new or empty folder" in r.output
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    with pytest.raises(DataError, match="is a file"):
        open_store(g)


def test_a_store_opened_for_reading_is_read_only(store_dir):
    with open_store(store_dir) as s:
        assert s.read_only and [e.id for e in s.find_entities("ann smith")] == ["Q1"]
        with pytest.raises(DataError, match="read-only"):
            s.add_triples([])
        with open_store(store_dir) as t:  # readers share the store
            assert t.one_hop("Q1")


HOLD_STORE = textwrap.dedent(
    """
    import re, sys, time
    from types import SimpleNamespace
    import vericite.knowledge.retrieval as retrieval
    from vericite.runs.config import GenerateConfig
    from vericite.runs.loop import generate_run
    from vericite.models.fake import FakeBackend
    from vericite.types import Sample

    retrieval.load_ner = lambda model=None: lambda text: SimpleNamespace(
        ents=[SimpleNamespace(text=m, label_="PERSON") for m in re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", text)])

    calls = 0

    def slow(messages, params):
        global calls
        calls += 1
        if calls == 2:  # one sample written, the store open: wait here to be killed (120 s at most)
            deadline = time.time() + 120
            while time.time() < deadline:
                time.sleep(0.05)
        time.sleep(0.05)
        return "Ann Smith was a painter [Q1, occupation: painter]."

    samples = [Sample(f"s{i:03d}", f"What did Ann Smith do ({i})?", []) for i in range(100)]
    cfg = GenerateConfig(dataset="x", model="fake", store=sys.argv[1])
    generate_run(cfg, sys.argv[2], samples=samples, backend=FakeBackend(replies=slow), progress=False)
    """
)


def test_kg_lookup_works_while_generate_reads_the_store(tmp_path, store_dir):
    out = tmp_path / "r"
    p = subprocess.Popen([sys.executable, "-c", HOLD_STORE, str(store_dir), str(out)], env={**os.environ, "VERICITE_CACHE": str(tmp_path / "cache")})
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not ((out / "samples.jsonl").exists() and (out / "samples.jsonl").read_text().count("\n") >= 1):
            assert p.poll() is None, "generate ended early"
            time.sleep(0.02)
        assert p.poll() is None, "generate should still be running"
        r = CliRunner().invoke(cli, ["kg", "lookup", "Ann Smith", "--store", str(store_dir), "--json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output.splitlines()[0])["id"] == "Q1"
        assert p.poll() is None, "generate should have held the store open during the lookup"
    finally:
        p.kill()
        p.wait()


def test_questions_whose_entities_are_not_found_are_reported(tmp_path, store_dir, no_spacy, monkeypatch):
    import vericite.models

    monkeypatch.setattr(vericite.models, "load_model", lambda name, **kw: FakeBackend())
    data = questions(tmp_path, "Where was Ann Smith born?", "Where was Bob Jones born?", "Where were Cy Young and Ann Smith born?")
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["generate", "-d", str(data), "-m", "fake", "--store", str(store_dir), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    assert "warning: no entity of the graph was found for 1 of 3 questions" in r.output
    records = {x["id"]: x for x in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    assert records["q0"]["retrieval"]["not_found"] == []
    assert records["q1"]["retrieval"]["not_found"] == ["Bob Jones"] and records["q1"]["knowledge"] == []
    assert records["q2"]["retrieval"]["not_found"] == ["Cy Young"]
    summary = json.loads((out / "manifest.json").read_text())["summary"]
    assert summary["retrieval"] == {"questions": 3, "no_entity_found": 1, "mentions_not_found": 2}


def test_kg_lookup_and_hop_print_graph_text_without_terminal_escapes(tmp_path):
    """A label from the graph is data: escape sequences and control characters in it never reach the terminal."""
    LABEL = "Ada Lovelace\x1b[31m\x1b]0;owned\x07"
    g = tmp_path / "hostile.jsonl"
    g.write_text(
        json.dumps({"id": "Q1", "label": LABEL}) + "\n"
        + json.dumps({"subject": "Q1", "property": "occupation\x1b[2J", "value": "mathematician\u202e"}) + "\n",
        encoding="utf-8",
    )
    d = tmp_path / "kg"
    assert CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(d)]).exit_code == 0
    for args in (["lookup", LABEL], ["hop", "Q1"]):
        r = CliRunner().invoke(cli, ["kg", *args, "--store", str(d)])
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "\x07" not in r.output and "\u202e" not in r.output
    assert "Ada Lovelace" in CliRunner().invoke(cli, ["kg", "lookup", LABEL, "--store", str(d)]).output
