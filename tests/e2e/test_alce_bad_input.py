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
