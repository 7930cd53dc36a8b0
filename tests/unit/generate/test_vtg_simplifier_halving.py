"""VTG's citation simplifier by halving (``simplifier_strategy: halving``, ``vtg_simplify.py``) against the paper's
greedy pass: the same citations kept and removed under monotone judges, 1-minimal, far fewer checks on a large
memory; a judge that is not monotone ends it within 2n - 1 checks, deterministically; every check through the
answer's judge path (its pairs, the call cache); the option recorded, kept by a resumed run, refused when bad."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from vericite.errors import VericiteError
from vericite.fakes.judges import KeywordJudge
from vericite.generate import vtg_steps as S
from vericite.generate.vtg import VtgOptions, build
from vericite.generate.vtg_memory import Memory
from vericite.generate.vtg_trace import Tracer
from vericite.judges.llm import LLMJudge
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.registry import BuildContext
from vericite.types import Judgement, Passage, Sample, Triple

from tests.support.vtg import DOCS, QUESTION, scripted

CLAIM = "A sentence to support."


def docs(n):
    return [Passage(f"d{i}", f"fact number {i}", f"T{i}") for i in range(n)]


class SetJudge:
    """Entailed when the premise's document numbers (read from their ``Title: T<i>`` lines) satisfy ``rule``;
    counts its calls."""

    id = "set@1"

    def __init__(self, rule) -> None:
        self.rule = rule
        self.calls = 0

    def judge(self, pairs):
        self.calls += 1
        out = []
        for p in pairs:
            numbers = frozenset(int(line[len("Title: T") :]) for line in p.evidence.splitlines() if line.startswith("Title: T"))
            ok = bool(self.rule(numbers))
            out.append(Judgement(self.id, p.claim, p.evidence, 0.9 if ok else 0.1, "supported" if ok else "not_supported"))
        return out


def simplify(rule, cited, strategy, n=None):
    judge = SetJudge(rule)
    v = S.Verifier(judge, Tracer(), "q?")
    kept, trace = v.simplify(Memory(docs(n or max(cited) + 1)), cited, CLAIM, strategy=strategy)
    return kept, trace, judge


def monotone_rules(n, count, seed):
    """Entailed by any premise holding one of a few random sets (up-closed: monotone), several minimal sets apart."""
    rng = random.Random(seed)
    for _ in range(count):
        needs = [frozenset(rng.sample(range(n), rng.randint(1, 3))) for _ in range(rng.randint(1, 3))]
        yield lambda numbers, needs=needs: any(need <= numbers for need in needs)


def test_under_a_monotone_judge_halving_keeps_and_removes_what_greedy_does():
    rng = random.Random(1)
    for rule in monotone_rules(8, 200, seed=0):
        cited = rng.sample(range(8), rng.randint(1, 8))
        if not rule(frozenset(cited)):
            continue  # the simplifier is given citations the verifier found entailing
        g_kept, g_trace, _ = simplify(rule, cited, "greedy", 8)
        h_kept, h_trace, _ = simplify(rule, cited, "halving", 8)
        assert h_kept == g_kept and h_trace["removed"] == g_trace["removed"]
        assert rule(frozenset(h_kept))  # still entailed
        assert len(h_kept) == 1 or not any(rule(frozenset(h_kept) - {c}) for c in h_kept)  # 1-minimal
        assert h_trace["strategy"] == "halving" and "strategy" not in g_trace


def test_every_subset_of_five_documents_required_the_same_result_as_greedy():
    # the judge entails exactly the premises holding a given set: every non-empty set, cited in two orders
    for size in range(1, 6):
        for need in itertools.combinations(range(5), size):
            rule = lambda numbers, need=frozenset(need): need <= numbers  # noqa: E731
            for cited in ([0, 1, 2, 3, 4], [4, 2, 0, 3, 1]):
                g_kept, g_trace, _ = simplify(rule, cited, "greedy")
                h_kept, h_trace, _ = simplify(rule, cited, "halving")
                assert h_kept == g_kept == [c for c in cited if c in need] and h_trace["removed"] == g_trace["removed"]


@pytest.mark.parametrize("need, checks", [((3, 29), 14), ((0, 39), 16), ((17, 18), 9)])
def test_forty_citations_two_needed_far_fewer_judge_calls(need, checks):
    rule = lambda numbers: set(need) <= numbers  # noqa: E731
    g_kept, g_trace, g_judge = simplify(rule, list(range(40)), "greedy")
    h_kept, h_trace, h_judge = simplify(rule, list(range(40)), "halving")
    assert g_kept == h_kept == list(need)
    assert g_judge.calls == g_trace["calls"] == g_trace["checks"] == 40
    assert h_judge.calls == h_trace["calls"] == h_trace["checks"] <= 2 * 2 * math.ceil(math.log2(40))  # O(k log n)
    assert h_judge.calls == checks  # 40 for the greedy pass
    assert len(h_trace["removed"]) == 38 and sorted(h_trace["removed"] + [c + 1 for c in need]) == list(range(1, 41))


def test_the_checks_say_which_chunk_each_left_out():
    # four citations, only the first needed: drop [1, 2] (no), drop [1] (no), drop [2] (yes), drop [3, 4] (yes)
    kept, trace, judge = simplify(lambda numbers: 0 in numbers, [0, 1, 2, 3], "halving")
    assert kept == [0] and trace["removed"] == [2, 3, 4]
    assert [(c["without"], c["entailed"], c["probability"]) for c in trace["checked"]] == [([1, 2], False, 0.1), ([1], False, 0.1), ([2], True, 0.9), ([3, 4], True, 0.9)]
    assert trace == {"strategy": "halving", "removed": [2, 3, 4], "checks": 4, "checked": trace["checked"], "calls": 4}


def test_a_rest_already_judged_is_split_not_judged_again():
    # eight citations, the fourth needed: drop [1-4] (no), drop [1, 2] (yes); dropping [3, 4] now leaves what dropping
    # [1-4] left, judged not entailed: split at once, drop [3] (yes), [4] likewise not judged again; drop [5-8] (yes)
    kept, trace, judge = simplify(lambda numbers: 3 in numbers, list(range(8)), "halving")
    assert kept == [3] and trace["removed"] == [1, 2, 3, 5, 6, 7, 8]
    assert [(c["without"], c["entailed"]) for c in trace["checked"]] == [([1, 2, 3, 4], False), ([1, 2], True), ([3], True), ([5, 6, 7, 8], True)]
    assert judge.calls == trace["checks"] == 4
    # the last two needed: [1, 2] dropped, then [3, 4] would leave nothing: split, never judged with no premise
    kept, trace, _ = simplify(lambda numbers: {2, 3} <= numbers, [0, 1, 2, 3], "halving")
    assert kept == [2, 3] and [c["without"] for c in trace["checked"]] == [[1, 2], [3], [4]]


class Recording(SetJudge):
    """:class:`SetJudge` that keeps each premise's document numbers in the order the premise lists them."""

    def __init__(self, rule) -> None:
        super().__init__(rule)
        self.premises: list[list[int]] = []

    def judge(self, pairs):
        for p in pairs:
            self.premises.append([int(line[len("Title: T") :]) for line in p.evidence.splitlines() if line.startswith("Title: T")])
        return super().judge(pairs)


def test_each_premise_lists_its_citations_last_to_first_so_consecutive_checks_share_a_start():
    # a llama.cpp judge does not evaluate again the prefix a prompt shares with the previous one
    judge = Recording(lambda numbers: 1 in numbers)
    kept, trace = S.Verifier(judge, Tracer(), "q?").simplify(Memory(docs(8)), list(range(8)), CLAIM, strategy="halving")
    assert kept == [1]
    # drop [1-4] (no), [1, 2] (no), [1] (yes; [2] would leave what [1, 2] left: not judged), [3, 4] (yes), [5-8] (yes)
    assert [c["without"] for c in trace["checked"]] == [[1, 2, 3, 4], [1, 2], [1], [3, 4], [5, 6, 7, 8]]
    assert judge.premises == [[7, 6, 5, 4], [7, 6, 5, 4, 3, 2], [7, 6, 5, 4, 3, 2, 1], [7, 6, 5, 4, 1], [1]]


def test_one_citation_is_never_judged():
    kept, trace, judge = simplify(lambda numbers: True, [2], "halving")
    assert kept == [2] and trace["checks"] == 0 and judge.calls == 0


def test_a_judge_that_is_not_monotone_ends_within_two_n_checks_deterministically():
    rng = random.Random(2)
    for _ in range(300):
        table: dict[frozenset, bool] = {}
        rule = lambda numbers, table=table, r=random.Random(rng.random()): table.setdefault(numbers, r.random() < 0.5)  # noqa: E731
        n = rng.randint(1, 9)
        cited = rng.sample(range(9), n)
        kept, trace, judge = simplify(rule, cited, "halving", 9)
        assert trace["checks"] <= 2 * n - 1 and judge.calls == trace["checks"]
        assert kept and set(kept) <= set(cited) and kept == [c for c in cited if c in kept]
        assert sorted(kept + [r - 1 for r in trace["removed"]]) == sorted(cited)
        last_removal = [c for c in trace["checked"] if c["entailed"]]
        assert not last_removal or rule(frozenset(kept))  # what the judge last said entails
        again, trace_again, _ = simplify(rule, cited, "halving", 9)
        assert (again, trace_again) == (kept, trace)


def test_a_pair_already_judged_in_the_answer_is_not_judged_again():
    judge = SetJudge(lambda numbers: 0 in numbers)
    v = S.Verifier(judge, Tracer(), "q?")
    memory = Memory(docs(4))
    v.simplify(memory, [0, 1, 2, 3], CLAIM, strategy="halving")
    calls = judge.calls
    kept, trace = v.simplify(memory, [0, 1, 2, 3], CLAIM, strategy="halving")
    assert judge.calls == calls and trace["calls"] == 0 and trace["checks"] == 4 and kept == [0]


def test_every_check_goes_through_the_call_cache(tmp_path):
    def run():
        fake = FakeBackend("judge-model")
        judge = LLMJudge(CachedBackend(fake, CallCache(tmp_path / "calls.sqlite")))
        tracer = Tracer()
        kept, trace = S.Verifier(judge, tracer, "q?").simplify(Memory(docs(8)), list(range(8)), CLAIM, strategy="halving")
        return fake, kept, trace, tracer

    fake, kept, trace, tracer = run()
    assert fake.calls["next_token_logprobs"] == trace["checks"] == tracer.judge_calls > 0 and tracer.judge_words > 0
    fake2, kept2, trace2, _ = run()
    assert fake2.calls["next_token_logprobs"] == 0 and (kept2, trace2["checked"]) == (kept, trace["checked"])


# --------------------------------------------------------------------------- in VTG's answers


def method(backend, **opts):
    return build("", ctx=BuildContext(), backend=backend, judge=KeywordJudge(), **{"k": 4, "docs_per_query": 1, **opts})


def test_a_whole_answer_halving_is_the_greedy_answer_with_the_option_recorded():
    # the memory verifier accepts the whole memory (4 documents) for Paris, cited [2]; the keyword judge is monotone
    def answer(**opts):
        backend = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})
        m = method(backend, **opts)
        return m, m.answer(Sample("q1", QUESTION, passages=list(DOCS)))

    greedy_m, greedy = answer()
    halving_m, halving = answer(simplifier_strategy="halving")
    assert greedy_m.manifest()["simplifier_strategy"] == "greedy" and halving_m.manifest()["simplifier_strategy"] == "halving"
    assert halving["output"] == greedy["output"] == "Paris is the capital of France [1]. Rome is the capital of Italy [3]."
    t = halving["vtg"]["sentences"][0]["trials"][0]
    assert t["outcome"] == "verified-memory" and t["simplifier"]["strategy"] == "halving" and t["simplifier"]["removed"] == [2, 3, 4]
    assert "strategy" not in greedy["vtg"]["sentences"][0]["trials"][0]["simplifier"]  # the paper's trace as before


def test_a_memory_of_forty_triples_is_simplified_in_far_fewer_judge_calls():
    # the case of configs/vtg-kg-removal.yaml: the memory verifier hands every triple to the simplifier
    n = 40
    triples = [Triple(f"Q{i}", "population", str(1000 + i), f"Town{i}") for i in range(1, n + 1)]
    triples[24] = Triple("Q25", "capital of", "France", "Paris")
    calls = {}
    for strategy in ("greedy", "halving"):
        backend = scripted(["Paris, capital of France."], cites={"Paris,": "[7]"})  # a wrong citation: the memory verifies
        r = method(backend, simplifier_strategy=strategy).answer(Sample("k1", "Paris?", knowledge=triples))
        (t,) = r["vtg"]["sentences"][0]["trials"]
        assert t["outcome"] == "verified-memory" and t["citations"] == [25]
        assert r["output"] == "Paris, capital of France [Q25, capital of: France]."
        calls[strategy] = t["simplifier"]["calls"]
    assert calls["greedy"] == n and calls["halving"] <= 2 * math.ceil(math.log2(n)) + 1


def test_a_bad_strategy_is_one_clear_error():
    with pytest.raises(VericiteError, match="simplifier_strategy") as e:
        method(scripted([]), simplifier_strategy="binary")
    assert "\n" not in str(e.value)
    with pytest.raises(VericiteError, match=r"simplifier is the ablation switch.*simplifier_strategy=halving"):
        method(scripted([]), simplifier="halving")
    with pytest.raises(VericiteError, match="simplifier_batch .* does not apply to simplifier_strategy=halving"):
        method(scripted([]), simplifier_batch=True, simplifier_strategy="halving")
    assert method(scripted([]), simplifier="false").opts.simplifier is False  # the ablation switch as before


def test_a_resumed_folder_keeps_its_strategy():
    new = {"method": "vtg@1", "k": 5, "simplifier_strategy": "halving"}
    assert VtgOptions.resumed_options({}, new)["simplifier_strategy"] == "halving"
    assert VtgOptions.resumed_options({}, {**new, "simplifier_strategy": "greedy"})["simplifier_strategy"] == "greedy"
    before = {"method": "vtg@1", "k": 5}  # written before the option: the greedy pass
    assert VtgOptions.resumed_options({}, before)["simplifier_strategy"] == "greedy"
    assert "simplifier_strategy" not in VtgOptions.resumed_options({"simplifier_strategy": "greedy"}, new)  # given: as given
    assert "simplifier_strategy" in VtgOptions.recorded_when_set
    m = method(scripted([]))
    assert m.simplifier_strategy == "greedy" and m.upgrade_manifest(before)["simplifier_strategy"] == "greedy"
    assert m.upgrade_manifest(new)["simplifier_strategy"] == "halving"
    resumed = method(scripted([]), **VtgOptions.resumed_options({}, new))
    assert resumed.simplifier_strategy == "halving" and resumed.manifest()["simplifier_strategy"] == "halving"


def test_the_strategy_is_recorded_in_the_config_only_when_given():
    from vericite.runs.config import GenerateConfig

    assert "simplifier_strategy" not in GenerateConfig(dataset="d", method="vtg", method_args={"k": 3}).record()
    assert GenerateConfig(dataset="d", method="vtg", method_args={"simplifier_strategy": "halving"}).record()["simplifier_strategy"] == "halving"
