"""benchmarks/bench_vtg_cost.py's ReuseSim: llama-cpp-python's prefix reuse replayed on token lists (what the
benchmark's ``--replay`` counts), checked by hand on small cases; the real runs check it on SmolLM2."""

from __future__ import annotations

from tests.support.paths import REPO as ROOT, load_script


def bench():
    return load_script("benchmarks/bench_vtg_cost.py")


def sim_class():
    return bench().ReuseSim


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


def test_vtgs_prompts_put_what_they_share_first():
    # a whole VTG answer (scripted model, the LLM judge on the same model, answering Yes when every word of the
    # claim is in the evidence): replayed word by word, keeping states saves what keeping the last prompt cannot,
    # because each kind of prompt starts with what it shares with its own earlier ones. A prompt that put its
    # changing part first would lose this (and fail here).
    import re

    from vericite.generate.vtg import build
    from vericite.judges.llm import LLMJudge
    from vericite.models.fake import last_user_message
    from vericite.registry import BuildContext
    from vericite.types import Sample

    from tests.support.vtg import DOCS, QUESTION, scripted

    script = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})
    words = lambda t: {w.strip(".,").lower() for w in t.split()}  # noqa: E731

    writer = script.replies

    def reply(messages, params):
        prompt = last_user_message(messages)
        if prompt.startswith("Does the evidence support the claim?"):
            evidence, claim = re.match(r".*?Evidence: (.*)\n\nClaim: (.*)", prompt, re.S).groups()
            return "Yes" if words(claim) <= words(evidence) else "No"
        return writer(messages, params)

    script.replies = reply
    m = build("", ctx=BuildContext(), backend=script, judge=LLMJudge(script), k=2, docs_per_query=1)
    r = m.answer(Sample("q1", QUESTION, passages=list(DOCS)))
    assert r["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    ids: dict[str, int] = {}
    tokens = lambda msgs: [ids.setdefault(w, len(ids)) for msg in msgs for w in (f"<{msg['role']}>", *msg["content"].split())]  # noqa: E731
    Sim = sim_class()
    last, kept = Sim(cache=False), Sim(cache=True)
    for msgs in script.prompts:
        for s in (last, kept):
            s.call(tokens(msgs), [], [-1])
    asked = sum(len(tokens(msgs)) for msgs in script.prompts)
    assert last.evaluated > 0.8 * asked  # the last prompt alone: most of it again
    assert kept.evaluated < 0.6 * last.evaluated and kept.restored >= 4  # 446 words of 927 (1,110 asked), 8 restores


def test_the_replay_reads_the_call_cache_by_names_the_cache_has(tmp_path):
    # the replay reads the run's calls through CachedBackend (self.cached.<name>); a renamed method there broke
    # --replay without a test noticing (_key became call_key)
    import ast

    from vericite.models.cache import CachedBackend, CallCache
    from vericite.models.fake import FakeBackend

    tree = ast.parse((ROOT / "benchmarks" / "bench_vtg_cost.py").read_text(encoding="utf-8"))
    used = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "cached"}
    cached = CachedBackend(FakeBackend(), CallCache(tmp_path / "calls.sqlite"))
    assert "call_key" in used and not [name for name in used if not hasattr(cached, name)]


def test_a_replay_names_where_a_question_first_differs_from_the_run():
    mod = bench()
    a = {"output": "x", "trials": [{"sentence": "s", "citations": [1]}, {"sentence": "t", "citations": [2]}]}
    assert mod.first_difference(a, None) == "not in the run's answers"
    assert mod.first_difference(a, {**a, "trials": a["trials"][:1]}) == "2 trials replayed, 1 recorded"
    b = {"output": "x", "trials": [a["trials"][0], {"sentence": "t", "citations": [3]}]}
    assert mod.first_difference(a, b) == "trial 2 differs in citations: '[2]' replayed, '[3]' recorded"
    assert mod.first_difference(a, {**a, "output": "y"}) == "the output differs"


def test_same_answers_tells_identical_from_probabilities_moved_from_different():
    b = bench()
    ref = [{"output": "A [1].", "trials": [{"citations": [1], "generation_verifier": {"entailed": True, "p": 0.530}}]}]
    moved = [{"output": "A [1].", "trials": [{"citations": [1], "generation_verifier": {"entailed": True, "p": 0.556}}]}]
    assert b.sameness(ref, [dict(r) for r in ref]) == "yes"
    assert b.sameness(ref, moved) == "yes but P (±0.026)"
    assert b.sameness(ref, ref, moved, ref) == "yes but P (±0.026)"  # the worst of several runs
    assert b.sameness(ref, moved, [{**ref[0], "output": "B [1]."}]) == "NO"
    for other in ([{**ref[0], "output": "B [1]."}],
                  [{**ref[0], "trials": [{"citations": [1, 2], "generation_verifier": {"entailed": True, "p": 0.530}}]}],
                  [{**ref[0], "trials": [{"citations": [1], "generation_verifier": {"entailed": False, "p": 0.530}}]}],
                  [{**ref[0], "trials": [{"citations": [1], "generation_verifier": {"entailed": True, "q": 0.530}}]}],
                  ref + ref):
        assert b.sameness(ref, other) == "NO"
    assert b.float_gap(1, 1.0) is None  # an int is not a probability moved
