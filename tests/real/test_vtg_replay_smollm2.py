"""benchmarks/bench_vtg_cost.py's ``--replay`` against real runs on the embedded SmolLM2-135M through llama.cpp
(slow; runs in CI, where it never skips): VTG answers one question twice, once keeping only the last prompt and once
with llama.cpp's state cache, each run filling its own call cache; the replay of one of those caches must give both
runs' answers and traces, and both runs' evaluated tokens to the token (docs/benchmarks.md, "Batched simplifier and
prefix reuse"). The unit tests check the replay's simulation by hand; this one checks it against llama.cpp."""

from __future__ import annotations

import pytest

from vericite.types import Sample

from tests.support.guards import require_smollm2
from tests.support.paths import load_script
from tests.support.vtg import DOCS, QUESTION

pytestmark = pytest.mark.slow

ARGS = {"k": 3, "queries": 1, "docs_per_query": 1, "trials": 1, "max_sentences": 2}


def _bench():
    return load_script("benchmarks/bench_vtg_cost.py")


def test_the_replay_of_a_real_call_cache_gives_the_real_runs_answers_and_evaluated_tokens(tmp_path):
    require_smollm2()
    b = _bench()
    samples = [Sample("q1", QUESTION, passages=list(DOCS))]
    real = {
        name: b.one_run("smollm2-135m", samples, ARGS, b.VARIANTS[name], 512, keep=tmp_path / f"{name}.sqlite")
        for name in ("sequential", "state-cache")
    }
    answers = [b.comparable(r) for r in real["sequential"]["records"]]
    assert answers == [b.comparable(r) for r in real["state-cache"]["records"]]  # the state cache changes no answer
    assert real["sequential"]["evaluated_tokens"] > real["state-cache"]["evaluated_tokens"] > 0

    got = b.replay("smollm2-135m", tmp_path / "state-cache.sqlite", samples, ARGS, ["sequential", "state-cache"], 512)
    for name in ("sequential", "state-cache"):
        assert got[name]["records"] == answers, b.first_difference(got[name]["records"][0], answers[0])
        assert got[name]["evaluated_tokens"] == real[name]["evaluated_tokens"], name
        assert got[name]["missing"] == 0  # every judgement the replay asked was in the run's cache
