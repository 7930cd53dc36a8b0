"""Issue 9, defect 1: every model role of a command (answers, the LLM judge, G-Eval, the dataset builder,
judge-eval) goes to the server given with --base-url, and nothing goes anywhere else: not to
$OPENAI_BASE_URL, not to OpenAI. Two local servers: the one named on the command line, and a decoy named in
the environment; every outgoing connection of the process is recorded (and any but the named one refused)."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner

from vericite.cli.main import cli
from vericite.errors import BackendError
from vericite.models.openai_compat import OpenAICompatBackend
from vericite.types import GenParams

from tests.support.builder import hand_pool, writer
from tests.support.httpfake import ConnectionRecorder, FakeOpenAIServer
from tests.support.pipeline import citing_reply

ENV_KEY = "sk-env-key-123"
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy")


@pytest.fixture()
def servers(monkeypatch, tmp_path):
    """(given, decoy, recorder): $OPENAI_BASE_URL names the decoy, with a key; only the given server may be reached."""
    with FakeOpenAIServer(citing_reply) as given, FakeOpenAIServer(citing_reply) as decoy:
        for var in PROXY_VARS:
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("OPENAI_BASE_URL", decoy.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
        monkeypatch.setenv("VERICITE_CACHE", str(tmp_path / "cache"))
        monkeypatch.setattr("vericite.models.openai_http._announced", set())
        rec = ConnectionRecorder({("127.0.0.1", given.port)}).install(monkeypatch)
        yield given, decoy, rec


def only_the_given_server(given, decoy, rec):
    assert given.requests, "nothing reached the server given with --base-url"
    assert decoy.requests == [], f"requests went to $OPENAI_BASE_URL: {decoy.paths()}"
    assert rec.connections and set(rec.connections) == {("127.0.0.1", given.port)}, rec.connections
    assert set(rec.lookups) <= {"127.0.0.1"}, rec.lookups  # no name was even looked up (api.openai.com)
    # the key goes to the server that was named, and only there
    assert {r["headers"].get("Authorization") for r in given.requests} == {f"Bearer {ENV_KEY}"}


def answers_file(tmp_path):
    rows = [
        {"id": "a", "question": "What did Ann do?", "answer": "Ann was a painter [Q1, occupation: painter].",
         "knowledge": [{"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]},
        {"id": "b", "question": "Where was Bo born?", "answer": "Bo was born in Rome [Q2, place of birth: Rome]. He liked tea [NA].",
         "knowledge": [{"subject": "Q2", "subject_label": "Bo", "property": "place of birth", "value": "Rome"}]},
    ]
    p = tmp_path / "answers.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_evaluate_llm_judge_and_geval_use_the_given_base_url(servers, tmp_path):
    given, decoy, rec = servers
    r = CliRunner().invoke(cli, [
        "evaluate", "-i", str(answers_file(tmp_path)), "-o", str(tmp_path / "ev"), "--judge", "llm:openai:foo",
        "--geval-model", "openai:foo", "--base-url", given.base_url, "--no-cache", "-q",
    ])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "ev" / "results.json").read_text())
    assert res["judges"]["alignment"]["id"].startswith("llm:openai:foo@")
    assert res["metrics"]["alignment_micro"]["value"] is not None  # judged from the server's log-probs
    judge_calls = [q for q in given.requests if q["path"] == "/v1/chat/completions" and q["body"].get("max_tokens") == 1]
    assert judge_calls and all(q["body"]["logprobs"] and q["body"]["top_logprobs"] == 20 for q in judge_calls)
    only_the_given_server(given, decoy, rec)
    # the key from $OPENAI_API_KEY went to a server that is not OpenAI's: said once, on stderr, with its host
    told = [line for line in r.stderr.splitlines() if "sending the API key" in line]
    assert told == [f"vericite: sending the API key from $OPENAI_API_KEY to 127.0.0.1:{given.port}, not OpenAI's server "
                    "(run without it, env -u OPENAI_API_KEY ..., if this server needs none)"]
    assert ENV_KEY not in r.output


def test_the_key_is_refused_over_plain_http_to_another_host(servers, tmp_path):
    given, decoy, rec = servers
    r = CliRunner().invoke(cli, [
        "evaluate", "-i", str(answers_file(tmp_path)), "-o", str(tmp_path / "ev"), "--judge", "llm:openai:foo",
        "--base-url", "http://judge-server.test:8000", "--no-cache", "-q",
    ])
    assert r.exit_code != 0 and isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output and r.output.strip().count("\n") == 0, r.output
    assert "refusing to send the API key from $OPENAI_API_KEY over plain http to judge-server.test:8000" in r.output
    assert ENV_KEY not in r.output
    assert rec.connections == [] and rec.lookups == [] and given.requests == [] and decoy.requests == []
    assert not (tmp_path / "ev" / "results.json").exists()


def test_run_config_sends_answers_judge_and_geval_to_its_base_url(servers, tmp_path):
    given, decoy, rec = servers
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": "What did Ann do?", "knowledge": [
        {"subject": "Q1", "subject_label": "Ann", "property": "occupation", "value": "painter"}]}) + "\n")
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"name: t\ndataset: {questions}\nmodel: openai:foo\njudge: llm:openai:foo\ngeval_model: openai:foo\nbase_url: {given.base_url}\n")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run"), "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    res = json.loads((tmp_path / "run" / "results.json").read_text())
    assert res["judges"]["alignment"]["id"].startswith("llm:openai:foo@")
    only_the_given_server(given, decoy, rec)
    # and --base-url on the command line overrides the config's
    given.requests.clear()
    cfg.write_text(f"name: t\ndataset: {questions}\nmodel: openai:foo\njudge: llm:openai:foo\nbase_url: http://127.0.0.1:9/v1\n")
    r = CliRunner().invoke(cli, ["run", str(cfg), "-o", str(tmp_path / "run2"), "--base-url", given.base_url, "--no-cache", "-q"])
    assert r.exit_code == 0, r.output
    only_the_given_server(given, decoy, rec)


def test_judge_eval_uses_the_given_base_url(servers, tmp_path):
    given, decoy, rec = servers
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        json.dumps({"evidence": "Ann was a painter.", "claim": "Ann painted.", "label": "SUPPORTS"}) + "\n"
        + json.dumps({"evidence": "Ann was a painter.", "claim": "Ann was a baker.", "label": "REFUTES"}) + "\n"
    )
    r = CliRunner().invoke(cli, [
        "judge-eval", "--judge", "llm:openai:foo", "--data", str(data), "--out", str(tmp_path / "je"),
        "--base-url", given.base_url, "--no-cache", "-q",
    ])
    assert r.exit_code == 0, r.output
    assert any(q["path"] == "/v1/chat/completions" for q in given.requests)
    only_the_given_server(given, decoy, rec)


def test_builder_uses_the_given_base_url(servers, tmp_path):
    given, decoy, rec = servers
    given.reply = writer()
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps(hand_pool()))
    r = CliRunner().invoke(cli, [
        "build", "biokalma", "--pool", str(pool), "--out", str(tmp_path / "d.jsonl"), "--n", "1", "--iterations", "3",
        "--min-gold", "2", "--model", "openai:foo", "--base-url", given.base_url, "--no-cache", "-q",
    ])
    assert r.exit_code == 0, r.output
    assert "1 entries" in r.output
    assert {"/v1/chat/completions", "/v1/completions"} <= set(given.paths())  # sentences and perplexities
    only_the_given_server(given, decoy, rec)


def test_a_redirect_is_not_followed_so_the_key_stays_with_the_named_server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.url.host, request.headers.get("authorization")))
        return httpx.Response(307, headers={"location": "http://elsewhere.test/v1/chat/completions"})

    b = OpenAICompatBackend("m", "https://named.test", transport=httpx.MockTransport(handler), backoff=0)
    with pytest.raises(BackendError, match="redirect to http://elsewhere.test.*not followed"):
        b.generate([[{"role": "user", "content": "hi"}]], GenParams())
    assert seen == [("named.test", f"Bearer {ENV_KEY}")]
