"""The one JSONL module: read policies, torn last lines, durable append, atomic writes, torn-line repair."""

from __future__ import annotations

import json

import pytest

from vericite import jsonl
from vericite.errors import DataError

MIXED = b'{"id": "a"}\n\nnot json\n[1, 2]\n{"id": "b"}\n{"id": "c'


def test_skip_counts_bad_lines_and_ignores_a_torn_tail(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(MIXED)
    st = jsonl.ReadStats()
    got = list(jsonl.read(p, policy="skip", torn="ignore", stats=st))
    assert got == [{"id": "a"}, {"id": "b"}]
    assert (st.lines, st.unreadable, st.torn_last, st.bad) == (4, 2, True, [])


def test_collect_records_numbers_and_reasons(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(MIXED)
    st = jsonl.ReadStats()
    got = list(jsonl.read_numbered(p, policy="collect", torn="read", stats=st))
    assert got == [(1, {"id": "a"}), (5, {"id": "b"})]
    # read as an ordinary line, the unfinished last one is bad JSON, reported with its number
    assert [b.line for b in st.bad] == [3, 4, 6]
    assert st.bad[0].reason.startswith("not valid JSON (") and st.bad[1].reason == "expected a JSON object"
    assert st.bad[0].to_dict() == {"line": 3, "reason": st.bad[0].reason}
    assert not st.torn_last and st.unreadable == 3


def test_raise_names_file_and_line_in_the_callers_wording(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(MIXED)
    with pytest.raises(DataError, match=r"f.jsonl:3: invalid JSON: Expecting value \(column 1\)$"):
        list(jsonl.read(p, policy="raise", torn="read", json_reason="invalid JSON: {msg} (column {column})"))
    p.write_bytes(b'{"a": 1}\n[1, 2]\n')
    with pytest.raises(DataError, match=r"f.jsonl:2: found \[1, 2\]$"):
        list(jsonl.read(p, policy="raise", torn="read", object_reason="found {found}"))


def test_a_last_line_without_newline_is_read_when_asked(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_text('{"id": "a"}\n{"id": "b"}', encoding="utf-8")
    assert [d["id"] for d in jsonl.read(p, policy="raise", torn="read")] == ["a", "b"]
    st = jsonl.ReadStats()
    assert [d["id"] for d in jsonl.read(p, policy="raise", torn="ignore", stats=st)] == ["a"]  # even if it parses
    assert st.torn_last


def test_not_utf8_is_a_bad_line_or_replaced(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"f.jsonl:2: not UTF-8 text"):
        list(jsonl.read(p, policy="raise", torn="read"))
    assert [d["id"] for d in jsonl.read(p, policy="raise", torn="read", errors="replace")] == ["a", "caf\ufffd"]
    st = jsonl.ReadStats()
    assert list(jsonl.read(p, policy="collect", torn="read", stats=st)) == [{"id": "a"}]
    assert st.bad[0].line == 2


def test_missing_file(tmp_path):
    assert list(jsonl.read(tmp_path / "none.jsonl", policy="raise", torn="read", missing_ok=True)) == []
    with pytest.raises(DataError, match="none.jsonl: cannot read"):
        list(jsonl.read(tmp_path / "none.jsonl", policy="raise", torn="read"))


def test_require_object_false_yields_any_value(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_text("[1]\n2\n", encoding="utf-8")
    assert list(jsonl.read(p, policy="raise", torn="read", require_object=False)) == [[1], 2]


def test_append_then_cut_torn_line(tmp_path):
    p = tmp_path / "f.jsonl"
    jsonl.append(p, {"id": "a", "text": "é"})
    with open(p, "a", encoding="utf-8") as f:
        f.write('{"id": "b", "te')  # a writer killed mid-line
    assert jsonl.cut_torn_line(p) == len('{"id": "b", "te')
    jsonl.append(p, {"id": "b"})
    assert p.read_text(encoding="utf-8") == '{"id": "a", "text": "é"}\n{"id": "b"}\n'
    assert jsonl.cut_torn_line(p) == 0 and jsonl.cut_torn_line(tmp_path / "none") == 0
    p.write_text("no newline at all", encoding="utf-8")
    assert jsonl.cut_torn_line(p) == len("no newline at all") and p.read_text() == ""


def test_atomic_writes_replace_whole_files_and_leave_no_tmp(tmp_path):
    p = tmp_path / "r.json"
    jsonl.write_json_atomic(p, {"b": "é", "when": tmp_path})  # a Path is written as its str()
    assert p.read_text(encoding="utf-8") == json.dumps({"b": "é", "when": str(tmp_path)}, indent=2, ensure_ascii=False) + "\n"
    q = tmp_path / "s.jsonl"
    jsonl.write_jsonl_atomic(q, iter([{"id": 1}, {"id": 2}]))
    assert q.read_text() == '{"id": 1}\n{"id": 2}\n'
    jsonl.write_text_atomic(tmp_path / "t.html", "<p>")
    assert (tmp_path / "t.html").read_text() == "<p>"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["r.json", "s.jsonl", "t.html"]


def test_a_failed_atomic_write_keeps_the_old_file(tmp_path):
    q = tmp_path / "s.jsonl"
    q.write_text("old\n")

    def records():
        yield {"id": 1}
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        jsonl.write_jsonl_atomic(q, records())
    assert q.read_text() == "old\n" and [x.name for x in tmp_path.iterdir()] == ["s.jsonl"]


def test_evaluate_replaces_its_output_files_atomically(tmp_path):
    """An evaluation that fails while writing keeps the previous samples.jsonl whole (it used to be truncated)."""
    from vericite.runs.results import write_evaluation

    write_evaluation(tmp_path, {"metrics": {}}, [{"id": "old"}], [])
    before = (tmp_path / "samples.jsonl").read_text()

    def records():
        yield {"id": "new"}
        raise RuntimeError("killed while writing")

    with pytest.raises(RuntimeError):
        write_evaluation(tmp_path, {"metrics": {}}, records(), [])
    assert (tmp_path / "samples.jsonl").read_text() == before == '{"id": "old"}\n'
    assert sorted(x.name for x in tmp_path.iterdir()) == ["bad_lines.jsonl", "results.json", "samples.jsonl"]


def test_a_dataset_line_that_is_not_utf8_is_one_error_naming_the_line(tmp_path):
    from vericite.datasets import read_samples_jsonl

    p = tmp_path / "q.jsonl"
    p.write_bytes(b'{"id": "1", "question": "a?"}\n{"id": "2", "question": "caf\xe9?"}\n')
    with pytest.raises(DataError, match=r"q.jsonl:2: not UTF-8 text"):  # it was a UnicodeDecodeError traceback
        list(read_samples_jsonl(p))


def test_labelled_pairs_keep_bad_lines_in_order_and_stop_at_the_limit(tmp_path):
    from vericite.judges.meta import load_pairs

    good = json.dumps({"evidence": "e", "claim": "c", "label": "SUPPORTS"})
    p = tmp_path / "pairs.jsonl"
    p.write_bytes("\n".join([good, '{"claim": "c"}', "not json", good, "also not json"]).encode() + b"\n\xff\n")
    got = load_pairs(p)
    assert [n for n, _ in got.bad_lines] == [2, 3, 5, 6] and "not UTF-8" in got.bad_lines[-1][1]
    assert [n for n, _ in load_pairs(p, limit=2).bad_lines] == [2, 3]  # nothing after the second pair is read


def test_replaced_bytes_are_counted_per_line_and_a_byte_order_mark_is_dropped(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"id": "a"}\n{"id": "caf\xe9\xff"}\n\xfe\n')
    st = jsonl.ReadStats()
    got = list(jsonl.read_numbered(p, policy="collect", torn="read", stats=st, errors="replace"))
    assert got == [(1, {"id": "a"}), (2, {"id": "caf\ufffd\ufffd"})]
    assert st.replaced == {2: 2, 3: 1} and [b.line for b in st.bad] == [3]
    assert jsonl.decode_line(b"a\xe2\x82b") == ("a\ufffdb", 2)  # a cut multi-byte character is one U+FFFD
    assert list(jsonl.read(p, policy="skip", torn="read")) == [{"id": "a"}]  # strict: lines 2 and 3 are bad


LINE_BREAKS_IN_STRINGS = "\u2028\u2029\x85"  # raw in JSON written with ensure_ascii=False; str.splitlines breaks at them


def test_text_lines_split_at_line_feeds_only():
    text = 'a\u2028b\r\nc\x85d\n\ne\u2029f'
    assert jsonl.text_lines(text) == ["a\u2028b", "c\x85d", "", "e\u2029f"]
    assert jsonl.text_lines("") == [] and jsonl.text_lines("x\n") == ["x"]


def test_readers_of_jsonl_text_keep_a_record_with_unicode_line_separators(tmp_path):
    from vericite.datasets.qa_sets import read_items
    from vericite.knowledge.docs.loaders import CorpusReport, read_corpus

    rows = [{"id": "a", "title": "T", "text": f"one{LINE_BREAKS_IN_STRINGS}two"}, {"id": "b", "text": "three"}]
    f = tmp_path / "c.jsonl"
    f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    assert [item["id"] for _, _, item in read_items(f, "test")] == ["a", "b"]
    rep = CorpusReport()
    docs = list(read_corpus(f, "jsonl", rep))
    assert [d.id for d in docs] == ["a", "b"] and rep.problems == {}


def test_alce_jsonl_corpus_keeps_a_question_with_unicode_line_separators(tmp_path):
    from vericite.knowledge.docs.loaders import CorpusReport, read_corpus

    qs = [{"question": "q1", "docs": [{"id": "d1", "title": "T", "text": f"x{LINE_BREAKS_IN_STRINGS}y"}]}, {"question": "q2", "docs": [{"id": "d2", "title": "U", "text": "z"}]}]
    f = tmp_path / "alce.jsonl"
    f.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in qs), encoding="utf-8")
    rep = CorpusReport()
    assert [d.id for d in read_corpus(f, "alce", rep)] == ["d1", "d2"] and rep.problems == {}


def test_folder_samples_and_family_scores(tmp_path):
    with pytest.raises(DataError, match="no samples.jsonl \\(give a conner folder\\)"):
        jsonl.folder_samples(tmp_path, "a conner folder")
    (tmp_path / "samples.jsonl").write_bytes(
        b'{"id": "a", "scores": {"conner": {"relevance": 0.5}}}\nnot json\n{"id": "b", "scores": {"alce": {}}}\n'
        b'{"id": "c", "scores": ["x"]}\n["list"]\n{"id": "\xff", "scores": {"conner": {"relevance": 1}}}\n{"id": "torn", "sc'
    )
    records = list(jsonl.folder_samples(tmp_path, "a conner folder"))
    assert [r["id"] for r in records] == ["a", "b", "c", "\ufffd"]  # a bad line, a list and a torn line skipped
    assert [jsonl.family_scores(r, "conner") for r in records] == [{"relevance": 0.5}, None, None, {"relevance": 1}]
