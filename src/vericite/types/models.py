"""Model records: which model answered, with which settings, what it returned and what the calls cost."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class ModelIdentity:
    """What results record about a model, so two runs can be compared or refused."""

    name: str  # registered name, e.g. qwen2.5-coder-1.5b
    backend: str  # llamacpp | openai | fake ...
    model: str  # file name or server model id
    sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GenParams:
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    stop: tuple[str, ...] = ()
    top_logprobs: int = 0  # >0: return that many alternatives for each generated token

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d


Message = Mapping[str, str]  # {"role": ..., "content": ...}


@dataclass
class Completion:
    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # one dict per generated token: alternative token text -> log-probability
    top_logprobs: list[dict[str, float]] | None = None
    finish_reason: str = ""
    cached: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Completion":
        return cls(**{k: d[k] for k in d if k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Usage:
    """What model calls cost: prompt and completion tokens, and how many calls. ``a + b`` adds two, and
    ``sum(usages)`` totals many (an empty sum is the int 0: write ``sum(usages, Usage())``).

    ``uncounted_calls``: of ``calls``, those whose tokens are unknown (a backend that does not report them, a
    cache entry written before they were stored); their tokens are in neither count, so the counts are then a
    lower bound. Never a zero that pretends to be a count."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    uncounted_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @classmethod
    def of(cls, completion: Completion) -> "Usage":
        """The usage of one call."""
        return cls(completion.prompt_tokens, completion.completion_tokens, 1)

    @classmethod
    def unknown(cls, calls: int = 1) -> "Usage":
        """``calls`` calls whose tokens are unknown."""
        return cls(0, 0, calls, calls)

    def __add__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens, self.calls + other.calls,
            self.uncounted_calls + other.uncounted_calls,
        )

    def __sub__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.prompt_tokens - other.prompt_tokens, self.completion_tokens - other.completion_tokens, self.calls - other.calls,
            self.uncounted_calls - other.uncounted_calls,
        )

    def __radd__(self, other: Any) -> "Usage":
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, int]:
        """``{prompt_tokens, completion_tokens, calls}``, and ``uncounted_calls`` when some calls' tokens are unknown."""
        d = asdict(self)
        if not self.uncounted_calls:
            del d["uncounted_calls"]
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Usage":
        """Read ``{prompt_tokens, completion_tokens, calls, uncounted_calls?}``; a missing or null count is 0. A
        generation record's ``usage`` (one call's tokens, no ``calls``) reads with ``calls`` 0: the record did not
        count calls."""
        d = d or {}
        return cls(int(d.get("prompt_tokens") or 0), int(d.get("completion_tokens") or 0), int(d.get("calls") or 0), int(d.get("uncounted_calls") or 0))
