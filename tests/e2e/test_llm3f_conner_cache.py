"""llm3f after llm3 on the same CONNER knowledge asks the model nothing: both judges built as `vericite evaluate --task
conner` builds them (registry, the fit file naming the model) ask the same per-pair calls, so the call cache answers
every factuality and validity judgement of the second run (the fake model behind the real CachedBackend)."""

from __future__ import annotations

import json
import sqlite3

from click.testing import CliRunner

from vericite.cli.main import cli

LINES = [
    {"id": "a", "query": "What is the capital of Italy?", "knowledge": "Rome is the capital of Italy. Rome is old. It lies on the Tiber.",
     "answer": "Rome", "evidence": ["Rome is the capital of Italy and is old.", "The Tiber flows through Rome."]},
    {"id": "b", "query": "Who wrote Hamlet?", "knowledge": "Hamlet was written by Shakespeare. It is a play.", "answer": "Shakespeare",
     "evidence": ["Shakespeare wrote Hamlet around 1600.", "Hamlet is a tragedy."]},
]
REST = ["--lm", "fake", "--relevance-model", "fake", "-q", "--resamples", "20"]


def rows(db) -> dict[str, int]:
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT kind, COUNT(*) FROM calls GROUP BY kind").fetchall())


def judged(out) -> dict[tuple[str, str, str], dict]:
    """(purpose, evidence, claim) -> the label log-masses the judge read from the model."""
    got = {}
    for line in (out / "samples.jsonl").read_text().splitlines():
        for j in json.loads(line).get("judgements", []):
            got[(j["purpose"], j["evidence"], j["claim"])] = json.loads(j["raw"])["label_logmass"]
    return got


def test_llm3f_after_llm3_on_the_same_knowledge_is_answered_by_the_call_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("VERICITE_CACHE", str(cache))
    pairs, fit = tmp_path / "pairs.jsonl", tmp_path / "fit.json"
    labels = ("supports", "refutes", "not_enough_info")
    pairs.write_text("".join(json.dumps({"evidence": f"evidence {i}", "claim": f"claim {i}", "label": labels[i % 3]}) + "\n" for i in range(9)), encoding="utf-8")
    r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "fake", "--data", str(pairs), "--no-cache", "--out", str(fit), "-q"])
    assert r.exit_code == 0, r.output
    knowledge = tmp_path / "k.jsonl"
    knowledge.write_text("".join(json.dumps(x) + "\n" for x in LINES), encoding="utf-8")

    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(knowledge), "-o", str(tmp_path / "llm3"), "--judge", "llm3:fake", *REST])
    assert r.exit_code == 0, r.output
    first = rows(cache / "calls.sqlite")
    asked = judged(tmp_path / "llm3")
    assert {p for p, _, _ in asked} == {"factuality", "validity"} and len(asked) >= 10 and sum(first.values()) > 0

    r = CliRunner().invoke(cli, ["evaluate", "--task", "conner", "-i", str(knowledge), "-o", str(tmp_path / "llm3f"), "--judge", f"llm3f:{fit}", *REST])
    assert r.exit_code == 0, r.output
    assert rows(cache / "calls.sqlite") == first  # no call of any kind reached the model: every one was a hit
    assert judged(tmp_path / "llm3f") == asked  # the same pairs, read from the same answers
    res = json.loads((tmp_path / "llm3f" / "results.json").read_text())
    assert res["judges"]["factuality"]["id"].startswith("llm3f:fake:")


def test_vericite_run_with_llm3f_after_llm3_asks_the_run_model_nothing(tmp_path, monkeypatch):
    """As on the real runs: `vericite run` of conner-sources (levels 3 then 1) with the run's own model as the
    judge's (the judge gets the run's backend, runs/runner.py run_judge), llm3 first, then the same config with
    llm3f: no call of any kind reaches the model."""
    from tests.e2e.test_conner_run import reply
    from vericite import registry
    from vericite.models.fake import FakeBackend

    monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
    registry.backends.register("conner-script", lambda arg, *, ctx, **o: FakeBackend("conner-script", replies=reply), replace=True)
    try:
        items = [{"id": f"q{i}", "question": f"What is the capital of Italy, part {i}?", "answers": [["Rome"]],
                  "meta": {"topic": "Italy", "reference_knowledge": f"Rome is the capital of Italy. Italy part {i} is old."}} for i in range(6)]
        data = tmp_path / "qs.jsonl"
        data.write_text("".join(json.dumps(x) + "\n" for x in items), encoding="utf-8")
        corpus = tmp_path / "corpus.jsonl"
        corpus.write_text(json.dumps({"id": "d1", "title": "Rome", "text": "Rome is the capital of Italy. Rome is an old city on the Tiber."}) + "\n", encoding="utf-8")
        r = CliRunner().invoke(cli, ["docs", "index", str(corpus), "--index", str(tmp_path / "idx"), "-q"])
        assert r.exit_code == 0, r.output
        pairs, fit = tmp_path / "pairs.jsonl", tmp_path / "fit.json"
        labels = ("supports", "refutes", "not_enough_info")
        pairs.write_text("".join(json.dumps({"evidence": f"evidence {i}", "claim": f"claim {i}", "label": labels[i % 3]}) + "\n" for i in range(9)), encoding="utf-8")
        r = CliRunner().invoke(cli, ["train", "llm3f", "--model", "conner-script", "--data", str(pairs), "--no-cache", "--out", str(fit), "-q"])
        assert r.exit_code == 0, r.output

        def config(name, judge):
            p = tmp_path / f"{name}.yaml"
            p.write_text(f"name: {name}\ndataset: {data}\nmodel: conner-script\nmethod: conner-knowledge\n"
                         f"method_args: {{shot: 2, index: {tmp_path / 'idx'}, max_tokens: 50}}\ntask: conner\njudge: {judge}\n"
                         f"relevance_model: fake\nevidence_index: {tmp_path / 'idx'}\nresamples: 20\nexperiment: conner-sources\nlevels: [3, 1]\n", encoding="utf-8")
            return p

        r = CliRunner().invoke(cli, ["run", str(config("a", "llm3:conner-script")), "-o", str(tmp_path / "a"), "-q", "--limit", "4"])
        assert r.exit_code == 0, r.output
        first = rows(tmp_path / "cache" / "calls.sqlite")
        assert first.get("next_token_logprobs", 0) > 0
        r = CliRunner().invoke(cli, ["run", str(config("f", f"llm3f:{fit}")), "-o", str(tmp_path / "f"), "-q", "--limit", "4"])
        assert r.exit_code == 0, r.output
        assert rows(tmp_path / "cache" / "calls.sqlite") == first
        for level in ("level-3", "level-1"):
            a, f = judged(tmp_path / "a" / level / "eval"), judged(tmp_path / "f" / level / "eval")
            assert a == f and any(p == "factuality" for p, _, _ in f)
    finally:
        registry.backends.unregister("conner-script")
