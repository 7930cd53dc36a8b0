"""benchmarks/bench_vtg_cost.py's ReuseSim: llama-cpp-python's prefix reuse replayed on token lists (what the
benchmark's ``--replay`` counts), checked by hand on small cases; the real runs check it on SmolLM2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def sim_class():
    spec = importlib.util.spec_from_file_location("bench_vtg_cost", ROOT / "benchmarks" / "bench_vtg_cost.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.ReuseSim


A, B, A2 = [1, 2, 3, 4, 5], [1, 9, 9, 9], [1, 2, 3, 4, 6]


def test_last_prompt_only_re_evaluates_after_every_switch():
    s = sim_class()(cache=False)
    assert [s.call(p, [], [0]) for p in (A, B, A2)] == [5, 3, 4] and s.evaluated == 12 and s.restored == 0
    assert s.call(A2, [], [0]) == 1  # the whole prompt shared: its last token again, for fresh logits


def test_the_state_cache_restores_the_longest_shared_prefix():
    s = sim_class()(cache=True)
    assert [s.call(p, [], [0]) for p in (A, B, A2)] == [5, 3, 1] and s.restored == 1
    # generated tokens are part of the context that follows, and of the state kept
    assert s.call([7, 7], [8, 8], [8, 8, 8]) == 4 and s.live == [7, 7, 8, 8]
    assert s.call([7, 7, 8, 8, 5], [], [0]) == 1


def test_a_full_cache_drops_its_least_recently_used_state_first():
    # room for one 5-token state: B's state pushes A's out, so A2 finds nothing to restore
    s = sim_class()(cache=True, capacity=10, overhead=0, per_token=2)
    assert [s.call(p, [], [0]) for p in (A, B, A2)] == [5, 3, 4] and s.restored == 0 and s.evicted == 2
    assert s.by_kind == {"": 12}
