"""VTG-KG and ``--k`` (audit12 GAP 2): k bounds documents, not a memory of triples, which starts with all of KaLMA's
retrieval as the recorded runs had it. ``--k`` given with ``--store`` is said in one line on stderr, naming the
opt-in ``--method-arg kg_k=N`` (the top N re-ranked triples in D_L), which is recorded only when set, so a run
without it (and its ``--resume``) is what it was. A folder given it keeps it on ``--resume`` (``generate`` and
``run``) when it is left out, as VTG's other kept options; another value is refused in one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.generate import VTG_K_WITH_STORE
from vericite.cli.main import cli

from tests.e2e.test_store_open import GRAPH, fake_nlp, questions
from tests.support.vtg_cli import samples


@pytest.fixture()
def store(tmp_path, monkeypatch):
    import vericite.knowledge.retrieval as retrieval

    monkeypatch.setattr(retrieval, "load_ner", lambda model=None: fake_nlp)
    g = tmp_path / "graph.jsonl"
    g.write_text("".join(json.dumps(x) + "\n" for x in GRAPH), encoding="utf-8")
    r = CliRunner().invoke(cli, ["kg", "load", str(g), "--store", str(tmp_path / "kg")])
    assert r.exit_code == 0, r.output
    return tmp_path / "kg"


def generate(tmp_path, store, out, *extra):
    q = questions(tmp_path, "Who is Ann Smith?", "Where was Ann Smith born?")
    args = ["generate", "--method", "vtg", "--dataset", str(q), "--store", str(store), "--model", "fake", "--judge", "fake",
            "--trials", "1", "--out", str(tmp_path / out), "-q", "--no-cache", *extra]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r


def test_k_with_a_store_is_said_and_kg_k_bounds_the_triples(tmp_path, store):
    said = generate(tmp_path, store, "k", "--k", "1")
    assert said.stderr.count(VTG_K_WITH_STORE) == 1 and "kg_k=N" in said.stderr
    plain = generate(tmp_path, store, "plain")
    assert "kg_k" not in plain.stderr
    text = (tmp_path / "plain" / "manifest.json").read_text()
    assert "kg_k" not in text and json.loads(text)["config"]["k"] == 5  # as the recorded runs' manifests
    long_term = [json.loads(l)["vtg"]["sentences"][0]["trials"][0]["memory"]["long"] for l in (tmp_path / "k" / "samples.jsonl").read_text().splitlines()]
    assert long_term == [4, 4]  # --k 1 is not applied: all of KaLMA's retrieval for Ann Smith

    bounded = generate(tmp_path, store, "kg1", "--k", "1", "--method-arg", "kg_k=1")
    assert VTG_K_WITH_STORE not in bounded.stderr
    manifest = json.loads((tmp_path / "kg1" / "manifest.json").read_text())
    assert manifest["config"]["kg_k"] == 1 and manifest["kg_k"] == 1
    long_term = [json.loads(l)["vtg"]["sentences"][0]["trials"][0]["memory"]["long"] for l in (tmp_path / "kg1" / "samples.jsonl").read_text().splitlines()]
    assert long_term == [1, 1]


def test_a_run_written_before_kg_k_resumes(tmp_path, store):
    generate(tmp_path, store, "r")
    path = tmp_path / "r" / "manifest.json"
    m = json.loads(path.read_text())
    assert "kg_k" not in m["config"]
    generate(tmp_path, store, "r", "--resume")  # not refused: the same run
    r = CliRunner().invoke(cli, ["generate", "--method", "vtg", "--dataset", str(tmp_path / "q.jsonl"), "--store", str(store), "--model", "fake",
                                 "--judge", "fake", "--trials", "1", "--out", str(tmp_path / "r"), "-q", "--no-cache", "--resume", "--method-arg", "kg_k=1"])  # fmt: skip
    assert r.exit_code != 0 and "kg_k" in r.output and "Traceback" not in r.output  # another run: refused in one line


def test_run_with_k_and_a_store_in_its_config_says_the_same_line(tmp_path, store, monkeypatch):
    monkeypatch.chdir(tmp_path)
    questions(tmp_path, "Who is Ann Smith?")

    def run(name, args):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: {name}\ndataset: q.jsonl\nmodel: fake\njudge: fake\ntask: alce\nresamples: 20\nmethod: vtg\n"
            f"method_args: {{{args}, trials: 1, verifier_judge: fake, store: {json.dumps(str(store))}}}\n", encoding="utf-8")
        r = CliRunner().invoke(cli, ["run", f"{name}.yaml", "--out", name, "-q", "--no-cache"])
        assert r.exit_code == 0, r.output
        return r.stderr

    assert run("k", "k: 1").count(VTG_K_WITH_STORE) == 1
    assert VTG_K_WITH_STORE not in run("kg", "k: 1, kg_k: 1")
    assert VTG_K_WITH_STORE not in run("plain", "queries: 2")


def test_run_says_the_line_when_an_experiments_levels_set_k_with_a_store_once(tmp_path, store, monkeypatch):
    # only the config's own method_args were checked: an experiment whose levels set k (with the config's store) ran
    # without the line; levels that set k at two levels say it once, and levels that set kg_k too say nothing
    from vericite import registry
    from vericite.bench.experiments.base import Experiment, Transformed, factory

    monkeypatch.chdir(tmp_path)
    questions(tmp_path, "Who is Ann Smith?")

    def sweep(name, extra):
        exp = Experiment(name=name, x_label="k", levels=(1, 2), apply=lambda s, level, seed: Transformed(list(s)),
                         generation=lambda level, args: {"method": "vtg", "method_args": {**args, "k": int(level), **extra}})  # fmt: skip
        registry.experiments.register(name, factory(exp), replace=True)
        (tmp_path / f"{name}.yaml").write_text(
            f"name: {name}\ndataset: q.jsonl\nmodel: fake\njudge: fake\ntask: alce\nresamples: 20\nmethod: vtg\nexperiment: {name}\n"
            f"method_args: {{trials: 1, verifier_judge: fake, store: {json.dumps(str(store))}}}\n", encoding="utf-8")
        try:
            r = CliRunner().invoke(cli, ["run", f"{name}.yaml", "--out", name, "-q", "--no-cache"])
        finally:
            registry.experiments.unregister(name)
        assert r.exit_code == 0, r.output
        return r.stderr

    assert sweep("k-sweep", {}).count(VTG_K_WITH_STORE) == 1
    assert VTG_K_WITH_STORE not in sweep("kg-sweep", {"kg_k": 1})


def test_a_folder_given_kg_k_resumes_with_it_when_it_is_left_out(tmp_path, store):
    # kg_k was refused when --resume left it out, while VTG's other kept options were taken from the folder
    generate(tmp_path, store, "all", "--method-arg", "kg_k=1")
    generate(tmp_path, store, "part", "--method-arg", "kg_k=1", "--limit", "1")
    r = generate(tmp_path, store, "part", "--resume")
    assert "with the folder's kg_k=1" in r.stderr and "Traceback" not in r.output
    assert samples(tmp_path / "part") == samples(tmp_path / "all")
    manifest = json.loads((tmp_path / "part" / "manifest.json").read_text())
    assert manifest["config"]["kg_k"] == 1 and manifest["kg_k"] == 1
    generate(tmp_path, store, "part", "--resume", "--method-arg", "kg_k=1")  # given as it was: the same run
    before = (tmp_path / "part" / "manifest.json").read_bytes()
    r = CliRunner().invoke(cli, ["generate", "--method", "vtg", "--dataset", str(tmp_path / "q.jsonl"), "--store", str(store), "--model", "fake",
                                 "--judge", "fake", "--trials", "1", "--out", str(tmp_path / "part"), "-q", "--no-cache", "--resume", "--method-arg", "kg_k=2"])  # fmt: skip
    assert r.exit_code != 0 and "kg_k: 1 -> 2" in r.output and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
    assert (tmp_path / "part" / "manifest.json").read_bytes() == before


def test_run_resumes_a_config_that_now_leaves_kg_k_out(tmp_path, store, monkeypatch):
    monkeypatch.chdir(tmp_path)
    questions(tmp_path, "Who is Ann Smith?", "Where was Ann Smith born?")

    def run(name, args, *extra):
        (tmp_path / f"{name}.yaml").write_text(
            f"name: kg\ndataset: q.jsonl\nmodel: fake\njudge: fake\ntask: alce\nresamples: 20\nmethod: vtg\n"
            f"method_args: {{{args}trials: 1, verifier_judge: fake, store: {json.dumps(str(store))}}}\n", encoding="utf-8")
        r = CliRunner().invoke(cli, ["run", f"{name}.yaml", "--no-cache", "-q", *extra])
        assert r.exit_code == 0, r.output
        return r

    run("given", "kg_k: 1, ", "--out", "all")
    run("given", "kg_k: 1, ", "--out", "part", "--limit", "1")
    r = run("plain", "", "--out", "part", "--resume")
    assert "with the folder's kg_k=1" in r.stderr
    assert samples(tmp_path / "part") == samples(tmp_path / "all")


def test_a_memory_of_triples_records_kalmas_parser_and_a_folder_that_named_alces_resumes(tmp_path, store):
    generate(tmp_path, store, "p")
    path = tmp_path / "p" / "manifest.json"
    m = json.loads(path.read_text())
    records = [json.loads(l) for l in (tmp_path / "p" / "samples.jsonl").read_text().splitlines()]
    assert m["parser"] == "kalma-triple@1" and {r["answer"]["parser"] for r in records} == {"kalma-triple@1"}
    m["parser"] = "alce-citation@1"  # what runs before the fix recorded for a store's memory of triples
    path.write_text(json.dumps(m), encoding="utf-8")
    generate(tmp_path, store, "p", "--resume")  # the same run: not refused
