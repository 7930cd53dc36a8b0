"""A corpus's judge pairs, judged in large batches: what every metric that asks a judge shares (KaLMA alignment and
[NA], ALCE citation recall/precision; CONNER factuality and VTG's verifier next) and the judges' meta-evaluation on
ALCE's human labels (``judges/meta_alce.py``). ``vericite.metrics.judging`` re-exports every name.

A metric collects the pairs of the whole corpus first, then :func:`judge_corpus` sends each distinct pair once,
in calls of about :data:`JUDGE_CHUNK` pairs, never splitting the pairs of one evidence text, so an NLI or LLM
judge sees large batches rather than one call per answer, and a long judging can report progress. What a
judgement means for a binary metric is :func:`judgement_verdict`: entailed iff its status is ``ok`` and its
probability is at least :data:`ENTAILED_AT`; anything else is unparseable, left out of its ratio and counted.
"""

from __future__ import annotations

import contextlib
import numbers
from typing import Any, Callable, ContextManager, Iterable, Iterator, Sequence

from ..errors import VericiteError
from ..types import JudgePair, Judgement

#: pairs per judge call (a batched judge gets batches this large; progress moves by them)
JUDGE_CHUNK = 64
#: P(supported) at or above which a judgement counts as entailed
ENTAILED_AT = 0.5

#: ``progress(total)`` is entered with the number of pairs and yields ``advance(n)``
Progress = Callable[[int], ContextManager[Callable[[int], None]]]


def judgement_verdict(j: Judgement) -> bool | None:
    """Entailed (True), not (False), or unparseable (None): status ok and probability ≥ 0.5 counts. A probability
    that is not a number in [0, 1] (NaN, a string, a plugin judge's logit of 7.0) is unparseable, never a verdict."""
    p = j.probability
    if j.status != "ok" or isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:  # NaN fails too
        return None
    return bool(p >= ENTAILED_AT)


def judge_id(judge: Any) -> str:
    """The id a judge is recorded by (its ``id``; the class name for an object without one)."""
    return str(getattr(judge, "id", type(judge).__name__))


def judge_corpus(judge: Any, pairs: Iterable[JudgePair], *, progress: Progress | None = None, chunk: int = JUDGE_CHUNK) -> dict[JudgePair, Judgement]:
    """Every distinct pair of ``pairs`` judged once, in first-seen order: ``judge.judge`` is called with runs of
    about ``chunk`` pairs (:func:`sentence_chunks`; a judge's own ``pairs_per_call`` instead, when it has one: a
    judge on N Ray workers takes N times the pairs), and ``progress`` (when given) advances after each call."""
    ordered = list(dict.fromkeys(pairs))
    chunk = int(getattr(judge, "pairs_per_call", 0) or chunk)  # a judge spread over workers takes larger calls
    judged: dict[JudgePair, Judgement] = {}
    if not ordered:
        return judged
    with (progress(len(ordered)) if progress is not None else contextlib.nullcontext(lambda n=1: None)) as advance:
        for part in sentence_chunks(ordered, chunk):
            try:
                judgements = judge.judge(part)
            except VericiteError:
                raise
            except Exception as e:  # a judge's own failure: one line naming it (the judgements made so far are checkpointed)
                raise VericiteError(f"judge {judge_id(judge)} failed on a call of {len(part)} pairs: {type(e).__name__}: {e}"[:500]) from e
            if not isinstance(judgements, (list, tuple)) or not all(isinstance(j, Judgement) for j in judgements):
                raise VericiteError(f"judge {judge_id(judge)} returned {type(judgements).__name__}, not a list of Judgements, for {len(part)} pairs")
            if len(judgements) != len(part):
                raise VericiteError(f"judge {judge_id(judge)} returned {len(judgements)} judgements for {len(part)} pairs")
            judged.update(zip(part, judgements))
            advance(len(part))
    return judged


def sentence_chunks(pairs: Sequence[JudgePair], size: int) -> Iterator[list[JudgePair]]:
    """Consecutive runs of about ``size`` pairs; a run is only cut where the evidence changes, so the pairs of
    one sentence stay in one call (a judge that reuses the evidence's evaluation sees them together)."""
    chunk: list[JudgePair] = []
    for p in pairs:
        if len(chunk) >= size and p.evidence != chunk[-1].evidence:
            yield chunk
            chunk = []
        chunk.append(p)
    if chunk:
        yield chunk
