"""``vericite docs index|search`` end to end: a corpus file to an index folder, searched with BM25, dense (the
embedded bge-small), hybrid and re-ranked (the embedded ms-marco); bad corpus items reported; every refusal one
line and a non-zero exit."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite.cli.main import cli

CORPUS = [
    {"id": "simon", "title": "The Sound of Silence", "text": "The Sound of Silence is a song written by Paul Simon and performed by Simon & Garfunkel."},
    {"id": "paris", "title": "Paris", "text": "Paris is the capital and most populous city of France."},
    {"id": "cell", "title": "Mitochondrion", "text": "The mitochondrion is an organelle that produces most of the cell's energy."},
    {"id": "long", "title": "Long", "text": " ".join(f"word{i}" for i in range(150))},
]


def run(*args):
    return CliRunner().invoke(cli, ["docs", *args])


@pytest.fixture()
def corpus(tmp_path):
    f = tmp_path / "corpus.jsonl"
    lines = [json.dumps(d) for d in CORPUS] + [json.dumps({"id": "empty", "title": "nothing"}), json.dumps(CORPUS[0])]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f


def test_index_then_search_bm25(corpus, tmp_path):
    idx = tmp_path / "idx"
    r = run("index", str(corpus), "--index", str(idx), "-q")
    assert r.exit_code == 0, r.output
    assert "4 documents, 5 passages from" in r.output and "built bm25" in r.output
    assert "warning: 2 corpus items not indexed (1 no text, 1 duplicate id)" in r.output and "corpus.jsonl:5: no text" in r.output
    assert [json.loads(x)["problem"] for x in (idx / "bad_items.jsonl").read_text().splitlines()] == ["no text", "duplicate id"]
    r = run("search", "who wrote the sound of silence", "--index", str(idx), "-k", "2")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith("1. [simon] The Sound of Silence")
    r = run("search", "capital of France", "--index", str(idx), "--json")
    out = json.loads(r.output)
    assert out["retriever"] == "bm25@1" and out["passages"][0]["id"] == "paris" and out["passages"][0]["rank"] == 1
    r = run("search", "zebra quantum", "--index", str(idx))
    assert r.exit_code == 1 and "no passage of" in r.output


def test_hybrid_dense_and_rerank_with_the_embedded_models(corpus, tmp_path):
    from tests.contract.impls import require_onnx_models

    require_onnx_models()
    idx = tmp_path / "idx"
    assert run("index", str(corpus), "--index", str(idx), "-q").exit_code == 0
    r = run("search", "organelle energy", "--index", str(idx), "--retriever", "dense")
    assert r.exit_code == 2 and "has no dense retriever (built: bm25): add it with vericite docs index FILE" in r.output
    r = run("index", str(corpus), "--index", str(idx), "--retriever", "hybrid", "--json", "-q")
    assert r.exit_code == 0, r.output
    built = json.loads(r.output.splitlines()[0])
    assert built["built"] == ["dense"] and built["kept"] == ["bm25"] and built["passages"] == 5
    for retriever in ("dense", "hybrid"):
        out = json.loads(run("search", "what powers a cell", "--index", str(idx), "--retriever", retriever, "--json").output)
        assert out["passages"][0]["id"] == "cell", out
    out = json.loads(run("search", "the song and its singers", "--index", str(idx), "--rerank", "-k", "1", "--json").output)
    assert out["retriever"] == "bm25@1+rerank:ms-marco-minilm-l12-int8@1"
    out = json.loads(run("search", "song by Paul Simon", "--index", str(idx), "--retriever", "hybrid", "--rerank", "-k", "2", "--json").output)
    assert out["passages"][0]["id"] == "simon" and out["options"]["rerank_depth"] == 20 and out["options"]["rrf_k"] == 60
    r = run("index", str(corpus), "--index", str(idx), "--retriever", "dense")
    assert r.exit_code == 0 and "built nothing new; already there: bm25, dense" in r.output


def test_refusals_are_one_line(corpus, tmp_path):
    idx = tmp_path / "idx"
    run("index", str(corpus), "--index", str(idx), "-q")
    meta = json.loads((idx / "index.json").read_text())
    (idx / "index.json").write_text(json.dumps({**meta, "version": 0}))
    r = run("search", "Paris", "--index", str(idx))
    assert r.exit_code == 2 and r.output.count("\n") == 1 and "format version 0, this vericite reads version 1" in r.output
    assert "Traceback" not in r.output
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps(CORPUS[1]) + "\n", encoding="utf-8")
    (idx / "index.json").write_text(json.dumps(meta))
    r = run("index", str(other), "--index", str(idx))
    assert r.exit_code == 2 and "holds an index of another corpus" in r.output
    r = run("index", "no-such-corpus", "--index", str(tmp_path / "x"))
    assert r.exit_code == 2 and "corpus not found: no-such-corpus is neither a file nor a dataset" in r.output
    r = run("index", "demo", "--index", str(tmp_path / "x"))
    assert r.exit_code == 2 and "dataset 'demo' has no corpus of its own" in r.output
    r = run("search", "x", "--index", str(tmp_path / "nothing"))
    assert r.exit_code == 2 and "no document index in" in r.output
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "text": "caf\xe9 au lait"}\n')
    r = run("index", str(bad), "--index", str(tmp_path / "b"), "-q")
    assert r.exit_code == 0 and "1 not UTF-8" in r.output and "bad.jsonl:1: not UTF-8: 1 bytes read as U+FFFD" in r.output


@pytest.mark.shared
def test_index_nq_500_by_name(tmp_path):
    from tests.contract.impls import require_conner_data

    require_conner_data()
    r = run("index", "nq-500", "--index", str(tmp_path / "nq"), "-q")
    assert r.exit_code == 0, r.output
    assert "495 documents, 1,956 passages from" in r.output and "(conner); 5 repeated documents read once" in r.output
    out = json.loads(run("search", "how many episodes are there in dragon ball z", "--index", str(tmp_path / "nq"), "-k", "3", "--json").output)
    assert out["passages"][0]["id"].startswith("nq-2")


def test_interrupted_index_says_how_to_resume(corpus, tmp_path, monkeypatch):
    import vericite.knowledge.docs as docs_pkg

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(docs_pkg, "build_from_file", interrupted)
    r = run("index", str(corpus), "--index", str(tmp_path / "i"))
    assert r.exit_code == 130 and "interrupted: run the same command again to resume" in r.output and "--resume" not in r.output


@pytest.mark.parametrize(
    "damage, part",
    [
        (lambda idx: (idx / "passages.jsonl").unlink(), "passages.jsonl"),
        (lambda idx: (idx / "passages.jsonl").write_bytes((idx / "passages.jsonl").read_bytes()[:40]), "passages.jsonl"),
        (lambda idx: (idx / "offsets.npy").write_bytes(b""), "offsets.npy"),  # np.load's EOFError: click printed "Aborted!"
        (lambda idx: (idx / "ids.json").unlink(), "ids.json"),
        (lambda idx: __import__("shutil").rmtree(idx / "bm25"), "bm25/"),
        (lambda idx: (idx / "bm25" / "vocab.index.json").write_text(""), "bm25/"),
        (lambda idx: (idx / "bm25" / "data.csc.index.npy").write_bytes(b"\x93NUMPY\x01\x00"), "bm25/"),
    ],
)
def test_a_damaged_index_is_one_line_for_search_and_index(corpus, tmp_path, damage, part):
    idx = tmp_path / "idx"
    assert run("index", str(corpus), "--index", str(idx), "-q").exit_code == 0
    damage(idx)
    searched = [] if part == "ids.json" else [run("search", "Paris", "--index", str(idx))]  # BM25's search needs no ids.json
    for r in searched + [run("index", str(corpus), "--index", str(idx), "-q")]:
        # docs index again must not say "built nothing new; already there: bm25" over a broken index
        assert r.exit_code == 2 and f"index {idx} is damaged ({part}" in r.output and "rebuild it" in r.output, r.output
        assert "Traceback" not in r.output and "Aborted" not in r.output


def test_bytes_not_utf8_are_indexed_not_counted_as_left_out(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_bytes(b'{"id": "a", "text": "caf\xe9 au lait"}\n{"id": "b"}\n')
    r = run("index", str(f), "--index", str(tmp_path / "i"), "-q")
    assert r.exit_code == 0 and "1 documents, 1 passages" in r.output
    assert "warning: 1 corpus items not indexed (1 no text); 1 not UTF-8 (read as U+FFFD)" in r.output, r.output
    assert json.loads(run("search", "lait", "--index", str(tmp_path / "i"), "--json").output)["passages"][0]["id"] == "a"


def test_an_empty_query_is_one_line(corpus, tmp_path):
    run("index", str(corpus), "--index", str(tmp_path / "idx"), "-q")
    r = run("search", "  ", "--index", str(tmp_path / "idx"))
    assert r.exit_code == 2 and r.output == "error: the query is empty: give the words to search for\n", r.output  # was "no passage ... matches"
