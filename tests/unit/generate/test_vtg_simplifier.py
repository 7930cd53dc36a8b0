"""VTG's citation simplifier batched (every check it could make next, one judge call) against one judge call per
check (the paper's loop): the same removals and the same checks traced, with their probabilities, for every
entailment rule tried; fewer judge calls; and in a whole VTG answer the same output and trace."""

from __future__ import annotations

import random

import pytest

from vericite.fakes.judges import KeywordJudge
from vericite.generate import vtg_steps as S
from vericite.generate.vtg import build
from vericite.generate.vtg_memory import Memory
from vericite.generate.vtg_trace import Tracer
from vericite.judges.llm import LLMJudge
from vericite.models.cache import CachedBackend, CallCache
from vericite.models.fake import FakeBackend
from vericite.registry import BuildContext
from vericite.types import Judgement, Passage, Sample

from tests.support.vtg import DOCS, QUESTION, scripted

DOCS5 = [Passage(f"d{i}", f"fact number {i}", f"T{i}") for i in range(5)]
CLAIM = "A sentence to support."


class SetJudge:
    """Entailed when the premise's documents (read from their ``Title:`` lines) satisfy ``rule``; counts its
    calls and the pairs they judged."""

    id = "set@1"

    def __init__(self, rule) -> None:
        self.rule = rule
        self.calls = 0
        self.pairs = 0

    def judge(self, pairs):
        self.calls += 1
        self.pairs += len(pairs)
        out = []
        for p in pairs:
            titles = frozenset(line[len("Title: ") :] for line in p.evidence.splitlines() if line.startswith("Title: "))
            ok = bool(self.rule(titles))
            prob = round(0.55 + 0.01 * len(titles), 2) if ok else round(0.45 - 0.01 * len(titles), 2)
            out.append(Judgement(self.id, p.claim, p.evidence, prob, "supported" if ok else "not_supported"))
        return out


def paper_loop(cited, entailed):
    """§2.3 as the sequential code wrote it: each citation in turn, dropped when the others still entail."""
    kept, removed, checks = list(cited), [], []
    for c in list(cited):
        if len(kept) < 2:
            break
        rest = [x for x in kept if x != c]
        ok = entailed(rest)
        checks.append((c + 1, ok))
        if ok:
            kept, removed = rest, removed + [c]
    return kept, [r + 1 for r in removed], checks


def simplify(rule, cited, batch):
    judge = SetJudge(rule)
    v = S.Verifier(judge, Tracer(), "q?")
    kept, trace = v.simplify(Memory(DOCS5), cited, CLAIM, batch=batch)
    return kept, trace, judge


def cases(n=300, seed=0):
    """(rule, cited): random truth tables over the sets of five documents (not monotone: anything a judge may
    say), cited subsets of 1-5 documents in random order."""
    rng = random.Random(seed)
    for _ in range(n):
        table: dict[frozenset, bool] = {}
        rule = lambda titles, table=table, r=random.Random(rng.random()): table.setdefault(titles, r.random() < 0.5)  # noqa: E731
        cited = rng.sample(range(5), rng.randint(1, 5))
        yield rule, cited


def test_batched_and_sequential_make_the_papers_removals_and_checks():
    calls = {True: 0, False: 0}
    speculative = 0
    for rule, cited in cases():
        titles = lambda group: frozenset(f"T{i}" for i in group)  # noqa: E731
        want_kept, want_removed, want_checks = paper_loop(cited, lambda rest: rule(titles(rest)))
        traces = {}
        for batch in (False, True):
            kept, trace, judge = simplify(rule, cited, batch)
            assert kept == want_kept and trace["removed"] == want_removed
            assert [(c["without"], c["entailed"]) for c in trace["checked"]] == want_checks
            assert trace["checks"] == len(want_checks)
            # each check carries its judgement's probability
            assert all((c["probability"] > 0.5) == c["entailed"] for c in trace["checked"])
            assert trace["calls"] == judge.calls
            calls[batch] += judge.calls
            traces[batch] = trace
        seq, bat = traces[False], traces[True]
        assert {k: v for k, v in bat.items() if k not in ("calls", "speculative")} == {k: v for k, v in seq.items() if k != "calls"}
        assert "speculative" not in seq
        assert seq["calls"] == seq["checks"]  # one call per check
        assert bat["calls"] == len(bat["removed"]) + (0 if not bat["checks"] or bat["checked"][-1]["entailed"] else 1)
        assert bat["calls"] <= seq["calls"]
        speculative += bat["speculative"]
    assert calls[True] < 0.7 * calls[False]  # the gain over these rules (443 calls against 752)
    assert speculative > 0  # and its price: checks judged after a removal, never used


def test_nothing_removable_one_call_instead_of_one_per_citation():
    never = lambda titles: len(titles) == 5  # only all five together entail  # noqa: E731
    for batch, want_calls in ((False, 5), (True, 1)):
        kept, trace, judge = simplify(never, [0, 1, 2, 3, 4], batch)
        assert kept == [0, 1, 2, 3, 4] and trace["removed"] == [] and trace["checks"] == 5
        assert judge.calls == want_calls and judge.pairs == 5
        assert trace.get("speculative", 0) == 0


def test_everything_removable_is_batchings_worst_case():
    # the first check of every round is entailed: as many calls as one per check, and the rest of each round judged
    # for nothing (4 + 3 + 2 + 1 speculative checks)
    always = lambda titles: bool(titles)  # noqa: E731
    kept, seq, j_seq = simplify(always, [0, 1, 2, 3, 4], False)
    kept_b, bat, j_bat = simplify(always, [0, 1, 2, 3, 4], True)
    assert kept == kept_b == [4] and seq["removed"] == bat["removed"] == [1, 2, 3, 4]
    assert j_seq.calls == j_bat.calls == 4
    assert j_seq.pairs == 4 and j_bat.pairs == 14 and bat["speculative"] == 10


def test_a_pair_already_judged_in_the_answer_is_not_judged_again():
    judge = SetJudge(lambda titles: len(titles) >= 2)
    v = S.Verifier(judge, Tracer(), "q?")
    memory = Memory(DOCS5)
    v.simplify(memory, [0, 1, 2], CLAIM, batch=True)
    calls, pairs = judge.calls, judge.pairs
    kept, trace = v.simplify(memory, [0, 1, 2], CLAIM, batch=False)
    assert judge.calls == calls and judge.pairs == pairs and trace["calls"] == 0 and kept == [1, 2]


def answer(batch: bool, judge):
    backend = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})
    m = build("", ctx=BuildContext(), backend=backend, judge=judge, k=4, docs_per_query=1, simplifier_batch=batch)
    return m, m.answer(Sample("q1", QUESTION, passages=list(DOCS)))


def strip_calls(record):
    for s in record["vtg"]["sentences"]:
        for t in s["trials"]:
            if t.get("simplifier"):
                t["simplifier"] = {k: v for k, v in t["simplifier"].items() if k not in ("calls", "speculative")}
    record["vtg"].pop("seconds")
    record.pop("seconds")
    for s in record["vtg"]["sentences"]:
        for t in s["trials"]:
            t.pop("tokens", None)
    record["vtg"].pop("components")
    judged = record["vtg"].pop("judge")  # pairs judged: the speculative ones too
    return record, judged


class CountingKeywordJudge(KeywordJudge):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def judge(self, pairs):
        self.calls += 1
        return super().judge(pairs)


def test_a_whole_answer_is_the_same_with_fewer_judge_calls():
    # the memory verifier accepts the whole memory (4 documents) for Paris; the simplifier then checks each
    judges = {b: CountingKeywordJudge() for b in (False, True)}
    records = {b: answer(b, judges[b])[1] for b in (False, True)}
    t = records[True]["vtg"]["sentences"][0]["trials"][0]
    # drop [1]: not entailed; drop [2], [3], [4]: entailed, one after the other
    assert t["outcome"] == "verified-memory" and t["simplifier"]["removed"] == [2, 3, 4]
    assert [(c["without"], c["entailed"], c["probability"]) for c in t["simplifier"]["checked"]] == [(1, False, 0.1), (2, True, 0.9), (3, True, 0.9), (4, True, 0.9)]
    seq_simp = records[False]["vtg"]["sentences"][0]["trials"][0]["simplifier"]
    assert seq_simp["calls"] == 4 and t["simplifier"]["calls"] == 3 and t["simplifier"]["speculative"] == 3
    assert judges[False].calls - judges[True].calls == 1
    (bat, judged_bat), (seq, judged_seq) = strip_calls(records[True]), strip_calls(records[False])
    assert bat == seq
    assert judged_bat["calls"] == judged_seq["calls"] + 3  # the three speculative pairs


def test_every_batched_judgement_goes_through_the_call_cache(tmp_path):
    def run():
        fake = FakeBackend("judge-model")
        cached = CachedBackend(fake, CallCache(tmp_path / "calls.sqlite"))
        judge = LLMJudge(cached)
        v = S.Verifier(judge, Tracer(), "q?")
        kept, trace = v.simplify(Memory(DOCS5), [0, 1, 2, 3, 4], CLAIM, batch=True)
        return fake, kept, trace

    fake, kept, trace = run()
    assert fake.calls["next_token_logprobs"] == trace["checks"] + trace["speculative"] > 0
    fake2, kept2, trace2 = run()
    assert fake2.calls["next_token_logprobs"] == 0  # all from the cache, batched or not
    assert (kept2, trace2["checked"]) == (kept, trace["checked"])


@pytest.mark.parametrize("batch", [False, True])
def test_the_manifest_says_which(batch):
    m, _ = answer(batch, KeywordJudge())
    assert m.manifest()["simplifier_batch"] is batch


def test_one_call_per_check_is_the_default():
    # on llama.cpp a batch is judged one prompt after another: batching saves no work there, and its speculative
    # checks cost (docs/benchmarks.md)
    m = build("", ctx=BuildContext(), backend=scripted([]), judge=KeywordJudge())
    assert m.opts.simplifier_batch is False
