"""What CONNER's models were asked per item, asked once per evaluation: the validity reader's answers (or its
failures) and the evidence the retriever found for a sentence of the knowledge or for a reader's answer; a part of
:class:`vericite.metrics.conner.ConnerMetric` (its ``lm``, ``retriever``, ``evidence_k`` and ``reader_tokens``).

One memo, ``_asked``, keyed by (the model object, what was asked and how): ``("read", reader_tokens, prompt)`` or
``("retrieve", evidence_k, query)``. ``judging_part()``'s shallow copy shares it, so an item that evaluate scored
answer by answer into its checkpoint is neither read nor retrieved for again when the corpus is scored. Answers
scored before the corpus (read back on ``--resume``, or scored on ``--ray``'s actors) come in through
:meth:`AskedOnce.reuse_checkpointed`: their lines' ``conner.reader_answer`` and ``conner.retrieved`` (the judging
part records the latter in its scores; the whole family's scores, samples.jsonl, have none). Split out of conner.py,
which had grown past what a reader holds."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..types import GenParams
from .conner_specs import READER_PROMPT


class AskedOnce:
    lm: Any
    retriever: Any
    evidence_k: int
    reader_tokens: int
    _asked: dict[tuple[Any, ...], tuple[Any, Any]]

    def _evidence(self, sample: Any, sentence: str, kept: dict[str, Any] | None = None) -> list[str]:
        """The item's passages, all of them (issue 14: "the item's evidence or the top 10 passages retrieved"; they
        were cut to the first ``evidence_k``, which only bounds what is retrieved), else the ``evidence_k`` passages
        the retriever finds for ``sentence`` (a sentence of the knowledge, or the reader's answer): retrieved once per
        metric and its ``judging_part()`` (:meth:`_ask`), and by the part recorded in ``kept`` (the item's
        ``retrieved``, :meth:`reuse_checkpointed`'s)."""
        given = [p.text for p in (sample.passages or []) if getattr(p, "text", "").strip()]
        if given:
            return given
        if self.retriever is None:
            return []
        found = list(self._ask(self.retriever, ("retrieve", self.evidence_k, sentence), lambda: self._retrieve(sentence)))
        if kept is not None and getattr(self, "_keeps_retrieved", False):
            kept.setdefault("retrieved", {"index": self._retrieved_from(), "found": {}})["found"][sentence] = list(found)
        return found

    def _retrieved_from(self) -> dict[str, Any]:
        """What the evidence was retrieved from, as the checkpoint's ``conner.retrieved`` records it: the retriever,
        its ``evidence_k`` and its index's corpus (``corpus_identity()``: an index rebuilt in place between a cut
        and ``--resume`` is searched again, not taken from the lines)."""
        from ..knowledge.docs.retrievers import corpus_identity

        return {"retriever": str(getattr(self.retriever, "id", type(self.retriever).__name__)), "k": self.evidence_k, "corpus": corpus_identity(self.retriever)}

    def _retrieve(self, sentence: str) -> list[str]:
        search = getattr(self.retriever, "search", None)
        if callable(search):  # a document store or an index retriever: k passages for the sentence
            return [p.text for p, _ in search(sentence, self.evidence_k)]
        found = self.retriever.retrieve(sentence)
        return [getattr(p, "text", str(p)) for p in list(found.evidence)[: self.evidence_k]]

    def _ask(self, model: Any, question: tuple[Any, ...], call: Any) -> Any:
        """What ``model`` answered to ``question`` (a tuple: what was asked, and how), ``call()`` asked once per
        metric and its ``judging_part()`` (they share ``_asked``), or given by :meth:`reuse_checkpointed`."""
        if not hasattr(self, "_asked"):  # an object made before the memo (unpickled, or built without __init__)
            self._asked = {}
        held = self._asked.get((id(model), *question))
        if held is not None and held[0] is model:  # the same model object (an id is reused only after it is gone)
            return held[1]
        got = call()
        self._asked[(id(model), *question)] = (model, got)
        return got

    def _read(self, content: str) -> Any:
        """The reader's answer to ``content`` (the first line of its reply, stripped), or the ``BackendError`` its
        call raised: asked once per metric and its ``judging_part()`` (they share what was read), so an item the
        checkpointed evaluation scored alone is not read again when the corpus is scored."""
        from ..errors import BackendError

        def call() -> Any:
            try:
                c = self.lm.generate([[{"role": "user", "content": content}]], GenParams(max_tokens=self.reader_tokens, temperature=0.0))[0]
                return (c.text or "").strip().split("\n")[0].strip()
            except BackendError as e:
                return e

        return self._ask(self.lm, ("read", self.reader_tokens, content), call)

    def reuse_checkpointed(self, samples: Sequence[Any], answers: Sequence[Any], scores: Mapping[int, Mapping[str, Any]]) -> None:
        """What evaluate's checkpoint holds of answers scored before the corpus (read back on ``--resume``, or
        scored on ``--ray``'s actors): ``scores``, by answer index, each answer's scores as its line records them.
        Their readers' answers (``conner.reader_answer``) are taken as read, and the evidence retrieved for them
        (``conner.retrieved``, the judging part's: the passages' texts by query, and what they were retrieved from,
        which must be this metric's retriever, ``evidence_k`` and index) as retrieved, so the corpus's scoring
        asks neither the reader nor the retriever again: an item is read and retrieved for once, whichever way it
        was scored."""
        source = self._retrieved_from() if self.retriever is not None else None
        for i, sc in scores.items():
            got = (sc.get("conner") or {}) if isinstance(sc, Mapping) else {}
            if not isinstance(got, Mapping) or not 0 <= i < len(samples):
                continue
            said = got.get("reader_answer")
            if self.lm is not None and isinstance(said, str):
                text = str(getattr(answers[i], "raw", "") or "").strip()
                content = READER_PROMPT.format(knowledge=text, query=samples[i].question)
                self._ask(self.lm, ("read", self.reader_tokens, content), lambda: said)
            kept = got.get("retrieved")
            if source is None or not isinstance(kept, Mapping) or kept.get("index") != source:
                continue
            found = kept.get("found")
            if isinstance(found, Mapping):
                for query, texts in found.items():
                    if isinstance(query, str) and isinstance(texts, list) and all(isinstance(t, str) for t in texts):
                        self._ask(self.retriever, ("retrieve", self.evidence_k, query), lambda texts=texts: list(texts))
