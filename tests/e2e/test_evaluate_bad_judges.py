"""``vericite evaluate`` with a judge that fails: one that raises (not a model server's BackendError) or gives back
no list of judgements is one line naming it and exit 2, not a traceback; one whose judgements are garbage (NaN,
a string, 7.0 as the probability) has them counted as unparseable and its answers left out, never scored."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from vericite import registry
from vericite.cli.main import cli
from vericite.types import Judgement

ITEM = {"sample_id": "q1", "question": "Who wrote it?", "docs": [{"title": "Song", "text": "Paul Simon wrote the song."}],
        "qa_pairs": [{"question": "Who?", "short_answers": ["Paul Simon"]}], "output": "Paul Simon wrote it [1]."}  # fmt: skip


class Bad:
    id = "bad@1"
    labels = ("supported", "not_supported")

    def __init__(self, how):
        self.how = how

    def judge(self, pairs):
        if self.how == "raise":
            raise RuntimeError("judge exploded")
        if self.how == "none":
            return None
        p = {"nan": float("nan"), "str": "0.9", "big": 7.0}[self.how]
        return [Judgement(self.id, x.claim, x.evidence, p, "supported") for x in pairs]


@pytest.fixture()
def result(tmp_path):
    f = tmp_path / "result.json"
    f.write_text(json.dumps({"args": {"dataset_name": "asqa"}, "data": [ITEM]}), encoding="utf-8")
    return f


def evaluate(tmp_path, result, how):
    registry.judges.register("bad", lambda arg, *, ctx, **o: Bad(how), replace=True)
    try:
        return CliRunner().invoke(cli, ["evaluate", "-q", "--resamples", "20", "--task", "alce", "--input", str(result), "--judge", "bad",
                                        "--metrics", "alce_citation_recall", "--out", str(tmp_path / "ev")])  # fmt: skip
    finally:
        registry.judges.unregister("bad")


@pytest.mark.parametrize("how, why", [("raise", "failed on a call of 1 pairs: RuntimeError: judge exploded"), ("none", "judge bad@1 failed")])
def test_a_judge_that_raises_is_one_line(tmp_path, result, how, why):
    r = evaluate(tmp_path, result, how)
    assert r.exit_code == 2 and why in r.output and "Traceback" not in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


@pytest.mark.parametrize("how", ["nan", "str", "big"])
def test_garbage_judgements_are_unparseable_never_a_score(tmp_path, result, how):
    r = evaluate(tmp_path, result, how)
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["counts"]["unparseable_judgements"] == 1
    m = res["metrics"]["alce_citation_recall"]
    assert m["value"] is None and m["n"] == 0 and m["details"]["answers_unjudged"] == 1  # 7.0 was "entailed": recall 1.0
