"""Corpus loaders (JSONL, DPR TSV, ALCE, CONNER's NQ) on small hand-written files, and DPR-style splitting."""

from __future__ import annotations

import json

import pytest

from vericite.errors import DataError
from vericite.knowledge.docs.loaders import CorpusReport, detect_format, passages, read_conner_nq, read_corpus, split
from vericite.types import Passage


def read(path, fmt="auto"):
    rep = CorpusReport()
    docs = list(read_corpus(path, fmt, rep))
    return docs, rep


def test_jsonl_documents_and_every_problem_reported(tmp_path):
    f = tmp_path / "c.jsonl"
    lines = [
        json.dumps({"id": "a", "title": "Ada", "text": "Ada was a mathematician.", "url": "u1"}).encode(),
        json.dumps({"id": "b", "title": "No text"}).encode(),
        json.dumps({"id": "a", "title": "Again", "text": "A second a."}).encode(),
        b'{"id": "c", "title": "Caf\xe9", "text": "bytes that are not UTF-8"}',
        b"not json",
        json.dumps({"title": "no id", "text": "t"}).encode(),
        b"",
        json.dumps({"id": 7, "text": "numeric id"}).encode(),
    ]
    f.write_bytes(b"\n".join(lines) + b"\n")
    docs, rep = read(f)
    assert rep.format == "jsonl" and [d.id for d in docs] == ["a", "c", "7"]
    assert docs[0] == Passage("a", "Ada was a mathematician.", "Ada", {"url": "u1"})
    assert docs[1].title == "Caf\ufffd"  # kept, with the bad byte replaced and reported
    assert rep.documents == 3 and rep.problems == {"no text": 1, "duplicate id": 1, "not UTF-8": 1, "bad line": 1, "no id": 1}
    where = {b["problem"]: b["where"] for b in rep.bad}
    assert where["no text"].endswith(":2") and where["duplicate id"].endswith(":3") and where["not UTF-8"].endswith(":4")
    assert where["bad line"].endswith(":5") and where["no id"].endswith(":6")


def test_dpr_tsv_header_quotes_and_bad_rows(tmp_path):
    f = tmp_path / "psgs_w100.tsv"
    f.write_text(
        'id\ttext\ttitle\n'
        '1\t"Aaron is a prophet, ""high priest"" and brother of Moses."\tAaron\n'
        '2\tA plain text\tSecond title\n'
        '3\tonly two fields\n'
        '4\t\tEmpty text\n',
        encoding="utf-8",
    )
    docs, rep = read(f)
    assert rep.format == "dpr"
    assert docs == [Passage("1", 'Aaron is a prophet, "high priest" and brother of Moses.', "Aaron"), Passage("2", "A plain text", "Second title")]
    assert rep.problems == {"bad line": 1, "no text": 1}


def alce_items():
    doc = {"title": "Sound", "text": "The Sound of Silence is a song by Paul Simon.", "score": 3.2, "summary": "A song.", "extraction": "Simon."}
    return [
        {"question": "q1", "docs": [doc, {"id": "w9", "title": "W", "text": "Wikipedia passage."}]},
        {"question": "q2", "docs": [{**doc, "score": 1.0}, {"title": "bad"}]},
        {"question": "q3"},
    ]


@pytest.mark.parametrize("shape", ["data", "list", "jsonl"])
def test_alce_documents_in_every_shape(tmp_path, shape):
    items = alce_items()
    if shape == "data":
        f = tmp_path / "eli5.json"
        f.write_text(json.dumps({"data": items}), encoding="utf-8")
    elif shape == "list":
        f = tmp_path / "eli5.json"
        f.write_text(json.dumps(items), encoding="utf-8")
    else:
        f = tmp_path / "eli5.jsonl"
        f.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
    assert detect_format(f) == "alce"
    docs, rep = read(f)
    assert [d.id for d in docs][1] == "w9" and docs[0].id.startswith("alce-") and len(docs[0].id) == 21
    assert docs[0].meta == {"summary": "A song.", "extraction": "Simon."}  # the question's own score left out
    assert rep.merged == 1  # the same document with the second question: one document
    assert rep.problems == {"no text": 1, "bad line": 1}


def test_alce_content_id_is_stable(tmp_path):
    f = tmp_path / "a.json"
    f.write_text(json.dumps(alce_items()), encoding="utf-8")
    assert [d.id for d in read(f)[0]] == [d.id for d in read(f)[0]]


def conner_file(tmp_path):
    f = tmp_path / "nq.txt"
    rows = [
        ("Dragon Ball Z", "how many episodes are there in dragon ball z", "Dragon Ball Z ran for 291 episodes in Japan .", "291 episodes"),
        ("Gallbladder", "where is gall bladder", "The gallbladder sits beneath the liver .", "beneath the liver"),
        ("Dragon Ball Z", "when did dragon ball z end", "Dragon Ball Z  ran for 291 episodes in Japan .", "1996"),
    ]
    f.write_text("".join("\t".join(r) + "\n" for r in rows) + "broken line\n", encoding="utf-8")
    return f


def test_conner_nq_gold_passages_and_questions(tmp_path):
    f = conner_file(tmp_path)
    assert detect_format(f) == "conner"
    rep = CorpusReport()
    docs, questions = read_conner_nq(f, rep)
    assert [d.id for d in docs] == ["nq-1", "nq-2"] and docs[0].title == "Dragon Ball Z"
    assert [(q.question, q.answer, q.doc_id) for q in questions][2] == ("when did dragon ball z end", "1996", "nq-1")  # same passage: one document
    assert rep.problems == {"bad line": 1}
    corpus, rep2 = read(f)
    assert [d.id for d in corpus] == ["nq-1", "nq-2"] and rep2.merged == 1 and rep2.problems == {"bad line": 1}


def test_wow_marker_for_no_knowledge_is_not_a_document(tmp_path):
    # a BM25 index holding "no_passages_used" retrieves it as knowledge (WoW's first 50: 4 dialogues) and as evidence
    f = tmp_path / "wow.txt"
    rows = [("Beard", "i like beards. [SEP] me too", "Beards grow on the chin.", "nice"), ("Cat", "cats? [SEP] yes", "no_passages_used", "i love cats")]
    f.write_text("".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    corpus, rep = read(f, "conner")
    assert [d.text for d in corpus] == ["Beards grow on the chin."]
    assert rep.problems == {"no text": 1} and "no_passages_used" in rep.bad[0]["detail"]


def test_unknown_format_and_missing_file_are_one_line(tmp_path):
    f = tmp_path / "x.txt"
    f.write_text("just words\n", encoding="utf-8")
    with pytest.raises(DataError, match="cannot tell the corpus format"):
        read(f)
    with pytest.raises(DataError, match="corpus file not found"):
        read(tmp_path / "missing.jsonl")
    with pytest.raises(DataError, match="unknown corpus format"):
        read(f, "csv")


def test_split_100_words_with_title_and_stable_ids():
    words = [f"w{i}" for i in range(250)]
    doc = Passage("d", "  ".join(words), "Title", {"url": "u"})
    parts = split(doc)
    assert [p.id for p in parts] == ["d#1", "d#2", "d#3"]
    assert [len(p.text.split()) for p in parts] == [100, 100, 50]
    assert parts[1].text.split()[0] == "w100" and all(p.title == "Title" and p.meta == {"doc": "d"} for p in parts)
    assert split(doc) == parts
    short = Passage("s", "few   words\nhere", "T", {"url": "u"})
    assert split(short) == [Passage("s", "few words here", "T", {"url": "u"})]
    assert split(doc, 0)[0].id == "d" and split(doc, 120)[1].text.split()[0] == "w120"
    assert split(Passage("e", " ".join(words[:100]), "")) [0].id == "e"  # exactly 100 words: one passage


def test_split_collision_is_reported():
    rep = CorpusReport()
    docs = [Passage("a#1", "x"), Passage("a", " ".join(["y"] * 150))]
    out = list(passages(docs, 100, rep))
    assert [p.id for p in out] == ["a#1", "a#2"] and rep.problems == {"duplicate id": 1} and rep.passages == 2
