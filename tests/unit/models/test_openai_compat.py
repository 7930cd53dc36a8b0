"""OpenAICompatBackend against a scripted HTTP transport: payloads, parsing, retries, errors, the key."""

from __future__ import annotations

import json
import math

import httpx
import pytest

from vericite.errors import BackendError
from vericite.models.openai_compat import OpenAICompatBackend, ServerUnreachableError
from vericite.types import GenParams

MSG = [{"role": "user", "content": "Is the sky blue?"}]


def chat_response(text="Yes.", logprobs=None, model="served-model"):
    choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    if logprobs is not None:
        choice["logprobs"] = {"content": logprobs}
    return {"model": model, "choices": [choice], "usage": {"prompt_tokens": 12, "completion_tokens": 2}}


class Script:
    """Answers requests from a list of (status, json) or exceptions, recording each request."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        a = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(a, Exception):
            raise a
        status, body, *headers = a
        return httpx.Response(status, json=body, headers=headers[0] if headers else None)


def backend(script, **kw):
    kw.setdefault("backoff", 0.0)
    return OpenAICompatBackend("my-model", "https://server.test:8000", transport=httpx.MockTransport(script), **kw)


def test_generate_payload_and_parse(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = Script((200, chat_response("Yes, it is.")))
    c = backend(s).generate([MSG], GenParams(max_tokens=7, temperature=0.0, seed=3, stop=("\n",)))[0]
    assert c.text == "Yes, it is." and c.prompt_tokens == 12 and c.completion_tokens == 2 and c.finish_reason == "stop"
    req = s.requests[0]
    assert str(req.url) == "https://server.test:8000/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-secret-123"
    body = json.loads(req.content)
    assert body == {"model": "my-model", "messages": MSG, "max_tokens": 7, "temperature": 0.0, "top_p": 1.0, "seed": 3, "stop": ["\n"]}


def test_top_logprobs_requested_and_parsed():
    lps = [
        {"token": "Yes", "logprob": -0.1, "top_logprobs": [{"token": "Yes", "logprob": -0.1}, {"token": "No", "logprob": -2.5}]},
        {"token": ".", "logprob": -0.3, "top_logprobs": [{"token": ".", "logprob": -0.3}, {"token": "!", "logprob": -1.9}]},
    ]
    s = Script((200, chat_response("Yes.", lps)))
    c = backend(s).generate([MSG], GenParams(top_logprobs=2))[0]
    body = json.loads(s.requests[0].content)
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    assert c.top_logprobs == [{"Yes": -0.1, "No": -2.5}, {".": -0.3, "!": -1.9}]


def test_missing_logprobs_is_a_clear_error():
    s = Script((200, chat_response("Yes.")))
    with pytest.raises(BackendError, match="returned no logprobs"):
        backend(s).generate([MSG], GenParams(top_logprobs=2))


def test_next_token_logprobs_from_top_alternatives():
    lps = [{"token": "Yes", "logprob": -0.2, "top_logprobs": [{"token": "Yes", "logprob": -0.2}, {"token": " Yes", "logprob": -3.0}, {"token": "No", "logprob": -1.8}]}]
    s = Script((200, chat_response("Yes", lps)))
    row = backend(s).next_token_logprobs([MSG], ["Yes", "No", "Maybe"])[0]
    assert row["Yes"] == pytest.approx(math.log(math.exp(-0.2) + math.exp(-3.0)))
    assert row["No"] == -1.8 and row["Maybe"] == -math.inf
    body = json.loads(s.requests[0].content)
    assert body["max_tokens"] == 1 and body["top_logprobs"] == 20


def test_next_token_usage_is_the_servers_and_unknown_when_it_reports_none():
    from vericite.models.usage import UsageMeter, metered
    from vericite.types import Usage

    lps = [{"token": "Yes", "logprob": -0.2, "top_logprobs": [{"token": "Yes", "logprob": -0.2}]}]
    with_usage = chat_response("Yes", lps)
    with_usage["usage"] = {"prompt_tokens": 12, "completion_tokens": 1}
    (row, usage), = backend(Script((200, with_usage))).next_token_logprobs_usage([MSG], ["Yes"])
    assert row == {"Yes": -0.2} and usage == Usage(12, 1, 1)
    bare = chat_response("Yes", lps)
    del bare["usage"]  # a server that reports no usage: tokens unknown, not zero
    b = backend(Script((200, bare)))
    assert b.next_token_logprobs_usage([MSG], ["Yes"])[0][1] is None
    meter = UsageMeter()
    metered(b, meter).next_token_logprobs([MSG, MSG], ["Yes"])
    assert meter.usage == Usage.unknown(2)


def test_retries_on_5xx_and_429_then_succeeds():
    s = Script((503, {"error": "busy"}), (429, {"error": {"message": "slow down"}}, {"retry-after": "0"}), (200, chat_response()))
    b = backend(s, max_retries=3)
    assert b.generate([MSG], GenParams())[0].text == "Yes."
    assert len(s.requests) == 3 and b.http.retries == 2


def test_gives_up_after_bounded_retries_with_one_line():
    s = Script((500, {"error": {"message": "internal"}}))
    b = backend(s, max_retries=2)
    with pytest.raises(ServerUnreachableError) as e:
        b.generate([MSG], GenParams())
    assert len(s.requests) == 3
    msg = str(e.value)
    assert "\n" not in msg and "after 3 attempts" in msg and "HTTP 500: internal" in msg


def test_backoff_is_exponential(monkeypatch):
    sleeps = []
    monkeypatch.setattr("vericite.models.openai_http.time.sleep", sleeps.append)
    s = Script(httpx.ConnectError("refused"))
    with pytest.raises(ServerUnreachableError, match="ConnectError"):
        backend(s, max_retries=3, backoff=0.25).generate([MSG], GenParams())
    assert sleeps == [0.25, 0.5, 1.0]


def test_client_error_is_not_retried_and_key_never_shown(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = Script((401, {"error": {"message": "invalid api key"}}))
    with pytest.raises(BackendError) as e:
        backend(s, max_retries=3).generate([MSG], GenParams())
    assert len(s.requests) == 1
    assert "HTTP 401: invalid api key" in str(e.value) and "sk-secret" not in str(e.value)


TOO_LONG = [
    {"error": {"message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", "code": "context_length_exceeded"}},
    {"object": "error", "message": "This model's maximum context length is 2048 tokens.", "code": 400},  # vLLM's older shape
    {"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context size (4096 tokens)", "type": "exceed_context_size_error"}},
]


@pytest.mark.parametrize("body", TOO_LONG, ids=["openai", "vllm", "llama.cpp-server"])
def test_a_prompt_past_the_servers_context_is_prompt_too_long_not_retried(body):
    """PromptTooLongError: a prompted judge then fails that pair alone (tests/unit/judges/test_prompted.py)."""
    from vericite.errors import PromptTooLongError

    script = Script((400, body))
    with pytest.raises(PromptTooLongError):
        backend(script, max_retries=3).next_token_logprobs([MSG], ["Yes", "No"])
    assert len(script.requests) == 1
    other = Script((400, {"error": {"message": "invalid model"}}))
    with pytest.raises(BackendError) as e:
        backend(other).generate([MSG], GenParams())
    assert not isinstance(e.value, PromptTooLongError)


def test_bad_responses():
    with pytest.raises(BackendError, match="no choices"):
        backend(Script((200, {"object": "x"}))).generate([MSG], GenParams())

    def not_json(request):
        return httpx.Response(200, text="<html>oops</html>")

    b = OpenAICompatBackend("m", "http://server.test", transport=httpx.MockTransport(not_json), backoff=0)
    with pytest.raises(BackendError, match="not JSON"):
        b.generate([MSG], GenParams())


def test_identity_is_the_servers_model_id():
    one = Script((200, {"data": [{"id": "/models/smol.gguf"}]}))
    assert backend(one).identity().model == "/models/smol.gguf"
    listed = Script((200, {"data": [{"id": "a"}, {"id": "my-model"}]}))
    ident = backend(listed).identity()
    assert ident.model == "my-model" and ident.backend == "openai" and ident.name == "openai:my-model"
    no_models_endpoint = Script((404, {"error": "not found"}))
    assert backend(no_models_endpoint).identity().model == "my-model"
    down = Script(httpx.ConnectError("refused"))
    with pytest.raises(ServerUnreachableError):
        backend(down, max_retries=0).identity()


def test_logprobs_via_echo():
    body = {
        "choices": [{"text": "The quick brown fox", "logprobs": {"token_logprobs": [None, -3.0, -2.0, -1.5, -0.7], "text_offset": [0, 3, 9, 15, 19], "tokens": ["The", " quick", " brown", " fox", " jumps"]}}],
        "usage": {"prompt_tokens": 4, "completion_tokens": 1},
    }
    s = Script((200, body))
    assert backend(s).logprobs(["The quick brown fox"]) == [[-3.0, -2.0, -1.5]]
    sent = json.loads(s.requests[0].content)
    assert sent["echo"] is True and sent["logprobs"] == 1 and str(s.requests[0].url).endswith("/v1/completions")


def test_logprobs_unsupported_says_so():
    s = Script((400, {"error": {"message": "echo is not supported"}}))
    with pytest.raises(BackendError, match="cannot score text"):
        backend(s).logprobs(["hello there"])
    s = Script((200, {"choices": [{"text": "x", "logprobs": None}]}))
    with pytest.raises(BackendError, match="cannot score text"):
        backend(s).logprobs(["hello there"])


def test_base_url_validation():
    with pytest.raises(BackendError, match="must start with http"):
        OpenAICompatBackend("m", "localhost:8000")


# ---------------------------------------------------------------- where the key may go


@pytest.fixture()
def fresh_announcements(monkeypatch):
    monkeypatch.setattr("vericite.models.openai_http._announced", set())


@pytest.mark.parametrize("url", ["http://server.test:8000", "http://10.0.0.5:8000/v1", "http://127.0.0.1.example.com"])
def test_key_is_never_sent_over_plain_http_to_another_host(monkeypatch, url):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = Script((200, chat_response()))
    with pytest.raises(BackendError) as e:
        OpenAICompatBackend("m", url, transport=httpx.MockTransport(s))
    msg = str(e.value)
    assert "refusing to send the API key from $OPENAI_API_KEY over plain http" in msg and "https://" in msg
    assert "\n" not in msg and "sk-secret" not in msg and s.requests == []
    # a key given by the caller, or in another variable, is refused the same way
    with pytest.raises(BackendError, match="refusing to send the API key given"):
        OpenAICompatBackend("m", url, api_key="sk-given", transport=httpx.MockTransport(s))
    monkeypatch.setenv("MY_KEY", "k")
    with pytest.raises(BackendError, match=r"\$MY_KEY over plain http"):
        OpenAICompatBackend("m", url, api_key_env="MY_KEY", transport=httpx.MockTransport(s))


def test_key_set_after_the_backend_was_made_is_still_refused_over_plain_http(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    s = Script((200, chat_response()))
    b = OpenAICompatBackend("m", "http://server.test:8000", transport=httpx.MockTransport(s), backoff=0)
    assert b.generate([MSG], GenParams())[0].text == "Yes."  # no key: plain http is fine
    assert "authorization" not in s.requests[0].headers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with pytest.raises(BackendError, match="refusing to send"):
        b.generate([MSG], GenParams())
    assert len(s.requests) == 1


@pytest.mark.parametrize("url", ["http://localhost:8000", "http://127.0.0.1:8000", "http://127.3.2.1", "http://[::1]:8000", "http://box.localhost:1"])
def test_key_goes_over_plain_http_to_this_machine(monkeypatch, fresh_announcements, url):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = Script((200, chat_response()))
    OpenAICompatBackend("m", url, transport=httpx.MockTransport(s)).generate([MSG], GenParams())
    assert s.requests[0].headers["authorization"] == "Bearer sk-secret-123"


def test_default_key_to_another_server_is_announced_once_per_host(monkeypatch, capsys, fresh_announcements):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    s = Script((200, chat_response()))
    b = backend(s)  # https://server.test:8000
    b.generate([MSG, MSG, MSG], GenParams())
    backend(s).generate([MSG], GenParams())
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sending the API key from $OPENAI_API_KEY to server.test:8000" in err
    assert "sk-secret" not in err
    assert all(r.headers["authorization"] == "Bearer sk-secret-123" for r in s.requests)
    OpenAICompatBackend("m", "http://localhost:8000", transport=httpx.MockTransport(s)).generate([MSG], GenParams())
    assert "to localhost:8000" in capsys.readouterr().err  # another host: told again
    OpenAICompatBackend("m", "http://[::1]:8000", transport=httpx.MockTransport(s)).generate([MSG], GenParams())
    assert "to [::1]:8000, not OpenAI's server" in capsys.readouterr().err


def test_no_announcement_for_openai_a_named_key_or_no_key(monkeypatch, capsys, fresh_announcements):
    s = Script((200, chat_response()))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    OpenAICompatBackend("m", None, transport=httpx.MockTransport(s)).generate([MSG], GenParams())
    assert str(s.requests[-1].url).startswith("https://api.openai.com/v1/")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    backend(s, api_key_env="MY_KEY").generate([MSG], GenParams())
    assert s.requests[-1].headers["authorization"] == "Bearer sk-mine"
    backend(s, api_key="sk-given").generate([MSG], GenParams())
    assert s.requests[-1].headers["authorization"] == "Bearer sk-given"
    monkeypatch.delenv("OPENAI_API_KEY")
    backend(s).generate([MSG], GenParams())
    assert "authorization" not in s.requests[-1].headers
    assert capsys.readouterr().err == ""
