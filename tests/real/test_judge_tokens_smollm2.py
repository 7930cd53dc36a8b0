"""Next-token judge calls report their tokens on the real embedded SmolLM2-135M through llama.cpp (slow; runs in
CI, where it never skips): the prompt's tokens as llama.cpp's ``generate`` counts the same chat prompt, one
completion token, counted by the meter, and kept by the call cache."""

from __future__ import annotations

import pytest

from vericite.judges.llm import LLMJudge
from vericite.models.usage import UsageMeter, metered
from vericite.protocols import NextTokenUsage
from vericite.types import GenParams, JudgePair, Usage

from tests.support.guards import require_smollm2

pytestmark = pytest.mark.slow

PAIRS = [
    JudgePair("Rome is the capital city of Italy.", "Rome is the capital of Italy."),
    JudgePair("The bridge was opened to traffic in 1932 after six years of work.", "The bridge opened in 1975."),
]
MSGS = [{"role": "system", "content": "Answer Yes or No."}, {"role": "user", "content": "Is Rome in Italy?"}]


def test_next_token_usage_is_the_prompts_tokens_and_one_token_counted_and_cached(tmp_path):
    require_smollm2()
    from vericite.models import load_model

    raw = load_model("smollm2-135m", threads=1, cache=False)
    assert isinstance(raw, NextTokenUsage)
    (scores, usage), = raw.next_token_logprobs_usage([MSGS], ["Yes", "No"])
    c = raw.generate([MSGS], GenParams(max_tokens=1, temperature=0.0))[0]
    assert usage == Usage(c.prompt_tokens, 1, 1) and c.prompt_tokens > len("Answer Yes or No. Is Rome in Italy?".split())
    assert scores == pytest.approx(raw.next_token_logprobs([MSGS], ["Yes", "No"])[0])

    cache = tmp_path / "calls.sqlite"
    first, second = UsageMeter(), UsageMeter()
    a = LLMJudge(metered(load_model("smollm2-135m", threads=1, cache=cache), first)).judge(PAIRS)
    b = LLMJudge(metered(load_model("smollm2-135m", threads=1, cache=cache), second)).judge(PAIRS)
    assert [j.probability for j in a] == [j.probability for j in b]
    u = first.usage
    assert u.calls >= len(PAIRS) and u.completion_tokens == u.calls and u.prompt_tokens > 20 * u.calls and not u.uncounted_calls
    assert second.usage == u  # the cache's hits count with the tokens first reported
