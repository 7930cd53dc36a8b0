"""A corpus's judge pairs judged in large batches: moved to :mod:`vericite.judges.batches` (floor 2), so that the
judges' own meta-evaluation can use it; every name is still importable from here."""

from __future__ import annotations

from ..judges.batches import ENTAILED_AT, JUDGE_CHUNK, Progress, judge_corpus, judge_id, judgement_verdict, sentence_chunks

__all__ = ["ENTAILED_AT", "JUDGE_CHUNK", "Progress", "judge_corpus", "judge_id", "judgement_verdict", "sentence_chunks"]
