"""The judge an evaluation's checkpoint answers from (:class:`MemoJudge`) and the key of a judgement
(:func:`pair_key`), out of ``checkpoint.py``, which holds the checkpoint file itself."""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping, Sequence

from .. import jsonl
from ..errors import VericiteError


def pair_key(judge_id: str, pair: Any) -> str:
    """A judgement's key: the judge's id and the whole pair (the question and the context are judged too)."""
    material = [judge_id, pair.evidence, pair.claim, pair.question, pair.context]
    return hashlib.sha256(jsonl.dumps_line(material).encode("utf-8")).hexdigest()


def _plain(d: Mapping[str, Any]) -> dict[str, Any]:
    """A judgement's dict as the checkpoint gives it back (JSON's types), so a fresh and a resumed one are alike."""
    return json.loads(jsonl.dumps_line(d))  # type: ignore[no-any-return]


class MemoJudge:
    """``judge`` answering from ``memo`` (pair key -> judgement dict) first; the pairs not there are judged once and
    added (and to ``fresh``, what the current answer's checkpoint line will hold). Everything else (``id``,
    ``options()``, ``pairs_per_call``, its labels) is the judge's."""

    def __init__(self, judge: Any, memo: dict[str, dict[str, Any]], fresh: dict[str, dict[str, Any]]) -> None:
        self._judge = judge
        self._memo = memo
        self._fresh = fresh
        self._jid = str(getattr(judge, "id", type(judge).__name__))
        self.calls = 0  # calls that reached the judge

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    def judge(self, pairs: Sequence[Any]) -> list[Any]:
        from ..types import Judgement

        pairs = list(pairs)
        keys = [pair_key(self._jid, p) for p in pairs]
        todo = {k: p for k, p in zip(keys, pairs) if k not in self._memo}
        if todo:
            got = self._judge.judge(list(todo.values()))
            if len(got) != len(todo):
                raise VericiteError(f"judge {self._jid} returned {len(got)} judgements for {len(todo)} pairs")
            self.calls += 1
            for k, j in zip(todo, got):
                self._memo[k] = self._fresh[k] = _plain(j.to_dict())
        return [Judgement.from_dict(self._memo[k]) for k in keys]
