"""VTG's evolving memory (seed §2.2, Algorithm 1): the long-term memory ``D_L`` (the top-k documents for the
question, then every citation of a verified sentence) and the short-term memory ``D_S`` (empty at first, replaced
by the evidence finder's documents), over one catalogue of every document that entered either.

The prompts show the memory as ``D_L`` then ``D_S`` (without repeats), numbered from 1; a citation ``[n]`` of a
prompt is mapped back to the document's place in the catalogue, so the answer's ``[n]`` all refer to one final
document list (:meth:`Memory.catalogue`, 1-based), and the answer is an ALCE item.

The memory verifier needs the whole memory as one premise; the rule used (recorded as :data:`MEMORY_RULE`): the
documents are concatenated while the memory holds at most ``memory_words`` words (1,500 by default); above that,
each document is judged alone and the memory entails the sentence when any single document does.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

MEMORY_RULE = "concatenated while at most {words} words, else per document, any of them"


def doc_key(doc: Any) -> tuple[str, str]:
    """What makes two documents one: title and text (ALCE's files give documents without ids)."""
    return (str(getattr(doc, "title", "")), str(getattr(doc, "text", "")))


def doc_words(doc: Any) -> int:
    return len(f"{getattr(doc, 'title', '')} {getattr(doc, 'text', '')}".split())


class Memory:
    """``D_L`` and ``D_S`` as lists of catalogue positions (0-based)."""

    def __init__(self, long_term: Iterable[Any] = ()) -> None:
        self._docs: list[Any] = []
        self._at: dict[tuple[str, str], int] = {}
        self.long: list[int] = []
        self.short: list[int] = []
        for d in long_term:
            i = self.add(d)
            if i not in self.long:
                self.long.append(i)

    def add(self, doc: Any) -> int:
        """The catalogue position of ``doc``, added when new."""
        key = doc_key(doc)
        if key not in self._at:
            self._at[key] = len(self._docs)
            self._docs.append(doc)
        return self._at[key]

    def catalogue(self) -> list[Any]:
        """Every document that entered the memory, in the order it entered: the answer's citations' list."""
        return list(self._docs)

    def doc(self, i: int) -> Any:
        return self._docs[i]

    def view(self) -> list[int]:
        """``D_L ∪ D_S`` as the prompts number it: ``D_L``, then what of ``D_S`` is not in it."""
        return self.long + [i for i in self.short if i not in self.long]

    def view_docs(self) -> list[Any]:
        return [self._docs[i] for i in self.view()]

    def from_view(self, numbers: Sequence[int]) -> list[int]:
        """1-based prompt numbers -> catalogue positions (numbers out of range left out)."""
        v = self.view()
        return [v[n - 1] for n in numbers if 1 <= n <= len(v)]

    def replace_short(self, docs: Iterable[Any]) -> list[int]:
        """The evidence finder's documents become ``D_S`` (the old ``D_S`` is dropped); their positions."""
        self.short = []
        for d in docs:
            i = self.add(d)
            if i not in self.short:
                self.short.append(i)
        return list(self.short)

    def remember(self, positions: Iterable[int]) -> None:
        """A verified sentence's citations join ``D_L``."""
        for i in positions:
            if i not in self.long:
                self.long.append(i)

    def words(self, positions: Sequence[int] | None = None) -> int:
        return sum(doc_words(self._docs[i]) for i in (self.view() if positions is None else positions))

    def sizes(self) -> dict[str, int]:
        return {"long": len(self.long), "short": len(self.short), "view": len(self.view()), "words": self.words()}
