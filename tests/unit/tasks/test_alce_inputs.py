"""The one reader of ALCE's files (tasks/alce_inputs.py), as the ALCE datasets and the ALCE task use it: the same
item gives the same fields both ways, and the reference answers are found wherever ALCE's fields are kept."""

from __future__ import annotations

import json

import pytest

from vericite.datasets.alce import read_alce, subtask_of
from vericite.errors import DataError
from vericite.evaluate.inputs import read_answers
from vericite.metrics.alce import long_answers
from vericite.registry import create
from vericite.tasks.alce_inputs import alce_record, read_alce_json
from vericite.types import Sample

DOCS = [{"title": "T", "text": "Paul Simon wrote it."}]
ASQA = {
    "sample_id": "a1", "question": "Who wrote it?", "docs": DOCS, "qa_pairs": [{"question": "Who?", "short_answers": ["Simon"]}],
    "annotations": [{"long_answer": "Paul Simon."}, {"long_answer": "Simon wrote it."}], "answer": "Paul Simon.", "wikipages": [],
}  # fmt: skip
ELI5 = {"question": "Why?", "docs": DOCS, "claims": ["c"], "answer": "Because.", "question_ctx": ""}


def read_alce_from(tmp_path, items):
    p = tmp_path / "x.json"
    p.write_text(json.dumps(items), encoding="utf-8")
    return read_alce(p)


def test_a_dataset_sample_and_an_evaluated_record_read_an_item_alike(tmp_path):
    sample = read_alce_from(tmp_path, [ASQA])[0]
    rec = alce_record({**ASQA, "output": "Paul Simon [1]."}, 1)
    assert rec["id"] == sample.id == "a1" and rec["answer"] == "Paul Simon [1]."
    assert Sample.from_dict(rec).passages == sample.passages and Sample.from_dict(rec).qa_pairs == sample.qa_pairs
    assert rec["meta"]["alce"] == sample.meta["alce"] == {k: ASQA[k] for k in ("sample_id", "annotations", "answer", "wikipages")}
    assert rec["meta"]["long_answers"] == long_answers(sample) == ["Paul Simon.", "Simon wrote it."]


def test_the_reference_answers_of_a_generate_record_are_read_from_meta_alce(tmp_path):
    sample = read_alce_from(tmp_path, [ELI5])[0]
    generated = {**sample.to_dict(), "output": "Because [1].", "answer": {"raw": "Because [1].", "sentences": []}, "method": "vanilla@1"}
    rec = alce_record(generated, 1)
    assert rec["answer"] == "Because [1]." and rec["meta"]["long_answers"] == ["Because."] and rec["method"] == "vanilla@1"
    assert long_answers(sample) == ["Because."] and subtask_of(sample) == "eli5"


def test_jsonl_under_a_json_name_with_long_lines(tmp_path):
    """JSONL is told from JSON by parsing, not by a look at the first 64 KiB: an item of 100 long documents is one
    line longer than that."""
    docs = [{"title": f"T{i}", "text": "word " * 200} for i in range(100)]
    items = [{**ASQA, "docs": docs, "output": "Simon [1]."}, {**ASQA, "sample_id": "a2", "docs": docs, "output": "Paul [2]."}]
    p = tmp_path / "asqa_result.json"
    p.write_text("".join(json.dumps(it) + "\n" for it in items), encoding="utf-8")
    assert len(p.read_text().splitlines()[0]) > 1 << 16
    assert read_alce_json(p) is None
    assert [s.id for s in read_alce(p)] == ["a1", "a2"] and len(read_alce(p)[0].passages) == 100
    got = read_answers(p, create("tasks", "alce"))
    assert [i.raw for i in got.items] == ["Simon [1].", "Paul [2]."] and not got.bad


def test_one_item_on_one_line_is_jsonl_and_other_shapes_are_one_line(tmp_path):
    p = tmp_path / "one.json"
    p.write_text(json.dumps(ELI5), encoding="utf-8")
    assert read_alce_json(p) is None and read_alce(p)[0].claims == ["c"]
    p.write_text(json.dumps({"items": []}), encoding="utf-8")
    with pytest.raises(DataError, match="expected ALCE's"):
        read_alce_json(p)


def test_bytes_that_are_not_utf8_in_an_evaluated_json_file_are_one_line(tmp_path):
    p = tmp_path / "latin.json"
    p.write_bytes(b'[{"question": "caf\xe9", "docs": [], "output": "x"}]')
    with pytest.raises(DataError, match="not UTF-8"):
        read_answers(p, create("tasks", "alce"))


def test_alce_fields_keep_one_key_order_across_processes():
    # the read fields were once a frozenset: their order, and so the key order of every samples.jsonl record,
    # changed with the process's string hash seed
    import subprocess
    import sys

    code = ("from vericite.tasks.alce_inputs import alce_fields; "
            "print(list(alce_fields({'id': 1, 'question': 'q', 'docs': [], 'qa_pairs': [], 'answers': [], 'claims': []})))")
    outs = {subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": str(s)},
                           capture_output=True, text=True, check=True).stdout for s in range(6)}
    assert outs == {"['question', 'passages', 'qa_pairs', 'answers', 'claims', 'id']\n"}
