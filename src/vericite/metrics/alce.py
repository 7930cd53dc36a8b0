"""ALCE's metrics (metrics.md §2; ALCE's ``eval.py``, reproduced with its quirks): their declarations, the sub-tasks
they belong to, and the judge-free ones. The judged ones (citation recall and precision, ELI5's claims) are
``alce_citations.py``; ALCE's QA model is ``alce_qa.py``; the registered family that runs them all is
``alce_family.py``.

Every metric reads an output as ALCE does: stripped, cut at its first newline, ``<|im_end|>`` removed
(``attribution.alce.preprocess_output``, applied once); the judge-free ones then remove the citation markers
(``remove_citations``). Per answer:

* ``output_length``: words (``split()``) of the citation-free output; a plain mean.
* ``str_em`` (ASQA): the share of ``qa_pairs`` one of whose short answers, normalised (lower case, punctuation and
  articles removed, whitespace collapsed), is a substring of the normalised output; ``str_hit``: 1 iff all are.
* ``qampari_*``: predictions = the normalised comma items of the output (trailing ``.`` then ``,`` stripped; empty
  ones dropped); precision = predictions equal to any gold alias / predictions (0 when none); recall = answer
  clusters with an alias among the predictions / clusters; ``recall_top5`` = min(5, hits) / min(5, clusters);
  F1 of each pair per answer (0 when both are 0), then a mean over answers (ALCE averages per-answer F1).
* ``answer_em`` / ``answer_f1`` (short-answer sets: NQ, WebQuestions, 2WikiMultihopQA): SQuAD exact match and
  token F1 of the whole output against each gold alias of each answer, the best one. ``answer_hit`` (beyond
  ALCE, which has no short-answer sets): 1 iff a non-empty gold alias, normalised, is a substring of the
  normalised output, ALCE's STR-EM test for one answer. A model that answers in a sentence ("The capital is
  Paris [1].") never scores ``answer_em``; ``answer_hit`` says whether the answer is in it.
* ``rouge_lsum``: ROUGE-Lsum F (``rouge-score``, stemmed; every text lower-cased, one Punkt sentence a line) against
  each reference long answer (ASQA's two ``annotations``, ELI5's ``answer``), the better one. vericite reports the
  plain mean; ALCE prints rouge-score's bootstrap median, about 0.1 point away.

Corpus values are means over the answers that have what the metric needs (an answer without ``qa_pairs`` is left
out of ``str_em``, and counted), as fractions in [0, 1] (ALCE prints ×100), each with its n and a bootstrap CI.
"""

from __future__ import annotations

import collections
import functools
import re
import string
from typing import Any, Sequence

from .base import MetricSpec

VERSION = "alce@1"

CITATIONS = "Citations (ALCE)"
CORRECTNESS = "Correctness (ALCE)"
FLUENCY = "Length and fluency (ALCE)"
UNIT = (0.0, 1.0)


def _spec(name: str, inputs: tuple[str, ...], description: str, family: str = CORRECTNESS, short: str = "", rng: Any = UNIT) -> MetricSpec:
    return MetricSpec(name, ("answer", *inputs), True, VERSION, description, family, rng, short)


SPECS: dict[str, MetricSpec] = {
    s.name: s
    for s in [
        _spec("alce_citation_recall", ("passages", "judge"), "sentences whose citations together entail them (mean per answer)", CITATIONS, "recall"),
        _spec("alce_citation_precision", ("passages", "judge"), "citations needed by an entailed sentence (mean per answer)", CITATIONS, "precision"),
        _spec("alce_citation_f1", ("passages", "judge"), "harmonic mean of the corpus citation recall and precision", CITATIONS, "F1"),
        _spec("str_em", ("qa_pairs",), "ASQA: share of the sub-questions with a short answer in the output", short="STR-EM"),
        _spec("str_hit", ("qa_pairs",), "ASQA: answers with every sub-question's short answer in the output", short="STR-Hit"),
        _spec("rouge_lsum", ("meta",), "ROUGE-Lsum F against the better reference long answer", FLUENCY, "ROUGE-Lsum"),
        _spec("qa_em", ("qa_pairs",), "ASQA: ALCE's RoBERTa SQuAD model's answers from the output, exact match", short="QA-EM"),
        _spec("qa_f1", ("qa_pairs",), "ASQA: ALCE's RoBERTa SQuAD model's answers from the output, token F1", short="QA-F1"),
        _spec("qa_hit", ("qa_pairs",), "ASQA: answers whose every sub-question the QA model answers exactly", short="QA-Hit"),
        _spec("claims_nli", ("claims", "judge"), "ELI5: share of the gold claims the citation-free output entails", short="claims"),
        _spec("qampari_precision", ("answers",), "QAMPARI: listed items that are gold answers", short="precision"),
        _spec("qampari_recall", ("answers",), "QAMPARI: gold answers listed", short="recall"),
        _spec("qampari_recall_top5", ("answers",), "QAMPARI: gold answers listed, at most 5 needed", short="recall top-5"),
        _spec("qampari_f1", ("answers",), "QAMPARI: per-answer F1 of precision and recall, averaged", short="F1"),
        _spec("qampari_f1_top5", ("answers",), "QAMPARI: per-answer F1 of precision and top-5 recall, averaged", short="F1 top-5"),
        _spec("output_length", (), "words in the output, citations removed (a mean; not a fraction)", FLUENCY, "length", None),
        _spec("answer_em", ("answers",), "short answers: the output equals a gold alias (SQuAD normalisation)", short="EM"),
        _spec("answer_f1", ("answers",), "short answers: token F1 of the output and the best gold alias", short="F1"),
        _spec("answer_hit", ("answers",), "short answers: a gold alias is in the output (normalised substring, ALCE's STR-EM test)", short="Hit"),
    ]
}
METRIC_NAMES = tuple(SPECS)

CITATION_METRICS = ("alce_citation_recall", "alce_citation_precision", "alce_citation_f1")
QA_METRICS = ("qa_em", "qa_f1", "qa_hit")
QAMPARI_METRICS = ("qampari_precision", "qampari_recall", "qampari_recall_top5", "qampari_f1", "qampari_f1_top5")

#: ALCE's sub-tasks and the metrics ALCE reports for each
SUBTASKS: dict[str, tuple[str, ...]] = {
    "asqa": ("output_length", "str_em", "str_hit", "rouge_lsum", *QA_METRICS, *CITATION_METRICS),
    "qampari": ("output_length", *QAMPARI_METRICS, *CITATION_METRICS),
    "eli5": ("output_length", "rouge_lsum", "claims_nli", *CITATION_METRICS),
    "short": ("output_length", "answer_em", "answer_f1", "answer_hit", *CITATION_METRICS),
}
SUBTASK_TITLES = {"asqa": "ASQA", "qampari": "QAMPARI", "eli5": "ELI5", "short": "short-answer"}


def detect_subtask(samples: Sequence[Any]) -> str:
    """The sub-task of a corpus from its fields: ASQA's ``qa_pairs``, ELI5's ``claims``, QAMPARI's ``answers`` with
    several answers (clusters of aliases) per question, a short-answer set's with one; ASQA without any."""
    if any(s.qa_pairs is not None for s in samples):
        return "asqa"
    if any(s.claims is not None for s in samples):
        return "eli5"
    with_answers = [s for s in samples if s.answers is not None]
    if with_answers:
        return "qampari" if any(len(s.answers) > 1 for s in with_answers) else "short"
    return "asqa"


# --------------------------------------------------------------------------- normalisation (SQuAD's, as ALCE)

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)


@functools.lru_cache(maxsize=65536)
def normalize_answer(s: str) -> str:
    """SQuAD's normalisation (ALCE's ``normalize_answer``): lower case, punctuation removed, articles removed,
    whitespace collapsed."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", s).split())


def exact_presence(short_answers: Sequence[str], context: str) -> bool:
    """Whether a normalised short answer is a substring of the normalised context (an empty one always is)."""
    n_context = normalize_answer(context)
    return any(normalize_answer(a) in n_context for a in short_answers)


def compute_exact(gold: str, pred: str) -> int:
    return int(normalize_answer(gold) == normalize_answer(pred))


def compute_f1(gold: str, pred: str) -> float:
    """SQuAD's token F1 (1 when both are empty after normalisation, 0 when one is)."""
    gold_toks = normalize_answer(gold).split() if gold else []
    pred_toks = normalize_answer(pred).split() if pred else []
    if not gold_toks or not pred_toks:
        return float(gold_toks == pred_toks)
    same = sum((collections.Counter(gold_toks) & collections.Counter(pred_toks)).values())
    if same == 0:
        return 0.0
    p, r = same / len(pred_toks), same / len(gold_toks)
    return 2 * p * r / (p + r)


# --------------------------------------------------------------------------- per answer, judge-free


def output_length(output: str) -> int:
    return len(output.split())


def str_em(qa_pairs: Sequence[Any], output: str) -> tuple[float, float] | None:
    """(STR-EM, STR-Hit) of one answer; None without sub-questions (ALCE's mean of nothing)."""
    if not qa_pairs:
        return None
    found = [exact_presence(q.short_answers, output) for q in qa_pairs]
    em = sum(found) / len(found)
    return em, float(em == 1)


def qampari_scores(answers: Sequence[Sequence[str]], output: str) -> dict[str, float] | None:
    """QAMPARI's precision, recall, top-5 recall and their F1 for one answer; None without gold answers."""
    if not answers:
        return None
    preds = [p for p in (normalize_answer(x.strip()) for x in output.rstrip().rstrip(".").rstrip(",").split(",")) if p]
    gold = [[normalize_answer(x) for x in cluster] for cluster in answers]
    flat = {x for cluster in gold for x in cluster}
    pred_set = set(preds)
    hits = sum(any(x in pred_set for x in cluster) for cluster in gold)
    prec = sum(p in flat for p in preds) / len(preds) if preds else 0.0
    rec = hits / len(gold)
    rec5 = min(5, hits) / min(5, len(gold))

    def f1(a: float, b: float) -> float:
        return 0.0 if a + b == 0 else 2 * a * b / (a + b)

    return {
        "qampari_precision": prec, "qampari_recall": rec, "qampari_recall_top5": rec5,
        "qampari_f1": f1(prec, rec), "qampari_f1_top5": f1(prec, rec5),
    }  # fmt: skip


def answer_scores(answers: Sequence[Sequence[str]], output: str) -> tuple[float, float] | None:
    """(EM, F1) of the output against the best gold alias of any answer; None without gold answers."""
    aliases = [a for cluster in answers for a in cluster]
    if not aliases:
        return None
    return float(max(compute_exact(a, output) for a in aliases)), max(compute_f1(a, output) for a in aliases)


def answer_hit(answers: Sequence[Sequence[str]], output: str) -> float | None:
    """1.0 iff a non-empty gold alias, normalised, is a substring of the normalised output; None without gold
    answers (an alias that normalises to nothing would be in every output: it is left out)."""
    aliases = [a for cluster in answers for a in cluster if normalize_answer(a)]
    if not aliases:
        return None
    return float(exact_presence(aliases, output))


def reference_answers(fields: Any) -> list[str]:
    """The reference long answers among an ALCE item's fields (or its ``meta["alce"]``): ASQA's
    ``annotations[*].long_answer``, else ELI5's ``answer`` when it is a string."""
    if not isinstance(fields, dict):
        return []
    annotations = fields.get("annotations")
    refs = [a.get("long_answer") for a in annotations if isinstance(a, dict)] if isinstance(annotations, list) else []
    refs = [r for r in refs if isinstance(r, str) and r.strip()]  # an empty reference is none: ROUGE 0 against it is no score
    if not refs and isinstance(fields.get("answer"), str) and fields["answer"].strip():
        refs = [fields["answer"]]
    return refs


def long_answers(sample: Any) -> list[str]:
    """The reference long answers of a sample: ``meta.long_answers`` (as the ALCE task reads them), else those of
    the ALCE fields a dataset keeps in ``meta["alce"]`` (:func:`reference_answers`)."""
    meta = sample.meta or {}
    refs = meta.get("long_answers")
    if isinstance(refs, list):
        return [r for r in refs if isinstance(r, str) and r.strip()]
    return reference_answers(meta.get("alce"))


def lcs_table(ref: Sequence[str], can: Sequence[str]) -> list[list[int]]:
    """rouge-score's ``_lcs_table`` (the longest-common-subsequence table of two token lists), the same table,
    computed about twice as fast: one row at a time with local variables, and all zeros at once when the two share
    no token (tests/unit/metrics check it against rouge-score's on random lists)."""
    n = len(can)
    prev = [0] * (n + 1)
    if not set(ref).intersection(can):
        return [prev] + [[0] * (n + 1) for _ in ref]
    rows = [prev]
    for r in ref:
        cur = [0]
        left = 0
        for j, c in enumerate(can):
            if r == c:
                left = prev[j] + 1
            else:
                up = prev[j + 1]
                if up > left:
                    left = up
            cur.append(left)
        rows.append(cur)
        prev = cur
    return rows


class RougeLsum:
    """ALCE's ROUGE-Lsum: rouge-score's ``rougeLsum`` F, stemmed, each text lower-cased with one Punkt sentence a
    line, the best of the references. Stems and tokenisations are memoised (rouge-score's tokenizer itself, called
    through a cache: the same tokens), and rouge-score's summary-level LCS runs with :func:`lcs_table` in place of
    its own table (the same numbers), which together make a corpus several times faster."""

    def __init__(self) -> None:
        from rouge_score import rouge_scorer, tokenizers

        class _MemoStemmer:
            def __init__(self, stemmer: Any) -> None:
                self.stem = functools.lru_cache(maxsize=200_000)(stemmer.stem)

        class _MemoTokenizer(tokenizers.DefaultTokenizer):  # type: ignore[misc]
            def __init__(self) -> None:
                super().__init__(use_stemmer=True)
                self._stemmer = _MemoStemmer(self._stemmer)
                self.tokenize = functools.lru_cache(maxsize=20_000)(super().tokenize)  # type: ignore[method-assign]

        self.scorer = rouge_scorer.RougeScorer(["rougeLsum"], tokenizer=_MemoTokenizer())

    @staticmethod
    def lines(text: str) -> str:
        from ..attribution.alce import sent_tokenize

        return "\n".join(sent_tokenize(text.lower()))

    def score(self, output: str, references: Sequence[str]) -> float | None:
        if not references:
            return None
        from rouge_score import rouge_scorer

        hyp = self.lines(output)
        own = rouge_scorer._lcs_table
        rouge_scorer._lcs_table = lcs_table  # the same table, faster; put back at once
        try:
            return max(self.scorer.score(self.lines(r), hyp)["rougeLsum"].fmeasure for r in references)
        finally:
            rouge_scorer._lcs_table = own


def rouge_unavailable() -> str | None:
    """Why ROUGE-Lsum cannot be computed here (rouge-score not installed), or None."""
    try:
        import rouge_score  # noqa: F401
    except ImportError as e:
        return f"needs the rouge-score package ({e}): pip install 'vericite[alce]'"
    return None
