"""The table judge: verdicts looked up, matched after whitespace is tidied; a missing pair fails (never a default);
a bad table is one error line."""

from __future__ import annotations

import json

import pytest

from vericite.errors import VericiteError
from vericite.judges.table import TableJudge, table_key
from vericite.registry import create
from vericite.types import JudgePair


def write(tmp_path, rows, name="t.jsonl"):
    f = tmp_path / name
    f.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return f


def test_matching_tidies_whitespace_before_punctuation():
    assert table_key("  Title: A\nB  ,  c .\t") == "Title: A B, c."


def test_lookup_and_missing_pairs(tmp_path):
    f = write(tmp_path, [{"premise": "Title: Paris\nParis is in France .", "hypothesis": "Paris is in France.", "entailed": True},
                         {"premise": "x", "hypothesis": "y", "entailed": False}])  # fmt: skip
    j = create("judges", f"table:{f}")
    out = j.judge([JudgePair("Title: Paris Paris is in France.", "Paris is in  France ."), JudgePair("x", "y"), JudgePair("x", "z")])
    assert [(o.probability, o.status) for o in out] == [(1.0, "ok"), (0.0, "ok"), (None, "failed")]
    assert j.missing == 1 and j.id.startswith("table:") and j.id.endswith("@1") and j.options()["pairs"] == 2


@pytest.mark.parametrize(
    "rows, why",
    [
        (["not json"], "line 1: not JSON"),
        ([{"premise": "a", "hypothesis": "b"}], "line 1: want"),
        ([{"premise": "a", "hypothesis": "b", "entailed": True}, {"premise": "a ", "hypothesis": "b", "entailed": False}], "line 2: this pair was given the other verdict"),
    ],
)
def test_a_bad_table_is_one_line(tmp_path, rows, why):
    with pytest.raises(VericiteError, match=why):
        TableJudge(write(tmp_path, rows))


def test_a_missing_file_or_spec(tmp_path):
    with pytest.raises(VericiteError, match="cannot be read"):
        create("judges", f"table:{tmp_path / 'none.jsonl'}")
    with pytest.raises(VericiteError, match="needs its file"):
        create("judges", "table")


def test_bytes_not_utf8_are_one_line_not_a_table_that_matches_nothing(tmp_path):
    # read as U+FFFD, "café" never matched its pair: every judgement of it failed, with no word on why
    f = tmp_path / "t.jsonl"
    f.write_bytes(b'{"premise": "a", "hypothesis": "b", "entailed": true}\n{"premise": "caf\xe9", "hypothesis": "b", "entailed": true}\n')
    with pytest.raises(VericiteError, match=r"t.jsonl, line 2: not UTF-8 \(byte 17 of the line\)"):
        TableJudge(f)
    f.write_bytes('{"premise": "caf\u00e9", "hypothesis": "b", "entailed": true}\r\n'.encode())  # UTF-8, CRLF: read
    assert TableJudge(f).judge([JudgePair("caf\u00e9", "b")])[0].label == "supported"


@pytest.mark.parametrize("text", ["", "\n\n  \n", "\r\n"])
def test_a_table_with_no_verdict_is_refused_when_built_naming_the_file(tmp_path, text):
    # it used to be built, and then failed every pair at scoring time ("pair not in the table")
    f = tmp_path / "empty.jsonl"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(VericiteError, match=r"judge table .*empty\.jsonl: holds no verdict"):
        create("judges", f"table:{f}")
