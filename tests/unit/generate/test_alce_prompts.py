"""ALCE's prompts as ALCE's run.py builds them (utils.make_demo, make_doc_prompt, get_shorter_text; run.py's demo
draw). The expected texts below were written out by hand from reading ALCE's code, not produced by vericite."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vericite.errors import DataError, VericiteError
from vericite.generate.prompts import alce as P

from tests.support.alce import TINY

DOCS = [{"title": "Ta", "text": "ta", "summary": "sa"}, {"title": "Tb", "text": "tb", "summary": "sb"}, {"title": "Tc", "text": "tc"}]


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny_default.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return P.PromptFile.load(path)


def test_demo_draw_is_numpys_legacy_draw_in_drawn_order():
    # run.py: np.random.seed(seed); np.random.choice(len(demos), shot, replace=False)
    for seed in (0, 1, 42):
        np.random.seed(seed)
        assert P.choose_demos(4, 2, seed) == [int(i) for i in np.random.choice(4, 2, replace=False)]
    assert P.choose_demos(3, 2, 0) == [2, 1]  # the drawn order, not sorted
    assert P.choose_demos(4, 0, 5) == []
    with pytest.raises(VericiteError, match="--shot 5"):
        P.choose_demos(4, 5, 0)


def test_whole_prompt_two_shots_two_documents(tiny):
    head = P.head(tiny, P.choose_demos(3, 2, 0), ndoc=2)
    text = head + P.render(tiny, "Who?", DOCS[:2])
    expected = (
        "Instruction: Answer with citations.\n\nQuestion: Q2?\n\n"
        "Document [1](Title: T2a): t2a\nDocument [2](Title: T2b): t2b\n\nAnswer:A2 [2]."  # the answer right after "Answer:"
        "\n\n\n"
        "Instruction: Answer with citations.\n\nQuestion: Q1?\n\n"
        "Document [1](Title: T1a): t1a\n\nAnswer:\nCheck: [1]\nOutput: A1 [1]."  # a list answer: "\n" + lines
        "\n\n\n"
        "Instruction: Answer with citations.\n\nQuestion: Who?\n\n"
        "Document [1](Title: Ta): ta\nDocument [2](Title: Tb): tb\n\nAnswer:"
    )
    assert text == expected


def test_no_documents_removes_the_documents_line(tiny):
    assert P.head(tiny, [0], ndoc=0) == "Instruction: Answer with citations.\n\nQuestion: Q0?\n\nAnswer:A0 [1].\n\n\n"
    assert P.render(tiny, "Who?", None) == "Instruction: Answer with citations.\n\nQuestion: Who?\n\nAnswer:"


def test_summaries_replace_texts_and_irrelevant_ones_are_skipped(tiny):
    # demo 2 with summaries: its first document's summary says "Irrelevant": skipped, the next two kept
    assert P.head(tiny, [2], ndoc=2, use_shorter="summary") == (
        "Instruction: Answer with citations.\n\nQuestion: Q2?\n\n"
        "Document [1](Title: T2b): s2b\nDocument [2](Title: T2c): s2c\n\nAnswer:A2 [2].\n\n\n"
    )
    # with extractions the second is the irrelevant one
    assert P.head(tiny, [2], ndoc=2, use_shorter="extraction").count("Document [") == 2
    assert "e2a" in P.head(tiny, [2], ndoc=2, use_shorter="extraction") and "e2c" in P.head(tiny, [2], ndoc=2, use_shorter="extraction")


def test_shorter_docs_is_alces_get_shorter_text():
    kept, skipped = P.shorter_docs(DOCS, 5, "summary")
    # Tc has no summary: the scan ends there, with the two kept before it
    assert [d["title"] for d in kept] == ["Ta", "Tb"] and skipped == 0
    # nothing kept before a document without one: that document, its full text as its summary
    kept, _ = P.shorter_docs([{"title": "X", "text": "x"}, {"title": "Y", "text": "y", "summary": "sy"}], 3, "summary")
    assert kept == [{"title": "X", "text": "x", "summary": "x"}]
    # "irrelevant" anywhere in it, either case of its first letter
    docs = [{"title": str(i), "text": "t", "summary": s} for i, s in enumerate(["it is irrelevant", "Irrelevant.", "IRRELEVANT", "ok"])]
    kept, skipped = P.shorter_docs(docs, 1, "summary")
    assert [d["title"] for d in kept] == ["2"] and skipped == 2  # "IRRELEVANT" is not ALCE's spelling: kept
    # a lookup gives the values (the model writing the missing ones)
    kept, _ = P.shorter_docs(DOCS, 3, "summary", lookup=lambda i, d: d.get("summary") or f"written {i}")
    assert [d["summary"] for d in kept] == ["sa", "sb", "written 2"]


def test_document_fields_are_replaced_title_then_text_then_id():
    # make_doc_prompt: .replace("{T}").replace("{P}").replace("{ID}"): an "{ID}" inside the text is numbered too
    assert P.doc_block({"title": "T {P}", "text": "see {ID}"}, 3, "[{ID}] {T}: {P}") == "[3] T see 3: see 3"


def test_messages_are_alces_chat_messages():
    msgs = P.messages("prompt")
    assert msgs == [{"role": "system", "content": "You are a helpful assistant that answers the following questions with proper citations."}, {"role": "user", "content": "prompt"}]


def test_summary_prompt_is_gen_summarys():
    msgs = P.shorter_messages("summary", "Why {x}?", {"title": "T", "text": "Body {y}"})
    assert msgs[0]["content"].startswith("You are a helpful assistant that summarizes")
    assert msgs[1]["content"] == (
        'Summarize the following document within 50 words with the question of interest "Why {x}?" Return "irrelevant" if the'
        " document is irrelevant to the question. Try to keep all the important dates, numbers, and names.\n\nTitle: T\nText: Body {y}\nSummary:"
    )
    assert P.shorter_messages("extraction", "Q", {"title": "T", "text": "x"})[1]["content"].endswith("Title: T\nText: x\nExtracted span:")


def test_a_bad_prompt_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"instruction": "x", "demos": []}), encoding="utf-8")
    with pytest.raises(DataError, match="lacks demo_sep, demo_prompt, doc_prompt"):
        P.PromptFile.load(bad)
    bad.write_bytes(b"{\xff")
    with pytest.raises(DataError, match="not UTF-8 JSON"):
        P.PromptFile.load(bad)
    with pytest.raises(DataError, match="cannot be read"):
        P.PromptFile.load(tmp_path / "missing.json")


@pytest.mark.shared
def test_alces_own_eli5_prompt_with_seed_42(alce_data):
    """The real prompt file: demos 1 and 3 (what run.py draws for its default seed 42), five documents each,
    numbered from 1 in each block, the question last and ending at "Answer:"."""
    f = P.PromptFile.load(alce_data / "prompts" / "eli5_default.json")
    ids = P.choose_demos(len(f.demos), 2, 42)
    assert ids == [1, 3]
    docs = [{"title": f"T{i}", "text": f"text {i}"} for i in range(8)]
    text = P.head(f, ids, 5) + P.render(f, "Why is the sky blue?", docs[:5])
    blocks = text.split(f.demo_sep)
    assert len(blocks) == 3
    for block, demo in zip(blocks, [f.demos[1], f.demos[3]]):
        assert block.startswith(f.instruction + "\n\nQuestion: " + demo["question"] + "\n\nDocument [1](Title: ")
        assert block.endswith("\nAnswer:" + demo["answer"]) and block.count("Document [") == 5
        assert "Document [5](Title: " + demo["docs"][4]["title"] + "): " + demo["docs"][4]["text"] + "\n\nAnswer:" in block
    assert blocks[2].endswith("Document [5](Title: T4): text 4\n\nAnswer:") and "T5" not in blocks[2]


@pytest.fixture
def alce_data():
    from tests.conftest import need
    from vericite.paths import shared_data_dir

    d = shared_data_dir(required=False)
    need(d is not None and (d / "alce" / "prompts").is_dir(), "../shared/data/alce is not beside this checkout (set VERICITE_DATA)")
    return d / "alce"  # type: ignore[operator]
