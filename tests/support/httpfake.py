"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests, and a recorder of every outgoing connection.

``FakeOpenAIServer(reply=None)`` answers ``GET /v1/models``, ``POST /v1/chat/completions`` (with next-token
log-probabilities when asked: the first token of the reply, plus "Yes" and "No" as alternatives, the way
``openai_compat`` reads them) and ``POST /v1/completions`` with ``echo`` (one log-prob per word). ``reply`` is
a callable ``(messages, params) -> str`` like the fake backend's; ``behaviour`` switches to a hostile server
("hang": never answers; "dribble": the headers, then one byte every ``dribble_s``; "busy": HTTP 503). Every request is recorded
with its path and headers. ``delay``: seconds a chat request waits before its answer, a number or a callable of the
messages (answers that come back out of order); ``fail_first``: that many chat requests answer 503 first (retried);
``max_in_flight``: the most chat requests the server held at once.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from vericite.types import GenParams

MODEL_ID = "served-model"


def default_reply(messages: list[dict[str, str]], params: GenParams) -> str:
    return "Yes"


class FakeOpenAIServer:
    def __init__(
        self,
        reply: Callable[[list[dict[str, str]], GenParams], str] | None = None,
        *,
        behaviour: str = "answer",
        dribble_s: float = 1.0,
        yes_logprob: float = -0.1,
        no_logprob: float = -2.5,
        delay: float | Callable[[list[dict[str, str]]], float] = 0.0,
        fail_first: int = 0,
    ) -> None:
        self.reply = reply or default_reply
        self.behaviour = behaviour
        self.dribble_s = dribble_s
        self.yes_logprob, self.no_logprob = yes_logprob, no_logprob
        self.requests: list[dict[str, Any]] = []
        self.delay = delay
        self.fail_first = fail_first
        self.in_flight = self.max_in_flight = 0
        self._count = threading.Lock()
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _record(self, body: Any) -> None:
                server.requests.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})

            def _send(self, status: int, data: Any) -> None:
                blob = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(blob)))
                self.end_headers()
                self.wfile.write(blob)

            def do_GET(self) -> None:  # noqa: N802
                self._record(None)
                if server.behaviour != "answer":
                    return self._hostile()
                if self.path.rstrip("/").endswith("/models"):
                    return self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model"}]})
                self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                self._record(body)
                if server.behaviour != "answer":
                    return self._hostile()
                if self.path.endswith("/chat/completions"):
                    with server._count:
                        if server.fail_first > 0:
                            server.fail_first -= 1
                            return self._send(503, {"error": {"message": "warming up"}})
                        server.in_flight += 1
                        server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    try:
                        wait = server.delay(body.get("messages") or []) if callable(server.delay) else server.delay
                        if wait:
                            time.sleep(wait)
                        return self._send(200, server.chat(body))
                    finally:
                        with server._count:
                            server.in_flight -= 1
                if self.path.endswith("/completions"):
                    return self._send(200, server.completion(body))
                self._send(404, {"error": {"message": f"no route {self.path}"}})

            def _hostile(self) -> None:
                if server.behaviour == "busy":
                    return self._send(503, {"error": {"message": "overloaded"}})
                if server.behaviour == "hang":
                    server._stop.wait(60)
                    return
                # dribble: a valid start, then one byte at a time, never finishing in time
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.flush()
                while not server._stop.is_set():
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return
                    server._stop.wait(server.dribble_s)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    # ------------------------------------------------------------------ answers

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        params = GenParams(max_tokens=int(body.get("max_tokens") or 16), temperature=float(body.get("temperature") or 0.0))
        text = self.reply(body.get("messages") or [], params)
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        if body.get("logprobs"):
            first = (text.split() or ["Yes"])[0]
            alts = {first: self.yes_logprob, "Yes": self.yes_logprob, "No": self.no_logprob}
            top = [{"token": t, "logprob": lp} for t, lp in alts.items()]
            choice["logprobs"] = {"content": [{"token": first, "logprob": alts[first], "top_logprobs": top}]}
        words = len(text.split())
        return {"model": MODEL_ID, "choices": [choice], "usage": {"prompt_tokens": 10, "completion_tokens": words}}

    @staticmethod
    def completion(body: dict[str, Any]) -> dict[str, Any]:
        prompt = str(body.get("prompt") or "")
        tokens, offsets, pos = [], [], 0
        for i, word in enumerate(prompt.split(" ")):
            token = word if i == 0 else " " + word
            tokens.append(token)
            offsets.append(pos)
            pos += len(token)
        lps = [None] + [-1.0 - (len(t) % 3) * 0.5 for t in tokens[1:]]
        return {
            "model": MODEL_ID,
            "choices": [{"text": prompt + " x", "logprobs": {"tokens": tokens + [" x"], "token_logprobs": lps + [-1.0], "text_offset": offsets + [len(prompt)]}}],
            "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1},
        }

    # ------------------------------------------------------------------ lifetime

    def __enter__(self) -> "FakeOpenAIServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]


class ConnectionRecorder:
    """Records the address of every outgoing TCP connection and name lookup of this process (install with
    ``monkeypatch``); a connection to an address that is not allowed is refused before it leaves."""

    def __init__(self, allowed: set[tuple[str, int]]) -> None:
        self.allowed = allowed
        self.connections: list[tuple[str, int]] = []
        self.lookups: list[str] = []

    def install(self, monkeypatch: Any) -> "ConnectionRecorder":
        real_connect = socket.socket.connect
        real_getaddrinfo = socket.getaddrinfo
        rec = self

        def connect(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                addr = (str(address[0]), int(address[1]))
                rec.connections.append(addr)
                if addr not in rec.allowed:
                    raise ConnectionRefusedError(f"test: connection to {addr} refused")
            return real_connect(sock, address)

        def getaddrinfo(host: Any, *args: Any, **kw: Any) -> Any:
            rec.lookups.append(str(host))
            return real_getaddrinfo(host, *args, **kw)

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        return self


def wait_until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.02)
    return condition()
