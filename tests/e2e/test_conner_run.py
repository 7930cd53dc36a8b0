"""CONNER's configs and experiments through ``vericite run`` with fakes: configs/conner-*.yaml are valid run
configs of registered experiments; conner-selection's levels select knowledge and demonstrations by Q_know and
are scored downstream (answer_em, helpfulness, validity) against their unselected baselines; conner-sources runs
the four knowledge sources; --limit, --resume and bad configs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.bench.experiments.conner import EXPERIMENTS
from vericite.cli.main import cli
from vericite.models.fake import FakeBackend, last_user_message
from vericite.runs.runner import load_run_config

ROOT = Path(__file__).resolve().parents[2]
ROME = "Rome is the capital of Italy. Rome is an old city."
#: what the scripted model writes as knowledge, by the sampling seed: only seed 2 says what the evidence says
BY_SEED = {0: "Paris is a big city. Paris has many towers.", 1: "Bananas are yellow. Bananas grow fast.", 2: ROME}


def reply(messages, params):
    prompt = last_user_message(messages)
    if prompt.startswith("Answer the question in a few words"):  # the reader of validity and answer_em
        knowledge = prompt.split("Knowledge: ", 1)[1].split("\n\nQuestion:", 1)[0]
        return "Rome" if "Rome" in knowledge else "Paris"
    if params.temperature == 0 and "Wikipedia: " + ROME in prompt:  # few-shot: copies a Rome demonstration
        return ROME
    return BY_SEED.get(params.seed % 10, "Nothing is known. Nothing at all.")


@pytest.fixture
def conner_model():
    registry.backends.register("conner-script", lambda arg, *, ctx, **o: FakeBackend("conner-script", replies=reply), replace=True)
    yield "conner-script"
    registry.backends.unregister("conner-script")


@pytest.fixture
def setup(tmp_path):
    """A question set of 8 (gold answer Rome; item 5's reference knowledge is the Rome text) and a BM25 index of
    the evidence."""
    items = [{"id": f"q{i}", "question": f"What is the capital of Italy, part {i}?", "answers": [["Rome"]],
              "meta": {"topic": "Italy", "reference_knowledge": ROME if i == 5 else f"Italy part {i} is unknown. Nobody knows part {i}."}} for i in range(8)]
    data = tmp_path / "qs.jsonl"
    data.write_text("\n".join(json.dumps(x) for x in items) + "\n", encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Rome", "text": "Rome is the capital of Italy. Rome is an old city on the Tiber."}) + "\n"
                      + json.dumps({"id": "d2", "title": "Paris", "text": "Paris is the capital of France."}) + "\n", encoding="utf-8")
    r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"])
    assert r.exit_code == 0, r.output
    return data, tmp_path / "idx"


def config(tmp_path, data, idx, model, experiment, levels, **args):
    method_args = {"index": str(idx), "select_judge": "fake-3way", "select_relevance_model": "fake", "select_evidence_k": 2, **args}
    text = (f"name: t\ndataset: {data}\nmodel: {model}\nmethod: conner-knowledge\nmethod_args: {json.dumps(method_args)}\n"
            f"task: conner\njudge: fake-3way\nlm: {model}\nrelevance_model: fake\nevidence_index: {idx}\nresamples: 20\n"
            f"experiment: {experiment}\nlevels: {json.dumps(levels)}\n")
    p = tmp_path / f"{experiment}.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def run(cfg, out, *extra):
    return CliRunner().invoke(cli, ["run", str(cfg), "-o", str(out), "--no-cache", "-q", *extra])


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("conner-*.yaml")), ids=lambda p: p.name)
def test_every_conner_config_loads(path):
    cfg = load_run_config(str(path), {})
    assert cfg.method == "conner-knowledge" and cfg.task == "conner" and cfg.limit == 50
    exp = registry.create("experiments", cfg.experiment)
    assert set(cfg.levels or ()) <= set(exp.levels)
    for level in cfg.levels or exp.levels:
        gen = exp.generation_at(level, cfg.method_args)
        assert gen["method"] == "conner-knowledge"
        registry.methods.get("conner-knowledge").options_model(**gen["method_args"])  # valid options of the method


def test_levels_set_the_methods_options():
    sel, src = EXPERIMENTS["conner-selection"], EXPERIMENTS["conner-sources"]
    args = {"index": "i", "shot": 4, "pool": 10, "candidates": 3, "top_p": 0.8, "temperature": 0.0}
    assert sel.generation_at(1, args)["method_args"] | {} == {**args, "source": "generate", "select": "demonstrations"}
    three = sel.generation_at(3, args)["method_args"]
    assert three["select"] == "knowledge" and three["shot"] == 0 and three["temperature"] == 1.0 and three["top_p"] == 0.8
    assert sel.generation_at(0, {"index": "i"})["method_args"]["shot"] == 8 and sel.generation_at(0, {"index": "i"})["method_args"]["pool"] == 30
    assert sel.generation_at(2, {"index": "i"})["method_args"]["top_p"] == 0.9
    assert [src.generation_at(n, {"index": "i"})["method_args"]["source"] for n in range(4)] == ["generate", "generate", "retrieve", "reference"]
    assert src.generation_at(1, {})["method_args"]["shot"] == 4 and src.generation_at(0, {"shot": 4})["method_args"]["shot"] == 0


def test_knowledge_selection_against_the_first_candidate(tmp_path, setup, conner_model):
    data, idx = setup
    cfg = config(tmp_path, data, idx, conner_model, "conner-selection", [2, 3], candidates=3, top_p=0.9, temperature=0.7)
    r = run(cfg, tmp_path / "run", "--limit", "3")
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    rows = {row["level"]: row for row in res["experiments"]["conner-selection"]["rows"]}
    assert rows[2]["n"] == rows[3]["n"] == 3  # --limit: the first 3 questions at every level
    # the baseline keeps candidate 0 (Paris: the reader answers Paris), the selection the Rome text
    assert rows[2]["metrics"]["answer_em"]["value"] == 0.0 and rows[3]["metrics"]["answer_em"]["value"] == 1.0
    assert rows[3]["metrics"]["factuality"]["value"] > (rows[2]["metrics"]["factuality"]["value"] or 0)
    assert rows[3]["metrics"]["validity"]["n"] == 3 and rows[3]["metrics"]["validity"]["value"] > rows[2]["metrics"]["validity"]["value"]
    # helpfulness compares with other items' knowledge: here every item kept the same text, so it says so
    assert rows[3]["metrics"]["helpfulness"]["details"]["left_out"] == {"no other item's knowledge to compare with": 3}
    assert rows[3]["generation"]["method_args"]["select"] == "knowledge" and rows[2]["generation"]["method_args"]["select"] == "none"
    recs = [json.loads(x) for x in (tmp_path / "run" / "level-3" / "samples.jsonl").read_text().splitlines()]
    assert all(r["selection"]["chosen"] == 2 and r["output"] == ROME for r in recs)
    base = [json.loads(x) for x in (tmp_path / "run" / "level-2" / "samples.jsonl").read_text().splitlines()]
    assert [b["output"] for b in base] == [r["selection"]["candidates"][0]["knowledge"] for r in recs]
    level = json.loads((tmp_path / "run" / "level-3" / "eval" / "results.json").read_text())
    sel = level["generation"]["selection"]
    assert sel["candidates"] == 3 and sel["top_p"] == 0.9 and sel["temperature"] == 0.7 and sel["seed"] == 0
    assert sel["q_know"]["gamma"]["factuality"] == 0.25 and sel["q_know"]["judge"] == "fake-3way@1"
    assert res["config"]["candidates"] == 3 and res["config"]["gamma"] == [0.25] * 4  # the run's own config, flat
    # the selection against its baseline, item by item
    cmp = CliRunner().invoke(cli, ["compare", str(tmp_path / "run" / "level-2" / "eval"), str(tmp_path / "run" / "level-3" / "eval"), "--format", "json"])
    assert cmp.exit_code == 0, cmp.output
    em = json.loads(cmp.output)["metrics"]["answer_em"]
    assert em["a"] == 0.0 and em["b"] == 1.0 and em["diff"] == 1.0 and em["n_a"] == em["n_b"] == 3
    # resumable: a second run with --resume redoes nothing and gives the same rows
    again = run(cfg, tmp_path / "run", "--limit", "3", "--resume")
    assert again.exit_code == 0, again.output
    res2 = json.loads((tmp_path / "run" / "results.json").read_text())
    assert [row["metrics"]["answer_em"]["value"] for row in res2["experiments"]["conner-selection"]["rows"]] == [0.0, 1.0]


def test_demonstration_selection_against_random_demonstrations(tmp_path, setup, conner_model):
    data, idx = setup
    cfg = config(tmp_path, data, idx, conner_model, "conner-selection", [0, 1], shot=1, pool=8)
    r = run(cfg, tmp_path / "run", "--limit", "2")
    assert r.exit_code == 0, r.output
    man = json.loads((tmp_path / "run" / "level-1" / "manifest.json").read_text())["selection"]
    assert man["select"] == "demonstrations" and man["pool_size"] == 8 and man["shot"] == 1
    assert man["pool"][0]["id"] == "q5" and man["pool"][0]["q_know"] is not None  # the one the evidence supports
    recs = [json.loads(x) for x in (tmp_path / "run" / "level-1" / "samples.jsonl").read_text().splitlines()]
    assert all(rec["demonstrations"] == [man["pool"][0]["id"]] for rec in recs)
    base = json.loads((tmp_path / "run" / "level-0" / "manifest.json").read_text())["selection"]
    assert base["select"] == "none" and {p["id"] for p in base["pool"]} == {p["id"] for p in man["pool"]}
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    rows = res["experiments"]["conner-selection"]["rows"]
    assert [row["level"] for row in rows] == [0, 1]
    assert rows[1]["metrics"]["answer_em"]["value"] == 1.0  # the model copies the Rome demonstration
    if base["pool"][0]["id"] != "q5":  # the random first demonstration is not the Rome one
        assert rows[0]["metrics"]["answer_em"]["value"] == 0.0


def test_the_four_sources(tmp_path, setup, conner_model):
    data, idx = setup
    cfg = config(tmp_path, data, idx, conner_model, "conner-sources", [0, 1, 2, 3], shot=1)
    r = run(cfg, tmp_path / "run", "--limit", "2")
    assert r.exit_code == 0, r.output
    first = {lv: json.loads((tmp_path / "run" / f"level-{lv}" / "samples.jsonl").read_text().splitlines()[0]) for lv in range(4)}
    assert [first[lv]["knowledge_source"] for lv in range(4)] == ["generate", "generate", "retrieve", "reference"]
    assert "demonstrations" in first[1] and first[2]["output"].startswith("Rome is the capital") and first[3]["output"] == "Italy part 0 is unknown. Nobody knows part 0."
    assert "run" in r.output or "conner-sources" in r.output


@pytest.mark.parametrize("change, message", [
    ({"experiment": "conner-selection", "drop_index": True}, "needs evidence"),
    ({"experiment": "conner-selection", "levels": [7]}, "levels are 0"),
    ({"experiment": "conner-selection", "gamma": [1, 2]}, "gamma"),
    ({"experiment": "conner-sources", "candidates": 0}, "candidates"),
])
def test_bad_configs_are_one_line(tmp_path, setup, conner_model, change, message):
    data, idx = setup
    args = {k: v for k, v in change.items() if k not in ("experiment", "levels", "drop_index")}
    cfg = config(tmp_path, data, idx, conner_model, change["experiment"], change.get("levels", [0, 1]), **args)
    if change.get("drop_index"):
        cfg.write_text(re.sub(r'"index": "[^"]*", ', "", cfg.read_text()), encoding="utf-8")
    r = run(cfg, tmp_path / "run", "--limit", "2")
    assert r.exit_code != 0 and message in r.output and "Traceback" not in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output


def test_a_bad_level_is_refused_before_any_level_runs(tmp_path, setup, conner_model):
    data, idx = setup
    cfg = config(tmp_path, data, idx, conner_model, "conner-sources", [0, 2])
    cfg.write_text(re.sub(r'"index": "[^"]*", ', "", cfg.read_text()), encoding="utf-8")  # level 2 needs it
    r = run(cfg, tmp_path / "run", "--limit", "2")
    assert r.exit_code != 0 and "level 2 (BM25 top 1) needs an index" in r.output, r.output
    assert not (tmp_path / "run" / "level-0").exists()  # nothing was generated


def test_an_evidence_index_rebuilt_in_place_is_evaluated_again_on_resume(tmp_path, setup, conner_model):
    # the level's evaluation checkpoint records what evidence_index holds (not only its path): a run resumed over an
    # index rebuilt from other documents evaluates the level again, as for other changed evaluation settings, rather
    # than reading back (or going on from) scores made against the old documents
    import shutil

    data, idx = setup
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"name: t\ndataset: {data}\nmodel: {conner_model}\nmethod: conner-knowledge\nmethod_args: {{\"source\": \"generate\"}}\n"
                   f"task: conner\njudge: fake-3way\nlm: {conner_model}\nrelevance_model: fake\nevidence_index: {idx}\nresamples: 20\n", encoding="utf-8")
    assert run(cfg, tmp_path / "run", "--limit", "2").exit_code == 0
    first = json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]["factuality"]
    head = json.loads((tmp_path / "run" / "level-base" / "eval" / ".evaluate-answers.jsonl").read_text().splitlines()[0])
    assert head["index_corpus"]["passages"] == 2

    corpus = tmp_path / "other.jsonl"
    corpus.write_text(json.dumps({"id": "d1", "title": "Bananas", "text": "Bananas are yellow. Bananas grow fast."}) + "\n", encoding="utf-8")
    shutil.rmtree(idx)
    assert CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(idx), "-q"]).exit_code == 0
    r = run(cfg, tmp_path / "run", "--limit", "2", "--resume")
    assert r.exit_code == 0, r.output
    resumed = json.loads((tmp_path / "run" / "results.json").read_text())["metrics"]["factuality"]
    assert run(cfg, tmp_path / "fresh", "--limit", "2").exit_code == 0  # the same run from scratch on the new index
    fresh = json.loads((tmp_path / "fresh" / "results.json").read_text())["metrics"]["factuality"]
    assert resumed == fresh and resumed != first
