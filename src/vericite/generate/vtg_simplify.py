"""VTG's citation simplifier by halving (``simplifier_strategy: halving``), beside the paper's greedy pass
(``vtg_steps.Verifier.simplify``, the default).

The greedy pass (§2.3, Algorithm 1 line 17) asks the judge once per citation: drop it when the others still
entail the sentence. Given a whole memory of n citations (the memory verifier's, e.g. a question's 14-73 triples)
that is n judge calls, each premise about the whole memory. Halving tries to drop a chunk of citations at once,
as delta debugging does: the whole list's first half, then its second half; a chunk whose removal leaves the
sentence not entailed is split in two and each half tried in turn, down to single citations. The chunks are
contiguous runs of the citations' own order, tried first to last (depth first), so the result is deterministic.

Under a monotone judge (a premise entails whenever a premise it contains does, its documents in any order) the
result is the greedy pass's, citation for citation: when a chunk C is tried, every citation before it has been
decided as the greedy pass decided it and every one after it is still there, so the greedy pass would be at C's
first citation with the same citations kept; if the rest entails without all of C, it entails without any prefix of
C (it holds more), so the greedy pass drops each of C in turn too; if not, both go on inside C. So the result is
1-minimal (no single citation left can be dropped with the sentence still entailed: each one left was tried alone
and kept) and the checks number O(k log n) for k citations kept, not n. A chunk whose rest was already judged in
this pass (the second half, after its sibling first half was dropped, leaves the rest its parent left) is not
judged again but split at once, and a rest with no citation is never judged (not entailed, as the greedy pass never
leaves none). Under any judge, monotone or not, every chunk is tried at most once, so there are at most 2n - 1
checks, and the sentence keeps a set the judge last said entails it (or all it was given).

Each check's premise lists the citations it keeps last to first. A judge call's time is its prompt's evaluation,
and llama.cpp does not evaluate again the longest token prefix a prompt shares with the previous one: the
citations after the chunk tried (all still there) come first, and the next chunk tried lies inside the chunk just
tried or after it, so consecutive checks share those citations, often most of their premise (listed first to
last, consecutive premises differ from their first citations on). A judge that reads the premise as a set of
documents (the keyword judge, a monotone rule) gives the same verdicts in either order; an LLM judge may not
(position bias), which its verdicts on premises other than the greedy pass's already allow.
(``benchmarks/bench_vtg_simplifier.py`` counts the words each order has llama.cpp evaluate.)

Each check goes through :meth:`vtg_steps.Verifier.judge_many` as the greedy pass's do (the answer's judged pairs,
the call cache, the judge's token and call counts). The trace is the greedy pass's (``removed``, ``checks``,
``checked``, ``calls``) with ``strategy: halving``; each check's ``without`` is the list of citations its chunk
left out (1-based), not one citation."""

from __future__ import annotations

from typing import Any, Sequence

from .vtg_memory import Memory

#: the simplifier's strategies (``VtgOptions.simplifier_strategy``): the paper's one-at-a-time pass, and halving
STRATEGIES = ("greedy", "halving")
#: a new run's (the paper's); a folder written before the option ran it too
SIMPLIFIER_STRATEGY = "greedy"


def simplify_halving(verifier: Any, memory: Memory, cited: Sequence[int], sentence: str) -> tuple[list[int], dict[str, Any]]:
    """The citations kept (catalogue positions, in ``cited``'s order) and the trace (module docstring);
    ``verifier`` is the answer's ``vtg_steps.Verifier``."""
    order = list(dict.fromkeys(cited))
    kept = list(order)
    removed: list[int] = []
    checked: list[dict[str, Any]] = []
    judged: dict[tuple[int, ...], bool] = {}  # rests judged in this pass
    calls_before = verifier.calls
    chunks = [(0, len(order))]  # [lo, hi) of ``order``, a stack: the last is tried next
    while chunks:
        lo, hi = chunks.pop()
        chunk = order[lo:hi]  # all still kept: a chunk is dropped whole, and its parts are then never tried
        rest = tuple(x for x in kept if x not in chunk)
        if rest and rest not in judged:
            ok, p, status = verifier.entails(memory, list(rest[::-1]), sentence)  # last to first: a shared start
            judged[rest] = ok
            checked.append({"without": [c + 1 for c in chunk], "entailed": ok, "probability": p, **({"status": status} if status != "ok" else {})})
            if ok:
                kept = list(rest)
                removed.extend(chunk)
                continue
        if hi - lo > 1:
            mid = lo + (hi - lo + 1) // 2
            chunks += [(mid, hi), (lo, mid)]  # the first half first
    trace = {"strategy": "halving", "removed": [r + 1 for r in removed], "checks": len(checked), "checked": checked, "calls": verifier.calls - calls_before}
    return kept, trace
