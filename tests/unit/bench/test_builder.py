"""The BioKaLMA dataset builder (vericite build biokalma) with the deterministic fake model: Eq. 1 on a hand
example, templates, pair selection and name disambiguation on a hand-made pool, the extension and question checks,
resume after an interruption, bad input, stats, annotation, and the CLI."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.support.builder import FIRST_PICK, cfg, fake, hand_pool, person
from tests.support.paths import REPO, load_script
from vericite.bench.builders.biokalma.annotation import export_annotation, import_annotation, table2
from vericite.bench.builders.biokalma.build import BuildConfig, build_dataset, side_paths
from vericite.bench.builders.biokalma.card import check_entries, dataset_stats
from vericite.bench.builders.biokalma.evolve import refers_to
from vericite.bench.builders.biokalma.graph import GraphPool
from vericite.bench.builders.biokalma.pool import is_complete_name, is_malformed_value, select_pairs
from vericite.bench.builders.biokalma.prompts import read_question, read_sentence
from vericite.bench.builders.biokalma.scoring import (
    Candidate,
    PerplexityScorer,
    perplexity,
    property_pos,
    score_candidates,
    specificity,
    template_sentence,
)
from vericite.cli.main import cli
from vericite.stats import softmax
from vericite.datasets import load_samples, read_samples_jsonl
from vericite.errors import DataError, VericiteError
from vericite.models.fake import FakeBackend
from vericite.types import Triple



# ---------------------------------------------------------------------------------------------- Eq. 1


def test_score_hand_example():
    # N = 100 triples; property a occurs 10 times, b twice; perplexities 10 and 20
    assert specificity(10, 100) == pytest.approx(math.log(20))
    assert specificity(2, 100) == pytest.approx(math.log(100))
    sm = softmax([0.1, 0.05])
    e1, e2 = math.exp(0.1), math.exp(0.05)
    assert sm == pytest.approx([e1 / (e1 + e2), e2 / (e1 + e2)])
    ta, tb = Triple("Q1", "a", "x"), Triple("Q1", "b", "y")
    cands = [Candidate(ta, 10, specificity(10, 100), "s1"), Candidate(tb, 2, specificity(2, 100), "s2")]
    ranked = score_candidates(cands, [10.0, 20.0], alpha=0.5)
    assert ranked[0].triple == tb  # rarer property wins despite a higher perplexity
    assert ranked[0].score == pytest.approx(0.5 * math.log(100) + 0.5 * e2 / (e1 + e2))
    assert ranked[1].score == pytest.approx(0.5 * math.log(20) + 0.5 * e1 / (e1 + e2))
    # alpha = 0: coherence alone, the lower perplexity wins
    ranked = score_candidates([Candidate(ta, 10, math.log(20), "s1"), Candidate(tb, 2, math.log(100), "s2")], [10.0, 20.0], alpha=0.0)
    assert ranked[0].triple == ta and ranked[0].score == pytest.approx(e1 / (e1 + e2))


def test_perplexity_and_softmax_edges():
    assert perplexity([-1.0, -1.0]) == pytest.approx(math.e)
    assert perplexity([]) == math.inf
    assert perplexity([-800.0]) == math.inf  # exp(800) overflows a float: infinite, not an OverflowError
    assert softmax([]) == []
    assert sum(softmax([1000.0, 999.0, -5.0])) == pytest.approx(1.0)  # stable for large inputs
    # an infinite perplexity gives 1/ppl = 0, not an error
    c = score_candidates([Candidate(Triple("Q", "p", "v"), 1, 1.0, "s")], [math.inf], 0.5)
    assert c[0].coherence == pytest.approx(1.0)


def test_templates_by_part_of_speech():
    assert property_pos("place of birth") == "noun"
    assert property_pos("date_of_birth") == "noun"
    assert property_pos("participated in") == "verb"
    assert property_pos("member of") == "preposition"
    assert property_pos("influenced by") == "preposition"
    assert property_pos("some unknown thing of") == "preposition"
    t = Triple("Q212657", "place of birth", "Rome", "Artemisia Gentileschi")
    assert template_sentence(t) == "Artemisia Gentileschi's place of birth is Rome."
    assert template_sentence(Triple("Q1", "participated in", "the Games", "A B")) == "A B participated in the Games."
    assert template_sentence(Triple("Q1", "member of", "the Academy", "A B")) == "A B is member of the Academy."


def test_batched_and_single_scoring_agree():
    fb = FakeBackend()
    single, batch = PerplexityScorer(fb, "single"), PerplexityScorer(fb, "batch")
    assert batch.mode == "batch"
    assert PerplexityScorer(fb, "prefix").mode == "batch"  # the fake cannot share a prefix: falls back
    sufs = ["A's father is B.", "A's occupation is painter.", "A is member of the Academy."]
    before = fb.calls["logprobs"]
    a = single.perplexities("A paragraph about A.", sufs)
    assert fb.calls["logprobs"] - before == 3
    b = batch.perplexities("A paragraph about A.", sufs)
    assert fb.calls["logprobs"] - before == 4  # one call for the whole round
    assert a == pytest.approx(b)


# ---------------------------------------------------------------------------------------------- pairs


def test_pair_selection_and_disambiguation(pool_file: Path):
    assert is_complete_name("Artemisia Gentileschi") and not is_complete_name("Plato")
    assert is_malformed_value("Q108130003") and is_malformed_value("999d999c999efcee9999b9eb99999999")
    assert not is_malformed_value("Q-ship") and not is_malformed_value("1871-11-01")
    pool = GraphPool.from_file(pool_file)
    sel = select_pairs(pool, min_candidates=1)
    got = {(p.a_label, p.relation, p.b_label, p.b, p.resolved_by) for p in sel.pairs}
    assert got == {
        ("John Smith", "father", "Robert Smith", "Q2", "unique label"),
        ("Peter Brown", "father", "William Brown", "Q7", "reverse edge"),
    }
    assert sel.dropped == Counter(
        {
            "incomplete_name_subject": 1,  # Plato
            "value_not_in_graph": 1,  # Ann Jones
            "ambiguous_name": 1,  # Henry Green x2, no edge back
            "sex_contradicts_relation": 1,  # mother Tom White
            "dates_contradict_relation": 1,  # father born after the child
            "incomplete_name_value": 1,  # Zeus
            "duplicate_pair": 2,  # the child edges back of both pairs
        }
    )
    john = next(p for p in sel.pairs if p.a == "Q1")
    assert john.reverse is not None and john.reverse.subject == "Q2"
    counts, n = pool.relation_counts()
    assert counts["occupation"] == 16 and "name" not in counts and n == sum(counts.values())
    pool.close()


def test_no_eligible_pairs_is_a_clear_error(tmp_path: Path):
    p = tmp_path / "lonely.json"
    p.write_text(json.dumps([["q", [person("Q1", "Jane Doe", occupation="painter")]]]), encoding="utf-8")
    with pytest.raises(VericiteError, match="no eligible pair of people"):
        build_dataset(cfg(p, tmp_path / "d.jsonl"), progress=False, generator=fake())
    r = CliRunner().invoke(cli, ["build", "biokalma", "--pool", str(p), "--out", str(tmp_path / "e.jsonl"), "--model", "fake", "-q"])
    assert r.exit_code != 0
    assert "no eligible pair of people" in r.output and "Traceback" not in r.output


# ---------------------------------------------------------------------------------------------- replies


def test_reading_replies():
    assert read_sentence("Generated Answer: He was born in Rome.").text == "He was born in Rome."
    assert read_sentence("").problem == "empty_reply"
    assert read_sentence("```python\nx = 1\n```").problem == "code_reply"
    assert read_sentence("Was he born in Rome?").problem == "not_a_statement"
    para = "Ann Lee was a painter."
    assert read_sentence("Ann Lee was a painter. She lived in Rome [Q1, residence: Rome].", para).text == "She lived in Rome."
    assert read_sentence("Ann Lee was a painter.", para).problem == "no_new_sentence"
    assert read_question("Generated Question: Who was Ann Lee? Extra").text == "Who was Ann Lee?"
    assert read_question("Tell me about Ann Lee.").problem == "no_question_mark"
    assert read_question("Who?").problem == "too_short"
    assert refers_to("She won it.", "Romy Schneider") and not refers_to("César Chávez won it.", "Romy Schneider")


# ---------------------------------------------------------------------------------------------- building


def test_build_entries_readable_by_generate(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    log = build_dataset(cfg(pool_file, out), progress=False, generator=fake())
    assert log["status"] == "complete" and log["entries"] == 2
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    for e in entries:
        keys = {(t["subject"], t["property"], t["value"]) for t in e["knowledge"]}
        assert all((t["subject"], t["property"], t["value"]) in keys for t in e["gold"])
        assert len(e["gold"]) == 4  # round 1: the edge and its reverse; rounds 2 and 3: one triple each
        assert e["question"].endswith("?") and e["question_general"].endswith("?")
        assert e["meta"]["relation"] == "father" and e["meta"]["iterations"] == 3
        assert set(e["meta"]["timing"]) >= {"scoring_s", "extension_s", "questions_s", "total_s"}
        r2 = e["trace"][1]
        # the trace's scores are Eq. 1 of its own numbers
        inv = [1 / c["perplexity"] for c in r2["candidates"]]
        sm = softmax(inv)
        for c, s in zip(r2["candidates"], sm):
            assert c["score"] == pytest.approx(0.5 * c["specificity"] + 0.5 * s, abs=1e-4)
        assert r2["chosen"]["property"] == r2["candidates"][0]["property"]
        assert r2["chosen"]["property"] not in ("name", "given name", "instance of")
        # with alpha = 0.5 the specificity term dominates: the chosen property is one of the rarest in the graph
        assert r2["candidates"][0]["count"] == min(c["count"] for c in r2["candidates"])
    samples = list(read_samples_jsonl(out))
    assert samples[0].gold and samples[0].knowledge and samples[0].gold_entities
    general = load_samples(str(out), phrasing="general")
    assert [s.question for s in general] == [e["question_general"] for e in entries]
    assert side_paths(out)["card"].read_text().count("## Deviations from the paper") == 1
    assert check_entries(entries)["ok"]


def test_unsupported_extension_is_retried_then_skipped(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    log = build_dataset(cfg(pool_file, out, n=1), progress=False, generator=fake(bad_props=(FIRST_PICK,)))
    e = json.loads(out.read_text().splitlines()[0])
    r2 = e["trace"][1]
    assert [a["status"] for a in r2["attempts"]] == ["unsupported", "unsupported", "ok"]
    assert [a["attempt"] for a in r2["attempts"]] == [0, 1, 0]  # retried once, then the next-best triple
    assert r2["chosen"]["property"] != FIRST_PICK
    assert FIRST_PICK not in {t["property"] for t in e["gold"]}
    assert log["events"]["extension_unsupported"] == 2 and log["events"]["triple_skipped"] == 1


def test_a_sentence_that_rewrites_the_last_one_replaces_it(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    log = build_dataset(cfg(pool_file, out, n=1), progress=False, generator=fake(grow=True))
    e = json.loads(out.read_text().splitlines()[0])
    assert log["events"]["sentence_rewritten"] == 2
    assert e["trace"][2]["replaces"] == e["trace"][1]["sentence"]
    assert e["paragraph"] == e["trace"][2]["sentence"]  # one sentence holding all four triples, not three repeats
    assert len(e["gold"]) == 4 and e["paragraph_cited"].count("[Q") == 4


def test_reply_that_ignores_the_format(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    log = build_dataset(cfg(pool_file, out, n=1, candidates_per_round=1), progress=False, generator=fake(code_props=(FIRST_PICK,)))
    e = json.loads(out.read_text().splitlines()[0])
    r2 = e["trace"][1]
    assert [a["status"] for a in r2["attempts"]] == ["code_reply", "code_reply"]
    assert r2["status"] == "no_sentence"  # the round failed; the entry went on
    assert log["events"]["extension_code_reply"] == 2 and log["events"]["round_failed"] == 1
    assert e["meta"]["rounds_ok"] == 2


def test_questions_without_question_mark_skip_the_pair(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    log = build_dataset(cfg(pool_file, out), progress=False, generator=fake(no_question=True))
    assert log["entries"] == 0 and log["status"] == "exhausted"
    assert log["skipped"] == {"question_format_general": 2}
    assert log["events"]["question_no_question_mark"] == 4  # two pairs, tried and retried
    skipped = [json.loads(x) for x in side_paths(out)["skipped"].read_text().splitlines()]
    assert {s["reason"] for s in skipped} == {"question_format_general"}


def test_resume_after_interruption(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    fb = fake()
    first = build_dataset(cfg(pool_file, out), progress=False, generator=fb, stop_after=1)
    assert first["entries"] == 1 and first["status"] == "interrupted"
    line1 = out.read_text().splitlines()[0]
    with open(out, "a") as f:
        f.write('{"id": "torn')  # a crash in the middle of a line
    with pytest.raises(VericiteError, match="--resume"):
        build_dataset(cfg(pool_file, out), progress=False, generator=fb)
    with pytest.raises(VericiteError, match="configuration differs"):
        build_dataset(cfg(pool_file, out, alpha=0.9), resume=True, progress=False, generator=fb)
    calls = fb.calls["generate"]
    second = build_dataset(cfg(pool_file, out), resume=True, progress=False, generator=fb)
    lines = out.read_text().splitlines()
    assert second["entries"] == 2 and second["status"] == "complete" and len(lines) == 2
    assert lines[0] == line1  # the first entry was kept, not rebuilt
    assert fb.calls["generate"] - calls == 5  # one entry: 1 first sentence + 2 extensions + 2 questions
    assert len(second["resumed"]) == 1


def test_stats_and_annotation_round_trip(pool_file: Path, tmp_path: Path):
    out = tmp_path / "ds.jsonl"
    build_dataset(cfg(pool_file, out), progress=False, generator=fake())
    entries = [json.loads(x) for x in out.read_text().splitlines()]
    s = dataset_stats(entries)
    assert s["entries"] == 2 and s["min_set_mean"] == 4 and s["relations"] == {"father": 2}
    assert s["countries"] == {"United Kingdom": 2} and s["eras"] == {"19th century": 4}  # 1900 is the last year of the 19th
    csv_path = tmp_path / "a.csv"
    assert export_annotation(entries, csv_path, sample=50, seed=1) == 4
    rows = list(csv.DictReader(open(csv_path, encoding="utf-8")))
    assert {r["phrasing"] for r in rows} == {"general", "specific"}
    for i, r in enumerate(rows):
        r.update(authenticity="1", relevance=str(i % 2), naturalness="4", significance="" if i == 0 else "3")
    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    res = import_annotation(csv_path)
    assert res["unrated"] == 1 and res["means"]["general"]["authenticity"] == 1.0
    assert any("Naturalness (5)" in line for line in table2(res))
    rows[1]["naturalness"] = "7"
    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(DataError, match=r"a.csv:3: naturalness must be a whole number from 1 to 5"):
        import_annotation(csv_path)


def test_eras():
    from vericite.bench.builders.biokalma.card import century, year_text

    assert century(1900) == "19th century" and century(1901) == "20th century" and century(2001) == "21st century"
    assert century(-44) == "1st century BC" and century(-1480) == "15th century BC" and century(-1500) == "15th century BC"
    assert year_text(-1480) == "1480 BC" and year_text(1972) == "1972 AD"


def test_backwards_first_sentence_is_a_warning():
    from vericite.bench.builders.biokalma.card import reads_backwards

    def entry(sentence: str) -> dict:
        return {"meta": {"pair": {"relation": "father", "a_label": "Tokugawa Tsunashige", "b_label": "Tokugawa Iemitsu"}}, "trace": [{"sentence": sentence}]}

    assert reads_backwards(entry("Tokugawa Tsunashige was the father of Tokugawa Iemitsu, a shogun."))
    assert not reads_backwards(entry("Tokugawa Tsunashige was the son of Tokugawa Iemitsu."))
    assert not reads_backwards(entry("Tokugawa Iemitsu was the father of Tokugawa Tsunashige."))
    chk = check_entries([{**entry("Tokugawa Tsunashige was the father of Tokugawa Iemitsu."), "id": "x", "question": "Who?", "question_general": "Who?", "knowledge": [{"subject": "Q1", "property": "p", "value": "v"}], "gold": [{"subject": "Q1", "property": "p", "value": "v"}]}])
    assert chk["ok"] and chk["warnings"]["first_sentence_reads_relation_backwards"] == ["x"]


def test_check_entries_finds_problems():
    e = {"id": "x", "question": "Not a question.", "question_general": "Who?", "knowledge": [], "gold": [{"subject": "Q1", "property": "p", "value": "v"}], "meta": {"pair_id": "Q1-Q2"}}
    chk = check_entries([e, dict(e)])
    text = " ".join(chk["problems"])
    assert not chk["ok"] and "not in its knowledge" in text and "not a question" in text and "duplicate id" in text


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_build_stats_export_import(pool_file: Path, tmp_path: Path, monkeypatch):
    import vericite.models

    monkeypatch.setattr(vericite.models, "load_model", lambda name, **kw: fake())
    runner = CliRunner()
    out = tmp_path / "ds.jsonl"
    r = runner.invoke(cli, ["build", "biokalma", "--pool", str(pool_file), "--out", str(out), "--n", "2", "--iterations", "3", "--min-gold", "2", "-q"])
    assert r.exit_code == 0, r.output
    assert "2 entries in" in r.output and "pair selection dropped" in r.output
    r = runner.invoke(cli, ["build", "biokalma", "--pool", str(pool_file), "--out", str(out), "-q"])
    assert r.exit_code != 0 and "--resume" in r.output
    r = runner.invoke(cli, ["build", "biokalma", "--pool", str(pool_file), "--out", str(tmp_path / "x.jsonl"), "--alpha", "2", "-q"])
    assert r.exit_code != 0 and "alpha" in r.output and "Traceback" not in r.output
    side_paths(out)["card"].unlink()
    r = runner.invoke(cli, ["build", "stats", str(out), "--pool", str(pool_file), "--card"])
    assert r.exit_code == 0, r.output
    assert "| entries | 2 |" in side_paths(out)["card"].read_text()
    assert "entries: 2" in r.output and "checks: all pass (minimum sets checked against the graph)" in r.output
    csv_path = tmp_path / "a.csv"
    r = runner.invoke(cli, ["build", "export-annotation", str(out), "--sample", "5", "--out", str(csv_path)])
    assert r.exit_code == 0 and "4 rows" in r.output
    r = runner.invoke(cli, ["build", "import-annotation", str(csv_path)])
    assert r.exit_code == 0 and "Authenticity (1)" in r.output and "16 cells not rated" in r.output
    r = runner.invoke(cli, ["build", "stats", str(tmp_path / "missing.jsonl")])
    assert r.exit_code != 0 and "not found" in r.output


# ---------------------------------------------------------------------------------------------- the KaLMA loop


def test_built_dataset_runs_through_generate_and_evaluate(pool_file: Path, tmp_path: Path):
    """build -> `vericite run` (generate + evaluate with the gold sets), in both phrasings and with knowledge removal."""
    from tests.support.pipeline import citing_reply
    from vericite.runs.runner import load_run_config, run_config

    out = tmp_path / "ds.jsonl"
    build_dataset(cfg(pool_file, out), progress=False, generator=fake())
    for name in ("biokalma-mini", "biokalma-mini-general", "biokalma-mini-removal", "biokalma-mini-retrieval"):
        c = load_run_config(REPO / "configs" / f"{name}.yaml", {})
        assert c.dataset == "datasets/biokalma-mini.jsonl"
    c = load_run_config(REPO / "configs" / "biokalma-mini-removal.yaml", {"dataset": str(out), "resamples": 20, "levels": [0, 2]})
    res = run_config(c, tmp_path / "run", progress=False, backend=FakeBackend(replies=citing_reply))
    rows = res["experiments"]["conscious-incompetence"]["rows"]
    assert [r["n"] for r in rows] == [2, 2]
    assert res["metrics"]["citation_precision_micro"]["value"] is not None  # gold sets make precision computable
    assert res["metrics"]["citation_recall_micro"]["value"] is not None
    g = load_run_config(REPO / "configs" / "biokalma-mini-general.yaml", {"dataset": str(out), "resamples": 20})
    run_config(g, tmp_path / "gen", progress=False, backend=FakeBackend(replies=citing_reply))
    asked = [json.loads(x)["question"] for x in (tmp_path / "gen" / "level-base" / "samples.jsonl").read_text().splitlines()]
    built = [json.loads(x)["question_general"] for x in out.read_text().splitlines()]
    assert sorted(asked) == sorted(built)

    # ... -> the paper's tables and figures (scripts/kalma_tables.py), written between markers, prose kept
    import xml.dom.minidom

    tables = load_script("scripts/kalma_tables.py")
    doc = tmp_path / "docs" / "results.md"
    doc.parent.mkdir()
    doc.write_text("# Results\n\nprose before\n", encoding="utf-8")
    argv = ["--specific", str(tmp_path / "run"), "--general", str(tmp_path / "gen"), "--removal", str(tmp_path / "run"),
            "--doc", str(doc), "--img", str(tmp_path / "docs" / "img"), "--prefix", "t"]
    assert tables.main(argv) == 0
    doc.write_text(doc.read_text(encoding="utf-8") + "prose after\n", encoding="utf-8")
    assert tables.main(argv + ["--retrieval", str(tmp_path / "missing")]) == 0  # a missing run is skipped
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Results\n\nprose before\n") and text.endswith("prose after\n")
    assert text.count(tables.BEGIN) == 1 and "Table 5" in text and "Table 7" in text and "Figure 5" not in text
    removal = [l for l in text.splitlines() if l.startswith("| 0 |") or l.startswith("| 2 |")]
    assert len(removal) == 2 and all(l.split(" | ")[1] == "2" for l in removal)  # n = 2 answers per level
    assert "](img/t-removal-na.svg)" in text
    for svg in (tmp_path / "docs" / "img").glob("*.svg"):
        xml.dom.minidom.parse(str(svg))  # well-formed, standalone


# ---------------------------------------------------------------------------------------------- other graphs


def test_build_from_an_on_disk_store(pool_file: Path, tmp_path: Path):
    from vericite.knowledge.loaders import load_into_store
    from vericite.knowledge.store import OxigraphStore

    store_dir = tmp_path / "store"
    with OxigraphStore(store_dir) as st:
        load_into_store(pool_file, st)
    out = tmp_path / "ds.jsonl"
    log = build_dataset(BuildConfig(store=str(store_dir), out=str(out), n=2, iterations=3, model="fake", min_gold=2), progress=False, generator=fake())
    assert log["entries"] == 2 and log["graph"]["source"] == f"store:{store_dir}"
    with pytest.raises(VericiteError, match="--pool FILE or --store DIR"):
        build_dataset(BuildConfig(out=str(tmp_path / "x.jsonl"), model="fake"), progress=False, generator=fake())


WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"


def test_rdf_graph_with_entity_valued_relations(tmp_path: Path):
    """Wikidata-style RDF: the father is an entity, so a homonym cannot confuse the pair."""
    lines = [
        f'<{WD}P22> <{LABEL}> "father"@en .',
        f'<{WD}P106> <{LABEL}> "occupation"@en .',
        f'<{WD}P19> <{LABEL}> "place of birth"@en .',
        f'<{WD}Q1> <{LABEL}> "John Smith"@en .',
        f'<{WD}Q1> <{WDT}P22> <{WD}Q2> .',
        f'<{WD}Q1> <{WDT}P106> "painter" .',
        f'<{WD}Q1> <{WDT}P19> "Leeds" .',
        f'<{WD}Q2> <{LABEL}> "Robert Smith"@en .',
        f'<{WD}Q2> <{WDT}P106> "sculptor" .',
        f'<{WD}Q2> <{WDT}P19> "York" .',
        f'<{WD}Q3> <{LABEL}> "Robert Smith"@en .',  # a homonym with no relation to John
        f'<{WD}Q3> <{WDT}P106> "footballer" .',
    ]
    nt = tmp_path / "g.nt"
    nt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pool = GraphPool.from_file(nt)
    sel = select_pairs(pool, min_candidates=2)
    assert [(p.a, p.relation, p.b, p.resolved_by) for p in sel.pairs] == [("Q1", "father", "Q2", "entity id")]
    counts, n = pool.relation_counts()
    assert counts == Counter({"occupation": 3, "place of birth": 2, "father": 1}) and n == 6
    pool.close()


def test_a_failing_model_stops_the_build_after_three_pairs(pool_file: Path, tmp_path: Path):
    from vericite.errors import BackendError

    class Down(FakeBackend):
        def generate(self, prompts, params):
            raise BackendError("server unreachable")

    many = tmp_path / "many.json"
    rows = hand_pool() + [["q", [person(f"Q{100 + i}", f"Ann Kid{i}", father=f"Bob Dad{i}", occupation="x", place_of_birth="y", award_received="z")]] for i in range(4)]
    rows += [["q", [person(f"Q{200 + i}", f"Bob Dad{i}", occupation="w", place_of_death="v")]] for i in range(4)]
    many.write_text(json.dumps(rows), encoding="utf-8")
    out = tmp_path / "ds.jsonl"
    with pytest.raises(VericiteError, match="failed on 3 pairs in a row.*server unreachable"):
        build_dataset(cfg(many, out, n=5), progress=False, generator=Down("fake:down"))
    log = json.loads(side_paths(out)["log"].read_text())
    assert log["skipped"] == {"llm_error": 3} and log["status"] == "interrupted"


def test_card_with_a_warning_does_not_say_all_checks_pass():
    """The card's quality section is worded as `build stats` is: "all pass" only when nothing was flagged (issue 9)."""
    from vericite.bench.builders.biokalma.card import card_text

    entries = [json.loads(line) for line in (Path(__file__).resolve().parents[3] / "datasets" / "biokalma-mini.jsonl").read_text(encoding="utf-8").splitlines()]
    assert check_entries(entries)["warnings"]["first_sentence_reads_relation_backwards"]  # the committed set has some
    text = card_text(entries, {})
    assert "All checks pass" not in text and "No problems" in text and "one warning follows" in text
    clean = [e for e in entries if e["id"] not in set(check_entries(entries)["warnings"]["first_sentence_reads_relation_backwards"])]
    assert "All checks pass" in card_text(clean, {})


class _StandInScorer:
    """llama.cpp's scorer as the prefix path uses it: ``reset``, ``eval``, ``scores``, ``n_tokens``."""

    def __init__(self) -> None:
        import numpy as np

        self.n_tokens, self.evals, self.scores = 0, 0, np.zeros((64, 8))

    def reset(self) -> None:
        self.n_tokens = 0

    def eval(self, tokens) -> None:
        import numpy as np

        for t in tokens:
            self.scores[self.n_tokens] = np.arange(8) * 0.1 * (t % 3 + 1)
            self.n_tokens += 1
        self.evals += 1


class _PrefixModel:
    """What the prefix path needs of the embedded backend: ``scorer``, ``scorer_n_ctx``, ``tokenize`` and ``lock``
    (here counting the times it is taken)."""

    scorer_n_ctx = 64

    def __init__(self) -> None:
        self.scorer, self.taken, self.lock = _StandInScorer(), 0, self

    def __enter__(self):
        self.taken += 1

    def __exit__(self, *exc) -> None:
        pass

    def tokenize(self, text):
        return [1] + [2 + len(w) % 6 for w in text.split()]

    def identity(self):
        from vericite.types import ModelIdentity

        return ModelIdentity(name="prefix-stand-in", backend="fake", model="stand-in", sha256=None)

    def logprobs(self, texts):
        raise AssertionError("the prefix path should not fall back here")


def test_prefix_scoring_takes_the_model_lock_and_answers_again_from_the_call_cache(tmp_path):
    from vericite.models.cache import CachedBackend

    inner = _PrefixModel()
    scorer = PerplexityScorer(CachedBackend(inner, tmp_path / "calls.sqlite"), "prefix")
    assert scorer.mode == "prefix"
    sufs = ["A's father is B.", "A's occupation is painter."]
    first = scorer.perplexities("A paragraph about A.", sufs)
    assert inner.taken == 1 and inner.scorer.evals == 3  # the prefix once, then each suffix
    again = scorer.perplexities("A paragraph about A.", sufs)  # keyed by the cached backend's call_key
    assert again == first and inner.taken == 1 and inner.scorer.evals == 3
