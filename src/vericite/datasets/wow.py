"""``wow-seen-500`` and ``wow-unseen-500``: CONNER's 500 Wizard of Wikipedia test dialogues of each split
(``../shared/data/conner/wow/random_testset/``), read in place.

A line is ``topic \\t history (turns joined by [SEP]) \\t gold knowledge sentence \\t gold response``. The query
is the dialogue history (turns one per line); ``meta`` keeps the topic, its Wikipedia page views (the long-tail
analysis of CONNER §4.4, from ``<split>_topic_pageviews.txt``), the last utterance, the gold knowledge sentence
(``reference_knowledge``: the reference knowledge of Tables 2–3) and the gold response (``response``: the answer
that helpfulness scores; validity of open answers is checked against evidence, Eq. 8). No ``answers``: WoW's
answers are open.

Its corpus (:class:`~vericite.protocols.CorpusProviding`) is the split's file read as CONNER's four-field format:
the gold knowledge sentences are the documents (the topic their title), so ``vericite docs index wow-seen-500
--index DIR`` gives BM25-retrieved knowledge and factuality evidence offline. It is the split's own gold knowledge,
not Wikipedia as in CONNER (as nq-500's index is its own gold passages); WoW's ``no_passages_used`` (the wizard used
no knowledge; 30 of seen's 500) is not a document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import DataError
from ..jsonl import text_lines
from ..paths import shared_data_dir
from ..types import Sample

SPLITS = ("seen", "unseen")


def folder() -> Path:
    return shared_data_dir() / "conner" / "wow" / "random_testset"  # type: ignore[operator]


def load_wow(split: str, path: str | Path | None = None) -> list[Sample]:
    """The dialogues of one split as Samples (module docstring); a line that cannot be read is one DataError."""
    if split not in SPLITS:
        raise DataError(f"WoW split must be seen or unseen, not {split!r}")
    p = Path(path) if path else folder() / f"{split}_random_testset.txt"
    if not p.is_file():
        raise DataError(f"wow-{split}-500: file not found: {p}")
    views: dict[str, int] = {}
    pv = p.parent / f"{split}_topic_pageviews.txt"
    if pv.is_file():
        for line in text_lines(pv.read_text(encoding="utf-8")):
            topic, _, n = line.rpartition("\t")
            if topic and n.strip().lstrip("-").isdigit():
                views[topic.strip()] = int(n)
    out = []
    for n, line in enumerate(text_lines(p.read_text(encoding="utf-8")), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise DataError(f"{p}:{n}: expected 4 tab-separated fields (topic, history, knowledge, response), found {len(fields)}")
        topic, history, knowledge, response = (f.strip() for f in fields)
        turns = [t.strip() for t in history.split("[SEP]") if t.strip()]
        meta: dict[str, Any] = {"topic": topic, "last_utterance": turns[-1] if turns else "", "reference_knowledge": knowledge, "response": response}
        if topic in views:
            meta["page_views"] = views[topic]
        out.append(Sample(id=f"wow-{split}-{n}", question="\n".join(turns), meta=meta))
    return out


class WowDataset:
    def __init__(self, split: str, path: str | None = None) -> None:
        self.split = split
        self.name = f"wow-{split}-500"
        self.path = path or None

    def load(self, *, path: str | Path | None = None, **options: Any) -> list[Sample]:
        return load_wow(self.split, path or self.path)

    def corpus_file(self, **options: Any) -> str:
        return str(Path(self.path) if self.path else folder() / f"{self.split}_random_testset.txt")


def seen_from_spec(arg: str, *, ctx: Any, **options: Any) -> WowDataset:
    """Registry factory: ``wow-seen-500`` (the shared data) or ``wow-seen-500:<file>``."""
    return WowDataset("seen", arg)


def unseen_from_spec(arg: str, *, ctx: Any, **options: Any) -> WowDataset:
    """Registry factory: ``wow-unseen-500`` or ``wow-unseen-500:<file>``."""
    return WowDataset("unseen", arg)
