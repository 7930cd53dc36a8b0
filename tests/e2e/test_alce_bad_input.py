"""``vericite evaluate --task alce`` on malformed ALCE items found by the bad-input audit (notes/badinput-report.md):
each is a bad line with its reason, never a silent score."""

from __future__ import annotations

import json

from click.testing import CliRunner

from vericite.cli.main import cli

DOCS = [{"title": "Song", "text": "Paul Simon wrote the song."}]


def item(sid, **kw):
    return {"sample_id": sid, "question": "Who wrote it?", "docs": DOCS, "output": "Paul Simon wrote it [1].",
            "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}], **kw}  # fmt: skip


def test_a_qa_pair_without_short_answers_is_a_bad_line_not_str_em_zero(tmp_path):
    f = tmp_path / "result.json"
    items = [item("ok"), item("no-short", qa_pairs=[{"question": "Who?"}]), item("null-short", qa_pairs=[{"question": "Who?", "short_answers": None}]),
             item("empty-short", qa_pairs=[{"question": "Who?", "short_answers": []}])]  # fmt: skip
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": items}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--metrics", "str_em", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert {b["id"]: b["reason"][:44] for b in res["bad_lines"]} == {"no-short": "a QA pair needs its 'short_answers' (a list ", "null-short": "a QA pair needs its 'short_answers' (a list "}
    # an empty list is ALCE's own case (exact_presence of nothing: 0), kept
    assert res["metrics"]["str_em"]["n"] == 2 and res["metrics"]["str_em"]["value"] == 0.5


def test_an_output_that_is_not_a_string_says_so(tmp_path):
    f = tmp_path / "result.json"
    f.write_text(json.dumps({"args": {}, "data": [item("ok"), item("num", output=42), item("list", output=["a"]), item("null", output=None)]}), encoding="utf-8")
    r = CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(f), "--metrics", "str_em", "--out", str(tmp_path / "ev")])
    assert r.exit_code == 0, r.output
    why = {b["id"]: b["reason"] for b in json.loads((tmp_path / "ev" / "results.json").read_text())["bad_lines"]}
    assert why["num"].startswith("field 'answer' is not a string but int 42 (the model output as a string (ALCE's output))")  # was "missing field"
    assert why["list"].startswith("field 'answer' is not a string but list ['a']")
    assert why["null"].startswith("missing field 'answer'")
