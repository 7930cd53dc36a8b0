"""The wire format of OpenAI-compatible servers, read: top log-probabilities of a chat completion, and error
messages made into one short printable line, and whether an error says the prompt was past the model's context
(``openai_http``'s and ``openai_compat``'s helpers)."""

from __future__ import annotations

from typing import Any

import httpx

from ..printable import printable


def top_logprobs(lp: Any) -> list[dict[str, float]] | None:
    """OpenAI chat format: logprobs.content[i].top_logprobs[j] = {token, logprob}."""
    if not isinstance(lp, dict) or not isinstance(lp.get("content"), list):
        return None
    out = []
    for step in lp["content"]:
        alts: dict[str, float] = {}
        for alt in step.get("top_logprobs") or []:
            tok, val = alt.get("token"), alt.get("logprob")
            if tok is not None and val is not None and tok not in alts:
                alts[str(tok)] = float(val)
        if not alts and step.get("token") is not None and step.get("logprob") is not None:
            alts[str(step["token"])] = float(step["logprob"])
        out.append(alts)
    return out


#: what servers say of a prompt past the model's context: OpenAI's and vLLM's error code, llama.cpp server's error
#: type, and the words of their messages (vLLM "This model's maximum context length is ...", llama.cpp server
#: "request (4476 tokens) exceeds the available context size (4096 tokens)")
_TOO_LONG_CODES = ("context_length_exceeded", "exceed_context_size_error")
_TOO_LONG_WORDS = ("maximum context length", "context length exceeded", "exceeds the available context size", "exceed context window")


def says_too_long(r: httpx.Response) -> bool:
    """Whether an error response says the prompt is longer than the model's context (asking again cannot help)."""
    try:
        data = r.json()
    except ValueError:
        data = None
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and any(str(err.get(k)) in _TOO_LONG_CODES for k in ("code", "type")):
        return True
    low = error_message(r).lower()
    return any(w in low for w in _TOO_LONG_WORDS)


def error_message(r: httpx.Response) -> str:
    try:
        data = r.json()
    except ValueError:
        return snippet(r.text) or r.reason_phrase
    err = data.get("error") if isinstance(data, dict) else None
    if isinstance(err, dict) and err.get("message"):
        return snippet(str(err["message"]))
    if isinstance(err, str):
        return snippet(err)
    if isinstance(data, dict) and data.get("detail"):
        return snippet(str(data["detail"]))
    return snippet(r.text)


def snippet(text: str, n: int = 200) -> str:
    one = " ".join(printable(text).split())
    return one if len(one) <= n else one[: n - 1] + "…"
