"""``vericite judge-eval`` reports what its judge's model calls cost (results.json ``judge_usage``, per model name,
and ``judge_usage_note``), for every task, with an LLM judge over the deterministic fake model."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.alce_human import write_mini
from tests.support.caqa import write_pool
from vericite.cli.main import cli

PAIRS = [
    {"evidence": "Ann was born in Rome.", "claim": "Ann was born in Rome.", "label": "SUPPORTS"},
    {"evidence": "Ann was born in Rome.", "claim": "Ann was born in Paris.", "label": "REFUTES"},
    {"evidence": "Bob paints.", "claim": "Bob is a painter.", "label": "SUPPORTS"},
]


def run(*args):
    r = CliRunner().invoke(cli, ["judge-eval", *map(str, args), "-q", "--no-cache"])
    assert r.exit_code == 0, r.output
    return r


def stdout_json(*args):
    """--json's stdout carries the same judge_usage as results.json."""
    r = CliRunner().invoke(cli, ["judge-eval", *map(str, args), "-q", "--no-cache", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def results(out):
    return json.loads((out / "results.json").read_text())


def caqa_data(tmp_path):
    out = tmp_path / "caqa.jsonl"
    r = CliRunner().invoke(cli, ["build", "caqa", "--pool", str(write_pool(tmp_path)), "--n", "24", "--verbalise", "template", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    return out


def test_pairs_reports_the_fake_models_tokens(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    r = run("--judge", "llm:fake", "--data", data, "--out", tmp_path / "o")
    res = results(tmp_path / "o")
    used = res["judge_usage"]["fake"]
    assert set(res["judge_usage"]) == {"fake"} and used["calls"] == len(PAIRS) and used["completion_tokens"] == len(PAIRS)
    assert used["prompt_tokens"] > 0 and "uncounted_calls" not in used and res["judge_usage_note"] == ""
    assert f"judge tokens: fake: {used['prompt_tokens']} prompt + {len(PAIRS)} completion tokens in {len(PAIRS)} calls" in r.output
    # the count is the fake's own report of each prompt, not a guess: the same prompts judged again cost the same
    again = run("--judge", "llm:fake", "--data", data, "--out", tmp_path / "o2", "--batch-size", "1")
    assert results(tmp_path / "o2")["judge_usage"] == res["judge_usage"] and again.output.count("judge tokens") == 1
    assert stdout_json("--judge", "llm:fake", "--data", data, "--out", tmp_path / "o3")["judge_usage"] == res["judge_usage"]


def test_a_judge_without_a_model_reports_none(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    r = run("--judge", "fake", "--data", data, "--out", tmp_path / "o")
    assert results(tmp_path / "o")["judge_usage"] == {} and "judge tokens: none" in r.output


def test_calls_of_unknown_tokens_are_said_not_counted_as_zero(tmp_path, monkeypatch):
    """A model that cannot report a next-token call's tokens (no ``next_token_logprobs_usage``): its calls are
    ``uncounted_calls`` and the note says the counts are a lower bound."""
    import vericite.models as models
    from vericite.models.fake import FakeBackend

    class Silent:  # a scorer that does not say what its calls cost
        def __init__(self) -> None:
            self.inner = FakeBackend()

        def identity(self):
            return self.inner.identity()

        def generate(self, prompts, params):
            return self.inner.generate(prompts, params)

        def next_token_logprobs(self, prompts, candidates):
            return self.inner.next_token_logprobs(prompts, candidates)

    real = models.load_model
    monkeypatch.setattr(models, "load_model", lambda name, **kw: Silent() if name == "fake" else real(name, **kw))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    r = run("--judge", "llm:fake", "--data", data, "--out", tmp_path / "o")
    res = results(tmp_path / "o")
    assert res["judge_usage"]["fake"] == {"prompt_tokens": 0, "completion_tokens": 0, "calls": 3, "uncounted_calls": 3}
    assert "lower bound" in res["judge_usage_note"] and "3 of unknown tokens" in r.output


def test_alce_human_reports_the_fake_models_tokens(tmp_path):
    data = write_mini(tmp_path)
    run("--task", "alce-human", "--judge", "llm:fake", "--data", data, "--out", tmp_path / "o")
    res = results(tmp_path / "o")
    n = res["counts"]["distinct_pairs"]
    assert res["judge_usage"]["fake"]["calls"] == n and res["judge_usage"]["fake"]["completion_tokens"] == n
    assert res["judge_usage"]["fake"]["prompt_tokens"] > 0 and res["judge_usage_note"] == ""
    assert stdout_json("--task", "alce-human", "--judge", "llm:fake", "--data", data, "--out", tmp_path / "o2")["judge_usage"] == res["judge_usage"]
    # --resume over a finished run: every judgement kept, none asked, and the note says the kept ones are not counted
    r = run("--task", "alce-human", "--judge", "llm:fake", "--data", data, "--out", tmp_path / "o", "--resume")
    again = results(tmp_path / "o")
    assert again["resumed_pairs"] == n and sum(u["calls"] for u in again["judge_usage"].values()) == 0
    assert f"the {n} judgements kept by --resume" in again["judge_usage_note"] and "not counted" in r.output


def test_caqa_reports_the_fake_models_tokens_and_resume_counts_this_process_only(tmp_path):
    data = caqa_data(tmp_path)
    base = ["--task", "caqa", "--judge", "llm4:fake", "--data", data]
    r = run(*base, "--out", tmp_path / "whole")
    whole = results(tmp_path / "whole")
    n = whole["figures"]["n"]
    used = whole["judge_usage"]["fake"]
    assert used["calls"] >= n and used["prompt_tokens"] > 0 and whole["judge_usage_note"] == ""
    assert "judge tokens: fake:" in r.output
    assert stdout_json(*base, "--out", tmp_path / "j")["judge_usage"] == whole["judge_usage"]
    # an interrupted run kept the first 10 judgements: --resume asks only the rest, and counts only those calls
    cut = tmp_path / "cut"
    cut.mkdir()
    lines = (tmp_path / "whole" / "judgements.jsonl").read_text().splitlines(keepends=True)
    (cut / "judgements.jsonl").write_text("".join(lines[:10]))
    run(*base, "--out", cut, "--resume")
    part = results(cut)
    assert part["resumed_pairs"] == 10 and part["figures"] == whole["figures"]
    rest = part["judge_usage"]["fake"]
    assert 0 < rest["calls"] < used["calls"] and rest["prompt_tokens"] < used["prompt_tokens"]
    assert "this process's calls only" in part["judge_usage_note"] and "10 judgements" in part["judge_usage_note"]


def test_caqa_predictions_have_no_judge_usage(tmp_path):
    p = tmp_path / "preds.jsonl"
    p.write_text(json.dumps({"label": "supportive", "prediction": "Supportive", "complexity": "single"}) + "\n")
    run("--task", "caqa", "--predictions", p, "--out", tmp_path / "o")
    assert "judge_usage" not in results(tmp_path / "o")


def test_calls_the_call_cache_answers_count_as_evaluate_counts_them(tmp_path, monkeypatch):
    """The fake model behind the real call cache: a second judge-eval of the same pairs asks the model nothing (every
    call answered by the cache) and reports the same ``judge_usage``, the tokens first reported, as ``evaluate``'s
    ``judge_usage`` and generate's ``usage`` count cached calls (docs/results-format.md; README; models/usage.py)."""
    from vericite.models.fake import FakeBackend

    asked = []
    real = FakeBackend.next_token_logprobs

    def counted(self, prompts, candidates):
        asked.extend(prompts)
        return real(self, prompts, candidates)

    monkeypatch.setattr(FakeBackend, "next_token_logprobs", counted)
    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    got = []
    for name in ("first", "again"):
        asked.clear()
        r = CliRunner().invoke(cli, ["judge-eval", "--judge", "llm:fake", "--data", str(data), "--out", str(tmp_path / name), "-q"])
        assert r.exit_code == 0, r.output
        got.append((len(asked), results(tmp_path / name)["judge_usage"]))
    (first_asked, first), (again_asked, again) = got
    assert first_asked == len(PAIRS) and again_asked == 0  # the second run's calls all came from the cache
    assert again == first and first["fake"]["calls"] == len(PAIRS) and first["fake"]["prompt_tokens"] > 0
