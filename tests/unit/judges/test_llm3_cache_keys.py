"""llm3's call-cache keys are those of the earlier runs: the keys of two fixed pairs, as 1b40863 and c2fa73a wrote
them (CONNER's WoW levels in the shared call cache were judged by those commits), are the keys of now, for the fake
model and for a scorer with the Qwen file's identity and llama.cpp's sampling settings; llm3f asks the same keys.
A change that moves them makes every earlier llm3 judgement in a user's cache miss (a resumed run asks them all
again): change these values only with a new prompt id."""

from __future__ import annotations

import math
import sqlite3

from vericite.judges.fitted import FittedLLM3Judge
from vericite.judges.three_way import LLM3Judge
from vericite.models import load_model
from vericite.models.cache import CachedBackend, CallCache
from vericite.registry import BuildContext
from vericite.types import JudgePair, ModelIdentity

PAIRS = [JudgePair("Rome is the capital of Italy and is old.", "Rome is the capital of Italy."),
         JudgePair("The Tiber flows through Rome.", "Rome is old.", question="q?")]
#: printed by the same judging at 1b40863 and c2fa73a (sorted)
KEYS = {
    "fake": {"2fb1bc477fe2960fd33539693bec019ee4bfbfb2ff7739c2c9c07d7d46e01e61": "next_token_logprobs",
             "64a1944846eb5e26124d648df1543fba62f7a871337aabe86fa25c53bfd75c7b": "next_token_usage",
             "7573d1601540c082b8bafda07343386eff093c463ef2e8ac092b574818660996": "next_token_logprobs",
             "e9028dca03d8eed8c7c68e22fe037b0fc243124248cb9abc679e2ad04e82c301": "next_token_usage"},
    "qwenish": {"4d62a3a630e17adf0efec7763f511d66315637d695d5a7ec564fefc320ec372c": "next_token_logprobs",
                "63a9ed0612d5f7c202b273f427507f14dd560d36ab14a122e2a4948dfce54590": "next_token_logprobs"},
}


class Qwenish:
    """The identity and cache-key extra the llama.cpp backend gives qwen2.5-coder-1.5b (its defaults)."""

    def identity(self):
        return ModelIdentity(name="qwen2.5-coder-1.5b", backend="llamacpp", model="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                             sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046")

    def cache_key_extra(self):
        return {"sampling": {"top_k": 40, "min_p": 0.05, "repeat_penalty": 1.1}}

    def next_token_logprobs(self, prompts, candidates):
        return [{"Supports": math.log(0.5), "Neutral": math.log(0.3)} for _ in prompts]


def backends():
    return {"fake": load_model("fake", ctx=BuildContext(cache=False)), "qwenish": Qwenish()}


def keys_of(judge_of, backend, path) -> dict[str, str]:
    judge_of(CachedBackend(backend, CallCache(path))).judge(PAIRS)
    with sqlite3.connect(path) as c:
        return dict(c.execute("SELECT key, kind FROM calls").fetchall())


def test_llm3_keys_are_those_of_the_earlier_runs(tmp_path):
    for name, backend in backends().items():
        assert keys_of(LLM3Judge, backend, tmp_path / f"{name}.sqlite") == KEYS[name], name


def test_llm3f_asks_llm3s_keys(tmp_path):
    for name, backend in backends().items():
        ident = backend.identity().to_dict()
        fit = {"model": ident, "bias": {"supports": 0.0, "refutes": -0.5, "not_enough_info": -1.0}}
        keys = keys_of(lambda b: FittedLLM3Judge(b, fit, "0" * 64, path="fit.json"), backend, tmp_path / f"f-{name}.sqlite")
        assert keys == KEYS[name], name
