"""The four-class judge that ``vericite train caqa`` makes (CAQA's fine-tuning setting, §5.2): a small
cross-encoder (all-MiniLM-L6-v2 with a four-way head) exported to ONNX, run here with onnxruntime and tokenizers
(no torch). Registered as ``caqa:<model folder>``.

The folder holds ``model.onnx``, ``tokenizer.json`` and ``caqa_judge.json`` (labels in the head's order, the
longest input, the base model, how it was trained, and the sha256 of the two model files, checked on load).
The input is the pair (question + " " + answer statement, citation), or (answer statement, citation) where the
card's ``recipe.first`` says ``answer``, as in training; the scores are the softmax of
the four logits; the label the most probable class.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..errors import ModelUnavailableError, VericiteError, checked_batch_size
from ..paths import file_sha256
from ..types import JudgePair, Judgement

CARD = "caqa_judge.json"
FILES = ("model.onnx", "tokenizer.json")


#: what the first text of the classifier's input is (the card's ``recipe.first``; folders without it: the first)
FIRSTS = ("question+answer", "answer")


def pair_text(question: str | None, answer: str, first: str = "question+answer") -> str:
    """The first text of the classifier's input: the question, then the answer statement (``question+answer``), or
    the answer statement alone (``answer``)."""
    if first == "answer":
        return answer
    return f"{question} {answer}".strip() if question else answer


class TrainedCaqaJudge:
    """``caqa:<folder>``: the ONNX four-class classifier of a ``vericite train caqa`` folder."""

    def __init__(self, folder: str | Path, *, batch_size: int = 16, threads: int | None = None) -> None:
        self.folder = Path(folder)
        card_path = self.folder / CARD
        if not card_path.is_file():
            raise ModelUnavailableError(f"{self.folder} is not a trained CAQA judge (no {CARD}): make one with `vericite train caqa --out {self.folder}`")
        try:
            self.card = json.loads(card_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise VericiteError(f"{card_path} is unreadable: {e}") from None
        for name in FILES:
            p = self.folder / name
            if not p.is_file():
                raise ModelUnavailableError(f"{p} is missing: rebuild with `vericite train caqa --out {self.folder}`")
            want = (self.card.get("sha256") or {}).get(name)
            if want and file_sha256(p) != want:
                raise VericiteError(f"{p} is not the file {CARD} names (sha256 differs): rebuild it")
        self.labels = tuple(self.card["labels"])
        self.first = (self.card.get("recipe") or {}).get("first", "question+answer")
        if self.first not in FIRSTS:
            raise VericiteError(f"{card_path} names an input this vericite does not know ({self.first!r}): update vericite")
        self.max_length = int(self.card.get("max_length", 256))
        self.batch_size = checked_batch_size(batch_size)
        self.id = f"caqa:{self.card.get('name', self.folder.name)}@{self.card.get('version', 1)}"
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as e:
            raise VericiteError(f"the trained CAQA judge needs onnxruntime and tokenizers ({e.name} is missing): pip install 'vericite[onnx]'") from None
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads or 2
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tok.enable_truncation(self.max_length, strategy="longest_first")
        tok.no_padding()
        self.tokenizer = tok

    def options(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "sha256": self.card.get("sha256"), "max_length": self.max_length, "first": self.first}

    def identity(self) -> dict[str, Any]:
        return {"name": self.card.get("name"), "backend": "onnxruntime", "sha256": (self.card.get("sha256") or {}).get("model.onnx")}

    def _logits(self, pairs: Sequence[JudgePair]) -> Any:
        import numpy as np

        enc = self.tokenizer.encode_batch([(pair_text(p.question, p.claim, self.first), p.evidence) for p in pairs])
        width = max(len(e.ids) for e in enc)
        ids = np.zeros((len(enc), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for i, e in enumerate(enc):
            n = len(e.ids)
            ids[i, :n], mask[i, :n], types[i, :n] = e.ids, e.attention_mask, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        return self.session.run(["logits"], {k: v for k, v in feed.items() if k in self.inputs})[0]

    def judge(self, pairs: Sequence[JudgePair]) -> list[Judgement]:
        import numpy as np

        out: list[Judgement] = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = list(pairs[start : start + self.batch_size])
            logits = self._logits(chunk)
            z = logits - logits.max(axis=1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
            for p, row in zip(chunk, probs):
                scores = {c: round(float(v), 6) for c, v in zip(self.labels, row)}
                label = max(self.labels, key=lambda c: scores[c])
                out.append(Judgement(self.id, p.claim, p.evidence, scores.get("supportive"), label, json.dumps({"scores": scores}), "ok", scores))
        return out


def from_spec(arg: str, *, ctx: Any, **options: Any) -> TrainedCaqaJudge:
    """Registry factory: ``caqa:<folder made by vericite train caqa>``."""
    if not arg:
        raise VericiteError("caqa: give the trained model's folder: caqa:<folder> (see `vericite train caqa`)")
    return TrainedCaqaJudge(arg, threads=ctx.threads, **options)
