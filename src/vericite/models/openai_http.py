"""HTTP to an OpenAI-compatible server, ``openai_compat``'s transport: requests with a total time limit, retried
where the server may come back, ended at once when the client is closed, and the rules of where the API key goes.

``base_url`` is the API root, with or without the trailing ``/v1`` (``http://localhost:8000`` and
``http://localhost:8000/v1`` mean the same); without one, ``$OPENAI_BASE_URL``, else OpenAI's. Every request
goes to that URL and nowhere else: redirects are not followed (a redirect is an error that names where it
pointed), so the API key, read from the environment variable named by ``api_key_env`` at each request, goes
only to the server that was named. The key is never logged or put into an error message.

Where the key may go (checked when the client is made, and again before each request):

- never over plain ``http://`` to a host that is not this machine (``localhost``, ``*.localhost``, a loopback
  address such as ``127.0.0.1`` or ``::1``; names are not resolved): with a key to send, that is a
  ``BackendError`` of one line that says to use ``https://``, or to run the command without the variable
  (``env -u OPENAI_API_KEY vericite ...``) when the server needs no key. Without a key, plain http is fine.
- the key from the default variable ``$OPENAI_API_KEY`` is sent to a server other than OpenAI's
  (``https://api.openai.com``) too (OpenAI-compatible servers often take it), but not silently: the first
  request that carries it prints one line on stderr naming the host that receives it (once per host and
  process). A key the caller named (``api_key``, or another ``api_key_env``) is sent without that line.

``timeout`` is a total time limit per request, retries and their waits included: the answer is read in chunks
against a monotonic deadline, so a server that hangs, or sends one byte now and then, costs at most that long.
Connect errors, timeouts, 429 and 5xx answers are retried with exponential backoff (honouring
``Retry-After``), at most ``max_retries`` times and never past the deadline; then one clear ``BackendError``
line.
"""

from __future__ import annotations

import ipaddress
import os
import sys
import threading
import time
from typing import Any

import httpx

from ..errors import BackendError, PromptTooLongError
from .openai_wire import error_message, says_too_long, snippet

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
OPENAI_HOST = "api.openai.com"
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_RETRY_AFTER = 60.0
DEFAULT_TIMEOUT = 300.0  # seconds per request, retries included
DEFAULT_RETRIES = 3
_TRANSFER_HEADERS = {"content-encoding", "content-length", "transfer-encoding"}


class ServerUnreachableError(BackendError):
    """No answer from the server after every retry (as opposed to an answer that says no)."""


class DeadlineExceededError(ServerUnreachableError):
    """No complete answer within the request's total time limit (``timeout``)."""


class BackendClosedError(BackendError):
    """A request of a backend that was closed (Ctrl-C, or the command ended) while it was waiting for the server."""


class _Late(Exception):
    """Raised inside an exchange that ran past its deadline."""


_announced: set[str] = set()  # hosts told on stderr that they receive the key from $OPENAI_API_KEY
_announce_lock = threading.Lock()


def is_loopback(host: str) -> bool:
    """``localhost``, ``*.localhost`` or a loopback address (127.0.0.0/8, ``::1``); a name is not resolved."""
    h = host.strip("[]").lower().rstrip(".")
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def normalise_base_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise BackendError(f"base URL must start with http:// or https://, not {url!r}")
    return url if url.endswith("/v1") else url + "/v1"


class OpenAIHTTPClient:
    """``OpenAIHTTPClient(base_url=None, *, api_key_env="OPENAI_API_KEY", api_key=None, timeout=300.0,
    max_retries=3, backoff=0.5, max_backoff=30.0, transport=None)``: the requests to one server.

    ``request(method, path, payload)`` sends one request to ``base_url/path`` and returns the JSON object it answers.
    ``timeout``: the most one request may take, in seconds, retries included; the waits between retries are
    ``backoff * 2**attempt`` seconds, at most ``max_backoff`` (or the server's ``Retry-After``, at most 60 s).
    ``requests`` counts the HTTP requests sent, retries included, ``retries`` the retries among them."""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        api_key_env: str = DEFAULT_KEY_ENV,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if not timeout or float(timeout) <= 0:
            raise BackendError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.base_url = normalise_base_url(base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL)
        self.api_key_env = api_key_env
        self._api_key = api_key  # given by the caller: used before the environment variable; never shown
        url = httpx.URL(self.base_url)
        self._host = url.host
        host = f"[{url.host}]" if ":" in url.host else url.host
        self._host_port = f"{host}:{url.port}" if url.port else host
        self._key_over_plain_http = url.scheme == "http" and not is_loopback(url.host)
        self._announce_key = api_key is None and api_key_env == DEFAULT_KEY_ENV and url.host != OPENAI_HOST
        self._key()  # refuse now, before any work, rather than at the first request
        self.timeout = float(timeout)
        self.max_retries = max(0, int(max_retries))
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        # never follow a redirect: the key would go with it to wherever it points
        self._client = httpx.Client(timeout=httpx.Timeout(self.timeout), transport=transport, follow_redirects=False)
        self._count_lock = threading.Lock()
        self._closed = threading.Event()
        self._waiting: set[threading.Event] = set()  # the exchanges waiting for an answer: close() wakes them
        self.requests = 0  # HTTP requests sent, retries included
        self.retries = 0

    def _key(self) -> str | None:
        """The key to send, or None; a ``BackendError`` where it would travel over plain http to another host."""
        key = self._api_key or os.environ.get(self.api_key_env) or None
        if key and self._key_over_plain_http:
            where = "the API key given" if self._api_key else f"the API key from ${self.api_key_env}"
            raise BackendError(
                f"refusing to send {where} over plain http to {self._host_port}, which is not this machine: "
                f"use an https:// URL, or run without the key (env -u {self.api_key_env} ...) if the server needs none"
            )
        return key

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        key = self._key()
        if key:
            if self._announce_key:
                self._announce()
            h["Authorization"] = f"Bearer {key}"
        return h

    def _announce(self) -> None:
        with _announce_lock:
            if self._host_port in _announced:
                return
            _announced.add(self._host_port)
        print(
            f"vericite: sending the API key from ${DEFAULT_KEY_ENV} to {self._host_port}, not OpenAI's server "
            f"(run without it, env -u {DEFAULT_KEY_ENV} ..., if this server needs none)",
            file=sys.stderr,
            flush=True,
        )

    def _exchange(self, method: str, url: str, payload: dict[str, Any] | None, deadline: float) -> httpx.Response:
        """One HTTP request whose answer is read completely before ``deadline`` (a ``time.monotonic()`` value),
        else ``_Late``. It runs in a helper thread, so the caller is free at the deadline even when the server
        is silent; the helper stops at its next chunk, or when its socket times out."""
        box: dict[str, Any] = {}
        done, abandoned = threading.Event(), threading.Event()
        headers = self._headers()

        def work() -> None:
            try:
                left = max(0.001, deadline - time.monotonic())
                with self._client.stream(method, url, json=payload, headers=headers, timeout=httpx.Timeout(left)) as r:
                    body = bytearray()
                    for chunk in r.iter_bytes():
                        body += chunk
                        if abandoned.is_set() or time.monotonic() > deadline:
                            raise _Late()
                    # the body is decoded already: keep the headers that do not describe its transfer
                    kept = [(k, v) for k, v in r.headers.multi_items() if k.lower() not in _TRANSFER_HEADERS]
                    box["response"] = httpx.Response(r.status_code, headers=kept, content=bytes(body), request=r.request)
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                box["error"] = e
            finally:
                done.set()

        with self._count_lock:
            self._waiting.add(done)
        try:
            threading.Thread(target=work, name="vericite-http", daemon=True).start()
            answered = done.wait(max(0.0, deadline - time.monotonic()))
        finally:
            with self._count_lock:
                self._waiting.discard(done)
        if self._closed.is_set():  # close() woke it (or came before the send: httpx's "client has been closed")
            abandoned.set()
            raise self._closed_error()
        if not answered:
            abandoned.set()
            raise _Late()
        if "error" in box:
            raise box["error"]
        return box["response"]  # type: ignore[no-any-return]

    def request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON object the server answers to ``method`` ``base_url/path`` (with ``payload`` as JSON), retried
        within the time limit; else one ``BackendError`` line (``ServerUnreachableError``, ``DeadlineExceededError``,
        ``BackendClosedError``, or the server's refusal)."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        deadline = time.monotonic() + self.timeout
        last = ""
        attempts = 0
        for attempt in range(self.max_retries + 1):
            if self._closed.is_set():
                raise self._closed_error()
            attempts += 1
            with self._count_lock:
                self.requests += 1
                self.retries += 1 if attempt else 0
            wait = min(self.max_backoff, self.backoff * (2**attempt))
            try:
                r = self._exchange(method, url, payload, deadline)
            except _Late:
                raise self._late(attempts, last) from None
            except (httpx.TransportError, httpx.TimeoutException) as e:
                # connect errors, timeouts, dropped connections: the server may come back
                last = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                if time.monotonic() >= deadline:
                    raise self._late(attempts, last) from None
            else:
                if r.status_code < 300:
                    try:
                        data = r.json()
                    except ValueError:
                        raise BackendError(f"bad response from {url}: not JSON ({snippet(r.text)})") from None
                    if not isinstance(data, dict):
                        raise BackendError(f"bad response from {url}: expected a JSON object")
                    return data
                if r.status_code < 400:
                    where = r.headers.get("location")
                    raise BackendError(
                        f"{url} answered HTTP {r.status_code}, a redirect{' to ' + snippet(where, 120) if where else ''}; "
                        "it is not followed, so the API key goes only to the base URL: give the server's own URL as --base-url"
                    )
                if r.status_code not in RETRY_STATUS and r.status_code < 500:
                    kind = PromptTooLongError if says_too_long(r) else BackendError  # a judge fails that pair alone
                    raise kind(f"{url} answered HTTP {r.status_code}: {error_message(r)}")
                last = f"HTTP {r.status_code}: {error_message(r)}"
                retry_after = r.headers.get("retry-after")
                if retry_after:
                    try:
                        wait = min(MAX_RETRY_AFTER, max(wait, float(retry_after)))
                    except ValueError:
                        pass
            if attempt < self.max_retries:
                if time.monotonic() + wait >= deadline:
                    raise self._late(attempts, last)
                time.sleep(wait)
        raise ServerUnreachableError(f"model server at {self.base_url} unreachable after {attempts} attempts ({last})")

    def _closed_error(self) -> BackendClosedError:
        return BackendClosedError(f"the client of the model server at {self.base_url} was closed; the request was dropped")

    def _late(self, attempts: int, last: str) -> DeadlineExceededError:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        return DeadlineExceededError(
            f"model server at {self.base_url}: no complete answer within the time limit of {self.timeout:g} s "
            f"({tries}{'; last: ' + last if last else ''}); raise it with --timeout"
        )

    def close(self) -> None:
        """Close the HTTP client. A request still waiting for its answer (a daemon thread after Ctrl-C) ends at once
        with a ``BackendClosedError``, whatever the server sends later; none is sent after it."""
        self._closed.set()
        with self._count_lock:
            for done in self._waiting:
                done.set()
        self._client.close()
