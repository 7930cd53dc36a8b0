"""ALCE's QA-based accuracy (``compute_qa``: QA-EM, QA-F1, QA-Hit on ASQA): ALCE's RoBERTa-large SQuAD model
(``gaotianyu1350/roberta-large-squad``) answers each sub-question from the citation-free output; the answers are
scored against the sub-question's short answers (SQuAD exact match and token F1, the best short answer).

ALCE ran transformers' ``question-answering`` pipeline with ``handle_impossible_answer=True``; transformers 5 no
longer has that pipeline, so :func:`extract_answer` decodes the model's start/end logits the way it did: the
context in windows of at most 384 tokens with a stride of 128, question and special tokens masked, softmax over
each window, the best span of at most 15 tokens by P(start)·P(end), and the empty answer when the [CLS] score is
higher. The model loads from a local folder, or from the Hugging Face cache; nothing is downloaded here (offline,
the metrics are reported as not computed, with the reason).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..stats import softmax
from .alce import compute_exact, compute_f1

QA_MODEL = "gaotianyu1350/roberta-large-squad"
MAX_SEQ_LEN = 384
DOC_STRIDE = 128
MAX_ANSWER_LEN = 15


def qa_unavailable(model: str = QA_MODEL) -> str | None:
    """Why ALCE's QA model cannot be loaded here (transformers missing, the model neither a folder nor in the
    Hugging Face cache), or None."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        return f"ALCE's QA model needs transformers and torch ({e}): pip install 'vericite[nli]'"
    if Path(model).is_dir():
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model, "config.json")
    except Exception as e:  # noqa: BLE001 - an unreadable cache is a reason, not a crash
        return f"ALCE's QA model {model} could not be looked up in the Hugging Face cache ({type(e).__name__}: {e})"
    if not isinstance(cached, str):
        return f"ALCE's QA model {model} is not in the Hugging Face cache and is not downloaded here (give a local folder: alce:qa_model=<dir>)"
    return None


class QAModel:
    """An extractive QA model (ALCE's by default) and its tokenizer, loaded with transformers."""

    def __init__(self, model: str = QA_MODEL, *, device: str | None = None) -> None:
        import torch
        from transformers import AutoModelForQuestionAnswering, AutoTokenizer

        local = not Path(model).is_dir()
        self.tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local)
        self.model = AutoModelForQuestionAnswering.from_pretrained(model, local_files_only=local)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device).eval()
        self.id = model

    def answer(self, question: str, context: str) -> str:
        import torch

        enc = self.tokenizer(
            question, context, truncation="only_second", max_length=MAX_SEQ_LEN, stride=DOC_STRIDE,
            return_overflowing_tokens=True, return_offsets_mapping=True, padding=True, return_tensors="pt",
        )  # fmt: skip
        offsets = enc.pop("offset_mapping").tolist()
        enc.pop("overflow_to_sample_mapping", None)
        windows = [[sid == 1 for sid in enc.sequence_ids(w)] for w in range(len(offsets))]
        with torch.inference_mode():
            out = self.model(**{k: v.to(self.device) for k, v in enc.items()})
        starts, ends = out.start_logits.float().cpu().tolist(), out.end_logits.float().cpu().tolist()
        return extract_answer(context, starts, ends, windows, offsets)


def extract_answer(
    context: str,
    start_logits: Sequence[Sequence[float]],
    end_logits: Sequence[Sequence[float]],
    in_context: Sequence[Sequence[bool]],
    offsets: Sequence[Sequence[Sequence[int]]],
    *,
    max_answer_len: int = MAX_ANSWER_LEN,
) -> str:
    """The answer of the question-answering pipeline with ``handle_impossible_answer=True``: per window, tokens
    outside the context masked (the first token, [CLS], kept), softmax of start and end logits, the best span
    (start <= end < start + max_answer_len) by P(start)·P(end); the best over windows, or "" when the [CLS] score
    P(start=0)·P(end=0) of some window is higher."""
    best_score, best = -1.0, ""
    null_score = None
    for starts, ends, mask, offs in zip(start_logits, end_logits, in_context, offsets):
        keep = [m or i == 0 for i, m in enumerate(mask)]
        ps = softmax([x if k else -10000.0 for x, k in zip(starts, keep)])
        pe = softmax([x if k else -10000.0 for x, k in zip(ends, keep)])
        null = ps[0] * pe[0]
        null_score = null if null_score is None else min(null_score, null)
        for s in range(len(ps)):
            if not mask[s]:
                continue
            for e in range(s, min(len(pe), s + max_answer_len)):
                if mask[e] and ps[s] * pe[e] > best_score:
                    best_score, best = ps[s] * pe[e], context[offs[s][0] : offs[e][1]]
    if null_score is not None and null_score > best_score:
        return ""
    return best


def qa_scores(model: Any, qa_pairs: Sequence[Any], output: str) -> tuple[float, float, float] | None:
    """(QA-EM, QA-F1, QA-Hit) of one answer: ``model.answer`` on each sub-question with the citation-free output
    as context (" " when empty, as ALCE), scored against its short answers; None without sub-questions."""
    if not qa_pairs:
        return None
    context = output if len(output) > 0 else " "
    em = f1 = 0.0
    for q in qa_pairs:
        pred = model.answer(q.question, context)
        em += max((compute_exact(a, pred) for a in q.short_answers), default=0)
        f1 += max((compute_f1(a, pred) for a in q.short_answers), default=0.0)
    n = len(qa_pairs)
    return em / n, f1 / n, float(em == n)
