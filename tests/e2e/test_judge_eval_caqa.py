"""``vericite judge-eval --task caqa``: a four-class judge on a built CAQA file, and a predictions file."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.support.caqa import write_pool
from vericite.cli.main import cli
from vericite.paths import file_sha256


def built(tmp_path):
    pool = write_pool(tmp_path)
    out = tmp_path / "caqa.jsonl"
    r = CliRunner().invoke(cli, ["build", "caqa", "--pool", str(pool), "--n", "60", "--verbalise", "template", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return out


def test_judge_eval_caqa_with_a_judge(tmp_path):
    data = built(tmp_path)
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(data), "--split", "train", "--out", str(tmp_path / "c1"), "-q"])
    assert r.exit_code == 0, r.output
    assert "macro_f1" in r.output and "micro_f1_concatenation" in r.output and "pairs/s" in r.output
    res = json.loads((tmp_path / "c1" / "results.json").read_text())
    n_train = sum(1 for line in data.read_text().splitlines() if json.loads(line)["split"] == "train")
    assert res["figures"]["n"] == n_train and res["judge"] == "fake-4class@1" and res["task"] == "caqa"
    assert res["data_sha256"] == file_sha256(data)  # the bytes judged, as --task pairs records them
    assert len((tmp_path / "c1" / "judgements.jsonl").read_text().splitlines()) == n_train
    j = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "autois:fake", "--data", str(data), "--out", str(tmp_path / "c3"), "-q", "--json"])
    assert j.exit_code == 0, j.output
    body = json.loads(j.stdout)
    assert {m["metric"] for m in body["metrics"]} >= {"f1_supportive", "binary_micro_f1", "unparseable"}


def test_judge_eval_caqa_predictions(tmp_path):
    p = tmp_path / "preds.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [
        {"label": "supportive", "prediction": "Supportive", "complexity": "single", "human_label": "supportive"},
        {"label": "contradictory", "prediction": "It contradicts it", "complexity": "union", "human_label": "insufficient"},
        {"label": "weird", "prediction": "x", "complexity": "single"},
    ]))
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--predictions", str(p), "--out", str(tmp_path / "c2")])
    assert r.exit_code == 0, r.output
    assert "unknown labels left out: 'weird' 1" in r.output and "Cohen's kappa" in r.output
    res = json.loads((tmp_path / "c2" / "results.json").read_text())
    assert res["figures"]["micro_f1"] == 1.0 and res["predictions_sha256"] == file_sha256(p)


def test_judge_eval_caqa_mistakes_are_one_line(tmp_path):
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--out", str(tmp_path / "x")])
    assert r.exit_code != 0 and "--predictions" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--judge", "fake-4class", "--data", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "y")])
    assert r.exit_code != 0 and "no CAQA dataset" in r.output
    r = CliRunner().invoke(cli, ["judge-eval", "--out", str(tmp_path / "z")])
    assert r.exit_code != 0 and "--judge" in r.output


def test_an_interrupted_run_keeps_its_judgements_and_resume_judges_only_the_rest(tmp_path, monkeypatch):
    """Ctrl-C after the first batch: the message's promise holds; --resume asks the judge only the items not judged
    yet, and the figures equal an uninterrupted run's."""
    from vericite import registry
    from vericite.fakes.judges import FourClassJudge

    asked: list[int] = []

    class Flaky(FourClassJudge):  # the same id as fake-4class: its judgements are the ones resumed
        def __init__(self, stop_after: int | None) -> None:
            self.stop_after = stop_after

        def judge(self, pairs):
            if self.stop_after is not None and len(asked) >= self.stop_after:
                raise KeyboardInterrupt
            asked.append(len(pairs))
            return super().judge(pairs)

    registry.judges.register("flaky-4class", lambda arg, *, ctx, **o: Flaky(int(arg) if arg else None))
    try:
        data = built(tmp_path)
        base = ["judge-eval", "--task", "caqa", "--data", str(data), "--batch-size", "8", "-q"]
        whole = CliRunner().invoke(cli, [*base, "--judge", "fake-4class", "--out", str(tmp_path / "whole")])
        assert whole.exit_code == 0, whole.output
        n = json.loads((tmp_path / "whole" / "results.json").read_text())["figures"]["n"]
        r = CliRunner().invoke(cli, [*base, "--judge", "flaky-4class:2", "--out", str(tmp_path / "cut")])
        assert r.exit_code == 130 and "rerun with --resume" in r.output, r.output
        assert not (tmp_path / "cut" / "results.json").exists()
        kept = [json.loads(x) for x in (tmp_path / "cut" / "judgements.jsonl").read_text().splitlines()]
        assert len(kept) == 16 and all(k["judge"] == "fake-4class@1" and k["question"] for k in kept)
        asked.clear()
        r = CliRunner().invoke(cli, [*base, "--judge", "flaky-4class", "--out", str(tmp_path / "cut"), "--resume"])
        assert r.exit_code == 0, r.output
        assert sum(asked) == n - 16  # only the items not judged before
        cut = json.loads((tmp_path / "cut" / "results.json").read_text())
        ref = json.loads((tmp_path / "whole" / "results.json").read_text())
        assert cut["resumed_pairs"] == 16 and ref["resumed_pairs"] == 0
        assert cut["figures"] == ref["figures"]
        lines = lambda d: [(x["claim"], x["evidence"], x["question"], x["label"]) for x in map(json.loads, (tmp_path / d / "judgements.jsonl").read_text().splitlines())]  # noqa: E731
        assert lines("cut") == lines("whole")  # rewritten in the data's order
        # another judge's judgements are not taken for this one's
        asked.clear()
        r = CliRunner().invoke(cli, [*base, "--judge", "autois:fake", "--out", str(tmp_path / "cut"), "--resume"])
        assert r.exit_code == 0 and json.loads((tmp_path / "cut" / "results.json").read_text())["resumed_pairs"] == 0
    finally:
        registry.judges.unregister("flaky-4class")
    r = CliRunner().invoke(cli, ["judge-eval", "--task", "caqa", "--predictions", str(data), "--resume", "--out", str(tmp_path / "p")])
    assert r.exit_code != 0 and "--resume" in r.output and "Traceback" not in r.output
