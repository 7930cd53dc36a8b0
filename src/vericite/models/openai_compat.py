"""Any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, OpenAI itself) as a model backend: chat messages
and generation parameters made into requests, the answers' text, token counts and log-probabilities read back, the
server's id for the model, and the registry's ``openai:<model>`` factory (``from_spec``).

The requests go through ``openai_http.OpenAIHTTPClient`` (the backend's ``http``), which says where they go and
where the API key may go: ``base_url`` (with or without the trailing ``/v1``; without one, ``$OPENAI_BASE_URL``,
else OpenAI's) and nowhere else, the key never over plain ``http://`` to another host than this machine, and
``timeout`` a total time limit per request, retries included.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Sequence

import httpx

from ..errors import BackendError
from ..stats import logsumexp
from ..threads import daemon_map
from ..types import Completion, GenParams, Message, ModelIdentity, Usage
from .openai_http import DEFAULT_KEY_ENV, DEFAULT_RETRIES, DEFAULT_TIMEOUT, OpenAIHTTPClient, ServerUnreachableError
from .openai_http import BackendClosedError, DeadlineExceededError  # noqa: F401  (re-exported: the errors its calls raise)
from .openai_wire import snippet, top_logprobs


class OpenAICompatBackend:
    """``OpenAICompatBackend(model, base_url=None, *, api_key_env="OPENAI_API_KEY", timeout=300.0,
    max_retries=3, backoff=0.5, max_backoff=30.0, concurrency=4, name=None, api_key=None)``.

    ``timeout``: the most one request may take, in seconds, retries included. ``generate`` sends up to
    ``concurrency`` requests at a time; the waits between retries are ``backoff * 2**attempt`` seconds, at most
    ``max_backoff`` (or the server's ``Retry-After``, at most 60 s). ``http``: the ``OpenAIHTTPClient`` that sends
    them (``timeout``, ``max_retries``, ``requests`` and ``retries`` are read off it)."""

    backend = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key_env: str = DEFAULT_KEY_ENV,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        concurrency: int = 4,
        name: str | None = None,
        transport: httpx.BaseTransport | None = None,
        api_key: str | None = None,
    ) -> None:
        if not model:
            raise BackendError("the OpenAI-compatible backend needs a model name, e.g. openai:gpt-4o-mini")
        self.model = model
        # where requests go, their time limit and retries, and where the key may go: openai_http
        self.http = OpenAIHTTPClient(
            base_url,
            api_key_env=api_key_env,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            max_backoff=max_backoff,
            transport=transport,
        )
        self.base_url = self.http.base_url
        self.concurrency = max(1, int(concurrency))
        self.name = name or f"openai:{model}"
        self._server_model: str | None = None
        self._lock = threading.Lock()  # identity resolution

    # ------------------------------------------------------------------ identity

    def server_models(self) -> list[str]:
        data = self.http.request("GET", "models")
        return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict) and m.get("id")]

    def identity(self) -> ModelIdentity:
        """The server's id for the model: the requested one when the server lists it, the only one a
        single-model server lists (llama.cpp's server answers any name), else the requested name."""
        with self._lock:
            if self._server_model is None:
                try:
                    ids = self.server_models()
                except ServerUnreachableError:
                    raise
                except BackendError:
                    ids = []  # a server without /models: keep the requested name
                if self.model in ids or len(ids) != 1:
                    self._server_model = self.model
                else:
                    self._server_model = ids[0]
            return ModelIdentity(name=self.name, backend="openai", model=self._server_model, sha256=None)

    def cache_key_extra(self) -> dict[str, Any]:
        return {"base_url": self.base_url}

    # ------------------------------------------------------------------ generation

    def _map(self, fn: Any, items: Sequence[Any]) -> list[Any]:
        if self.concurrency == 1 or len(items) <= 1:
            return [fn(x) for x in items]
        # daemon threads: Ctrl-C returns without waiting for the requests in flight (vericite.threads)
        return daemon_map(fn, items, min(self.concurrency, len(items)), thread_name_prefix="vericite-openai")

    def generate(self, prompts: Sequence[Sequence[Message]], params: GenParams) -> list[Completion]:
        return self._map(lambda m: self._generate_one(m, params), list(prompts))

    def _chat_payload(self, messages: Sequence[Message], params: GenParams) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
        }
        if params.stop:
            payload["stop"] = list(params.stop)
        if params.top_logprobs > 0:
            payload["logprobs"] = True
            payload["top_logprobs"] = int(params.top_logprobs)
        return payload

    def _generate_one(self, messages: Sequence[Message], params: GenParams) -> Completion:
        t0 = time.perf_counter()
        data = self.http.request("POST", "chat/completions", self._chat_payload(messages, params))
        try:
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise BackendError(f"bad response from {self.base_url}/chat/completions: no choices[0].message ({snippet(str(data))})") from None
        usage = data.get("usage") or {}
        top = None
        if params.top_logprobs > 0:
            top = top_logprobs(choice.get("logprobs"))
            if top is None:
                raise BackendError(
                    f"the server at {self.base_url} returned no logprobs for model {self.model!r}; it cannot give top_logprobs"
                )
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            top_logprobs=top,
            finish_reason=str(choice.get("finish_reason") or ""),
            seconds=time.perf_counter() - t0,
        )

    def next_token_logprobs(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str], *, k: int = 20
    ) -> list[dict[str, float]]:
        """From the top-``k`` alternatives of the first generated token: a candidate's log-prob is the
        log-sum-exp of the alternatives whose text equals it (leading/trailing spaces ignored); a candidate
        outside the top ``k`` gets ``-inf`` (the server does not tell more)."""
        return [scores for scores, _ in self.next_token_logprobs_usage(prompts, candidates, k=k)]

    def next_token_logprobs_usage(
        self, prompts: Sequence[Sequence[Message]], candidates: Sequence[str], *, k: int = 20
    ) -> list[tuple[dict[str, float], Usage | None]]:
        """:meth:`next_token_logprobs` with the usage the server reported for each one-token call (None when it
        reported none)."""
        params = GenParams(max_tokens=1, temperature=0.0, top_logprobs=k)

        def one(messages: Sequence[Message]) -> tuple[dict[str, float], Usage | None]:
            c = self._generate_one(messages, params)
            first = (c.top_logprobs or [{}])[0]
            out = {}
            for cand in candidates:
                vals = [lp for tok, lp in first.items() if tok.strip() == cand.strip()]
                out[cand] = logsumexp(vals)
            return out, (Usage.of(c) if c.prompt_tokens else None)  # no prompt has 0 tokens: none reported

        return self._map(one, list(prompts))

    def logprobs(self, texts: Sequence[str]) -> list[list[float]]:
        """Prompt log-probs via ``/completions`` with ``echo`` where the server supports it."""
        return self._map(self._score_one, list(texts))

    def _score_one(self, text: str) -> list[float]:
        payload = {"model": self.model, "prompt": text, "max_tokens": 1, "temperature": 0.0, "echo": True, "logprobs": 1}
        try:
            data = self.http.request("POST", "completions", payload)
        except ServerUnreachableError:
            raise
        except BackendError as e:
            raise BackendError(f"the OpenAI-compatible backend cannot score text with {self.model!r} at {self.base_url} ({e})") from None
        try:
            choice = data["choices"][0]
            lp = choice["logprobs"]
            values = list(lp["token_logprobs"])
        except (KeyError, IndexError, TypeError):
            raise BackendError(
                f"the OpenAI-compatible backend cannot score text with {self.model!r} at {self.base_url}: "
                "the server returned no prompt log-probs for echo"
            ) from None
        # echo returns the prompt's tokens followed by the generated one(s): keep the prompt's
        n_prompt = int((data.get("usage") or {}).get("prompt_tokens") or 0)
        offsets = lp.get("text_offset")
        if offsets and len(offsets) == len(values):
            n_text = sum(1 for o in offsets if o < len(text))
            n_prompt = min(n_prompt, n_text) if n_prompt else n_text
        if n_prompt:
            values = values[:n_prompt]
        values = values[1:]  # the first token has no history to be predicted from (servers send null)
        if any(v is None for v in values):
            raise BackendError(f"the server at {self.base_url} returned incomplete prompt log-probs")
        return [float(v) for v in values]

    def close(self) -> None:
        """Close the HTTP client. A request still waiting for its answer (a daemon thread after Ctrl-C) ends at once
        with a ``BackendClosedError``, whatever the server sends later; none is sent after it."""
        self.http.close()

    def __repr__(self) -> str:
        return f"OpenAICompatBackend({self.model!r}, {self.base_url!r})"


def from_spec(arg: str, *, ctx: Any, name: str | None = None, **options: Any) -> OpenAICompatBackend:
    """Registry factory: ``openai:<model>`` at ``ctx.base_url`` with ``ctx.api_key``, ``ctx.timeout`` and
    ``ctx.retries`` (each when given; options given here win)."""
    given = {"timeout": ctx.timeout, "max_retries": ctx.retries, "api_key": ctx.api_key}
    settings = {k: v for k, v in given.items() if v is not None}
    base_url = options.pop("base_url", None) or ctx.base_url
    return OpenAICompatBackend(arg, base_url, name=name or f"openai:{arg}", **{**settings, **options})
