"""Brackets and sentences: the one splitter every citation format shares.

Both citation formats (triples, ``[Q1, p: v]``; passages, ``[1][2]``) put citations in square brackets after the
words they support, so finding brackets and cutting the answer into sentences is the same job for both.
Model output is often garbled, so nothing here raises: unbalanced or nested brackets have one fixed reading.

Rules (documented because metrics depend on them):

* A *bracket* is an outermost matched ``[`` … ``]`` pair. ``[a [b] c]`` is one bracket; a ``[`` that is never
  closed and a ``]`` that was never opened are ordinary text (so ``[Q1, p: v`` is not a citation attempt and
  ``x [ y [Q1, p: v]`` holds one bracket).
* A sentence ends after a run of ``.``, ``!`` or ``?`` (closing quotes/parentheses may follow) that is followed
  by whitespace or the end of the text, and at every line break. A period does not end a sentence after a
  common abbreviation ("St.", "Dr.", "e.g.") or a single-letter initial ("J. Smith"), nor when the next word
  starts with a lower-case letter ("c. 1600 in"); "3.5" never splits since no space follows the period.
  Terminators inside brackets never split.
* Brackets that come right after a sentence end (``S1. [k1] S2.``) belong to the sentence they follow: models
  often put the citation after the period.
* ``clean`` is a sentence with every bracket removed and whitespace tidied: what a judge reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Span = tuple[int, int]  # [start, end) in the raw text

# A period after one of these does not end a sentence (compared lower-cased, without the period).
ABBREVIATIONS = frozenset(
    """st mt ft mr mrs ms dr prof sr jr gen col lt sgt capt rev fr hon pres gov sen rep no nos vol vols
    ed eds fig figs pp p ca c approx vs etc al e.g i.e cf viz inc ltd co corp dept univ jan feb mar apr jun
    jul aug sep sept oct nov dec""".split()
)

# A sentence terminator run: ``.``/``!``/``?`` (several allowed: "?!", "..."), then closing quotes or brackets
# other than ``]`` (which closes a citation), then whitespace, a citation's ``[`` or the end; or a line break.
_TERMINATOR = re.compile(r"[.!?]+[\"'”’»)]*(?=\s|\[|$)|\n")
_WORD_BEFORE = re.compile(r"(\S+)$")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?)\]}»”’])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[{«“])\s+")
_SPACES = re.compile(r"\s+")


def find_brackets(text: str) -> list[Span]:
    """Spans of the outermost matched ``[`` … ``]`` pairs, in order (end exclusive)."""
    if "[" not in text:
        return []
    stack: list[int] = []
    out: list[Span] = []
    for i, ch in enumerate(text):
        if ch == "[":
            stack.append(i)
        elif ch == "]" and stack:
            start = stack.pop()
            # Pairs close innermost-first, so an enclosing pair closes later and swallows what it contains.
            while out and out[-1][0] > start:
                out.pop()
            out.append((start, i + 1))
    return out


@dataclass(frozen=True)
class SentenceSpan:
    """One sentence of an answer: where it is, its bracket spans (absolute), and its clean text."""

    start: int
    end: int
    text: str
    clean: str
    brackets: tuple[Span, ...]


def clean_text(text: str, brackets: list[Span] | tuple[Span, ...] | None = None, offset: int = 0) -> str:
    """``text`` with the given bracket spans (absolute, ``offset`` = where ``text`` starts) removed, whitespace
    collapsed and no space left before punctuation ("Rome [Q1, p: v]." -> "Rome.")."""
    if brackets is None:
        brackets = find_brackets(text)
        offset = 0
    if brackets:
        parts = []
        pos = 0
        for s, e in brackets:
            parts.append(text[pos : s - offset])
            parts.append(" ")
            pos = e - offset
        parts.append(text[pos:])
        text = "".join(parts)
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _SPACE_AFTER_OPEN.sub(r"\1", text)
    return text.strip()


def _ends_sentence(text: str, match: re.Match[str]) -> bool:
    run = match.group()
    if run == "\n":
        return True
    if run[0] != "." or run.startswith(".."):
        return True  # "!", "?" and ellipses always end a sentence
    before = _WORD_BEFORE.search(text, max(0, match.start() - 40), match.start())  # bounded: long texts stay linear
    if before:
        word = before.group(1).lstrip("\"'(“‘«").lower()
        if word in ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return False
    nxt = match.end()
    while nxt < len(text) and text[nxt].isspace():
        nxt += 1
    return not (nxt < len(text) and text[nxt].islower())


def split_sentences(text: str) -> list[SentenceSpan]:
    """Cut ``text`` into sentences (see the module docstring for the rules). Never raises; whitespace-only
    pieces are dropped, a piece holding only brackets is kept so no citation is lost."""
    if not text:
        return []
    brackets = find_brackets(text)
    starts = {s: e for s, e in brackets}
    # Ends of sentences, as cut positions in the text.
    cuts: list[int] = []
    bracket_iter = iter(brackets)
    current = next(bracket_iter, None)
    n = len(text)
    for m in _TERMINATOR.finditer(text):
        # Skip terminators inside a bracket (brackets are sorted and disjoint).
        while current is not None and current[1] <= m.start():
            current = next(bracket_iter, None)
        if current is not None and current[0] <= m.start() < current[1]:
            continue
        if cuts and m.start() < cuts[-1]:
            continue  # already swallowed by brackets attached to the previous sentence
        if not _ends_sentence(text, m):
            continue
        cut = m.end()
        # Attach brackets (and a stray terminator right after them) that follow the sentence end.
        k = cut
        while True:
            j = k
            while j < n and text[j].isspace():
                j += 1
            if j in starts:
                k = cut = starts[j]
                while cut < n and text[cut] in ".!?":
                    cut += 1
                k = cut
                continue
            break
        cuts.append(cut)
    if not cuts or cuts[-1] < n:
        cuts.append(n)

    out: list[SentenceSpan] = []
    pos = 0
    b = 0
    for cut in cuts:
        start, end = pos, cut
        pos = cut
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start == end:
            continue
        inner: list[Span] = []
        while b < len(brackets) and brackets[b][0] < end:
            if brackets[b][0] >= start:
                inner.append(brackets[b])
            b += 1
        piece = text[start:end]
        out.append(SentenceSpan(start, end, piece, clean_text(piece, inner, start), tuple(inner)))
    return out
