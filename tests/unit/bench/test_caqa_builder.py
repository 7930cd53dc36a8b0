"""The CAQA builder on a hand-made graph: four classes and four complexity levels, the edits' rules, splits by
query, determinism, resumption, one writer, LLM verbalisation with a fake model and its checks, bad graphs."""

from __future__ import annotations

import json

import pytest

from tests.support.caqa import verbaliser, write_pool
from vericite.bench.builders.caqa.build import CaqaConfig, build_caqa, side_paths
from vericite.bench.builders.caqa.card import check_items
from vericite.bench.builders.caqa.graph import FactGraph, ground
from vericite.bench.builders.caqa.queries import CLASSES, COMPLEXITIES, mentions
from vericite.errors import VericiteError
from vericite.knowledge.loaders import load_into_store
from vericite.knowledge.store import OxigraphStore
from vericite.outputs import PathLock
from vericite.types import Sample


def items_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def pool(tmp_path):
    return write_pool(tmp_path)


def cfg(pool, out, **kw):
    return CaqaConfig(pool=str(pool), out=str(out), **{"n": 120, "verbalise": "template", "seed": 3, **kw})


def test_template_build_has_every_class_and_complexity(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    log = build_caqa(cfg(pool, out), progress=False)
    items = items_of(out)
    assert log["status"] == "complete" and 120 <= len(items) <= 123 and log["items"] == len(items)
    assert {i["label"] for i in items} == set(CLASSES)
    assert {i["complexity"] for i in items} == set(COMPLEXITIES)
    for it in items:
        Sample.from_dict(it)  # reads as a sample too
        answers = it["meta"]["answer_entities"]
        assert mentions(it["answer"], answers[0])
        if it["label"] == "supportive":
            assert all(mentions(it["citation"], a) for a in answers)
        if it["label"] == "irrelevant":
            assert not any(mentions(it["citation"], a) for a in answers)
            supp = next(x for x in items if x["meta"]["query_index"] == it["meta"]["query_index"] and x["label"] == "supportive")
            assert not {t["property"] for t in it["subgraph"]} & {t["property"] for t in supp["subgraph"]}
        if it["label"] == "contradictory":
            rep = it["meta"]["replaced"]
            assert not mentions(it["citation"], rep["from"]) and mentions(it["citation"], rep["to"])
            assert rep["to"] not in it["meta"]["all_answers"]
        if it["label"] == "insufficient":
            supp = next(x for x in items if x["meta"]["query_index"] == it["meta"]["query_index"] and x["label"] == "supportive")
            assert 0 < len(it["subgraph"]) < len(supp["subgraph"])
    assert not any(i["label"] == "insufficient" and i["complexity"] == "single" for i in items)
    # a question is in one split only; ids are unique
    by_q: dict[str, set] = {}
    for it in items:
        by_q.setdefault(it["question"], set()).add(it["split"])
    assert all(len(s) == 1 for s in by_q.values())
    assert len({i["id"] for i in items}) == len(items)
    assert check_items(items)["ok"]
    # the card has Table 4; the log counts values resolved to entities
    card = side_paths(out)["card"].read_text(encoding="utf-8")
    assert "Counts (Table 4)" in card and "| class | supportive (Sup.)" in card
    assert log["graph"]["values"]["resolved"] >= 5 and log["graph"]["union_groups"] >= 1


def test_union_and_path_queries_have_their_shape(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    build_caqa(cfg(pool, out), progress=False)
    items = [i for i in items_of(out) if i["label"] == "supportive"]
    union = next(i for i in items if i["complexity"] == "union")
    assert len(union["subgraph"]) == 2 and union["subgraph"][0]["subject"] != union["subgraph"][1]["subject"]
    assert union["subgraph"][0]["subject_label"] == union["subgraph"][1]["subject_label"]
    conc = next(i for i in items if i["complexity"] == "concatenation")
    hop, ans = conc["subgraph"][0], conc["subgraph"][1]
    assert hop["value"] == ans["subject_label"] and conc["query"]["atoms"][1]["s"] == "?v"


def test_build_is_deterministic_and_resumes_to_the_same_file(pool, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    build_caqa(cfg(pool, a), progress=False)
    build_caqa(cfg(pool, b), progress=False, stop_after=4)
    assert len(items_of(b)) < len(items_of(a))
    # a crash in the middle of a query's write: a torn line and a query cut short
    lines = b.read_text(encoding="utf-8").splitlines(keepends=True)
    b.write_text("".join(lines[:-1]) + lines[-1][:10], encoding="utf-8")
    log = build_caqa(cfg(pool, b), progress=False, resume=True)
    assert log["status"] == "complete" and log["resumed"]
    assert a.read_text(encoding="utf-8") == b.read_text(encoding="utf-8")


def test_refuses_overwrite_other_config_and_a_second_writer(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    build_caqa(cfg(pool, out, n=10), progress=False)
    with pytest.raises(VericiteError, match="already exists"):
        build_caqa(cfg(pool, out, n=10), progress=False)
    with pytest.raises(VericiteError, match="configuration differs"):
        build_caqa(cfg(pool, out, n=10, seed=4), progress=False, resume=True)
    with PathLock(side_paths(out)["lock"], "x"):
        with pytest.raises(VericiteError, match="in use"):
            build_caqa(cfg(pool, out, n=20), progress=False, resume=True)


def test_llm_mode_uses_the_papers_prompts_and_records_the_mode(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    fake = verbaliser()
    log = build_caqa(cfg(pool, out, n=30, verbalise="llm", model="fake"), progress=False, generator=fake)
    items = items_of(out)
    assert log["verbalisation"]["mode"] == "llm" and log["verbalisation"]["model"]["name"] == "fake:caqa"
    assert {i["meta"]["verbalisation"] for i in items} == {"llm"}
    prompts = [m[-1]["content"] for m in fake.prompts]
    assert any("convert a specific subgraph" in p for p in prompts)
    assert any("comprehensive answer statement" in p for p in prompts)
    if any(i["query"]["extension"] != "none" for i in items):
        assert any("generate an extended question" in p for p in prompts)
        ext = next(i for i in items if i["query"]["extension"] != "none")
        assert ext["question"].endswith("given the extra facts?")
    assert all(i["answer"].startswith("The answer is") for i in items)


def test_llm_that_drops_answers_loses_supportive_items_counted(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    log = build_caqa(cfg(pool, out, n=20, verbalise="llm", model="fake", max_queries=30), progress=False, generator=verbaliser(drop_answers=True))
    items = items_of(out)
    assert not any(i["label"] == "supportive" for i in items)
    assert log["item_drops"].get("supportive_citation_lacks_answer", 0) >= 1


def test_answer_statement_without_the_answer_falls_back_to_the_template_recorded(pool, tmp_path):
    out = tmp_path / "c.jsonl"
    log = build_caqa(cfg(pool, out, n=8, verbalise="llm", model="fake"), progress=False, generator=verbaliser(vague_statements=True))
    items = items_of(out)
    assert items and all(i["meta"]["answer_statement"] == "template" for i in items)
    assert all(mentions(i["answer"], i["meta"]["answer_entities"][0]) for i in items)
    assert log["item_drops"]["answer_statement_lacks_answer_template_used"] >= 1


def test_graph_without_paths_or_namesakes_builds_and_counts(tmp_path):
    pool = tmp_path / "flat.json"
    people = [{"qid": f"Q{i}", "name": f"Person {i}", "occupation": ["painter", "banker"][i % 2], "place of birth": f"Town {i % 3}"} for i in range(1, 9)]
    pool.write_text(json.dumps([["q", [p]] for p in people]), encoding="utf-8")
    out = tmp_path / "c.jsonl"
    log = build_caqa(cfg(pool, out, n=30, max_queries=80), progress=False)
    items = items_of(out)
    assert items and not any(i["complexity"] in ("union", "concatenation") for i in items)
    assert log["graph"]["two_hop_starts"] == 0 and log["graph"]["union_groups"] == 0
    assert log["query_drops"].get("no_namesakes_for_union", 0) >= 1


def test_a_graph_with_nothing_to_ask_is_one_error(tmp_path):
    pool = tmp_path / "empty.json"
    pool.write_text(json.dumps([["q", [{"qid": "Q1", "name": "Nobody", "instance of": "human"}]]]), encoding="utf-8")
    with pytest.raises(VericiteError, match="no fact to ask about"):
        build_caqa(cfg(pool, tmp_path / "c.jsonl"), progress=False)


def test_grounding_binds_values_it_never_writes_into_the_query(pool):
    store = OxigraphStore()
    load_into_store(pool, store)
    g = FactGraph(store, "pool")
    f = next(f for e in g.entities for f in g.facts[e] if "{at}" in f.value)
    rows = ground(g, [{"s": "?x", "r": f.relation, "pred": f.pred, "o": f.value, "obj": f.obj}, {"s": "?x", "r": "place of birth", "pred": next(x.pred for x in g.facts[f.subject] if x.relation == "place of birth"), "o": "?a"}])
    assert [r["?a"] for r in rows] == ["Bristol"]


def test_queries_that_ground_to_nothing_are_counted_not_fatal(pool, tmp_path, monkeypatch):
    import vericite.bench.builders.caqa.queries as Q

    monkeypatch.setattr(Q, "ground", lambda *a, **k: [])
    log = build_caqa(cfg(pool, tmp_path / "c.jsonl", n=10, max_queries=15), progress=False)
    assert log["status"] == "exhausted" and log["items"] == 0
    assert log["timing"]["grounded_to_nothing"] >= 10 and sum(log["query_drops"].values()) == 15
