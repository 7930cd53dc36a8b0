"""Judges measured against ALCE's human citation labels (``vericite judge-eval --task alce-human``).

ALCE's authors had people judge, for 800 answers (ASQA and ELI5, four systems each, 100 questions), whether each
sentence is supported by its citations and whether each citation supports its sentence, and kept their automatic
judge's verdicts (TRUE, T5-11B) beside them: ``human_eval/human_eval_citations_completed.json`` of ALCE's
repository. Its shape, which any file read here must have::

    {dataset: {system: {question id: answer, ..., "overall_results": {...}}}}
    answer = {"sentences": [{"text", "citations": [{"title", "text", "citation_precision_score"}],
                             "sentence_recall_score"}, ...],
              "automatic_recall_scores": [0|1 per sentence],
              "automatic_citation_precision_scores": [[0|1|2 per citation] per sentence], ...}

``overall_results`` (a run's summary, no sentences) is skipped. The automatic labels are optional: without them
(in any answer read) there is no reference row.

Two kinds of item are built from it, in the file's order:

* **recall**, one per sentence with at least one citation: premise = its cited passages formatted as ALCE does
  (``"Title: {title}\\n{text}"``, joined by a newline, in the order stored; ``attribution.alce.premise``),
  hypothesis = the sentence with its citation markers removed (``attribution.alce.hypothesis``); gold = the human
  ``sentence_recall_score`` (0/1); ALCE's = ``automatic_recall_scores``. A sentence without citations is left out
  and counted (``sentences_without_citations``).
* **precision**, one per citation: premise = that passage alone, the same hypothesis; gold = the human
  ``citation_precision_score`` (2 full support, 1 partial, 0 none); ALCE's = its automatic score on the same
  scale (2: the passage alone entails the sentence; 1: it does not but the sentence's other citations do not
  entail without it; 0: neither, or the sentence is not entailed at all).

The figures (``judges/meta_alce_figures.py``) compare a judge's verdicts on these pairs with the humans', and the
file's own automatic labels with the humans' (the reference row: ALCE's TRUE T5-11B).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..attribution.alce import hypothesis, premise
from ..errors import DataError
from ..types import JudgePair, Judgement

#: the keys of a run's entries that are not answers (the run's summary figures)
SUMMARY_KEYS = frozenset({"overall_results"})
#: where the shared file lives, below the shared data folder
SHARED_FILE = Path("alce") / "human_eval" / "human_eval_citations_completed.json"
#: what the reference row is
REFERENCE_JUDGE = "ALCE's TRUE T5-11B (the file's automatic labels)"


@dataclass(frozen=True)
class AlceItem:
    """One recall item (a sentence: ``citation`` None) or precision item (one citation of a sentence)."""

    kind: str  # "recall" | "precision"
    dataset: str
    system: str
    id: str  # the question id
    sentence: int  # 0-based, among all the answer's sentences
    citation: int | None  # 0-based, among the sentence's citations (precision items)
    premise: str
    hypothesis: str
    human: int  # recall: 0/1; precision: 0/1/2
    automatic: int | None  # the file's automatic label on the same scale, None when the file has none

    @property
    def pair(self) -> JudgePair:
        return JudgePair(self.premise, self.hypothesis)

    def where(self) -> dict[str, Any]:
        return {"kind": self.kind, "dataset": self.dataset, "system": self.system, "id": self.id, "sentence": self.sentence, "citation": self.citation}


@dataclass
class AlceHumanFile:
    """The items of a human-evaluation file and what was left out."""

    path: Path
    recall: list[AlceItem] = field(default_factory=list)
    precision: list[AlceItem] = field(default_factory=list)
    answers: int = 0
    sentences: int = 0
    sentences_without_citations: int = 0
    limit: int | None = None
    systems: dict[str, list[str]] = field(default_factory=dict)  # dataset -> its systems, in the file's order

    @property
    def has_automatic(self) -> bool:
        return all(i.automatic is not None for i in (*self.recall, *self.precision))

    def pairs(self) -> list[JudgePair]:
        """Every distinct pair, recall items' first, in the file's order."""
        return list(dict.fromkeys(i.pair for i in (*self.recall, *self.precision)))

    def counts(self) -> dict[str, Any]:
        return {
            "answers": self.answers, "sentences": self.sentences,
            "sentences_without_citations": self.sentences_without_citations,
            "recall_items": len(self.recall), "precision_items": len(self.precision), "distinct_pairs": len(self.pairs()),
        }  # fmt: skip


def true_table(f: AlceHumanFile) -> list[dict[str, Any]]:
    """The file's automatic (TRUE) labels as a ``table:`` judge's lines: a sentence's pair entailed iff its
    automatic recall is 1, a lone citation's pair iff its automatic precision is 2 (a sentence with one citation:
    the same pair as its sentence's, given once). Judged with it, ``judge-eval --task alce-human`` reproduces the
    reference row's recall and full-vs-rest precision figures exactly (any-vs-none cannot be: one binary verdict
    per pair has no "partial")."""
    lines: dict[JudgePair, bool] = {}
    for item in (*f.recall, *f.precision):
        if item.automatic is None:
            raise DataError(f"{f.path}: {item.dataset}/{item.system}/{item.id} has no automatic labels")
        lines.setdefault(item.pair, item.automatic == (1 if item.kind == "recall" else 2))
    return [{"premise": p.evidence, "hypothesis": p.claim, "entailed": v} for p, v in lines.items()]


def write_true_table(f: AlceHumanFile, path: str | Path) -> Path:
    """:func:`true_table` written as JSONL to ``path``."""
    out = Path(path)
    out.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in true_table(f)), encoding="utf-8")
    return out


def default_file() -> Path:
    """The shared copy: ``<shared data>/alce/human_eval/human_eval_citations_completed.json`` (its MANIFEST:
    ``<shared data>/alce/MANIFEST.json``)."""
    from ..paths import shared_data_dir

    return shared_data_dir() / SHARED_FILE  # type: ignore[operator]


def _score(value: Any, allowed: tuple[int, ...], where: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value not in allowed:
        raise DataError(f"{where}: {what} is {value!r}, want one of {', '.join(map(str, allowed))}")
    return int(value)


def _answers(data: Any, path: Path) -> Iterator[tuple[str, str, str, Mapping[str, Any]]]:
    if not isinstance(data, Mapping) or not data:
        raise DataError(f"{path}: want a JSON object {{dataset: {{system: {{question id: answer}}}}}} (ALCE's human_eval_citations_completed.json)")
    for dataset, systems in data.items():
        if not isinstance(systems, Mapping):
            raise DataError(f"{path}: {dataset!r} holds {type(systems).__name__}, want {{system: {{question id: answer}}}}")
        for system, answers in systems.items():
            if not isinstance(answers, Mapping):
                raise DataError(f"{path}: {dataset}/{system} holds {type(answers).__name__}, want {{question id: answer}}")
            for qid, answer in answers.items():
                if qid in SUMMARY_KEYS:
                    continue
                if not isinstance(answer, Mapping) or not isinstance(answer.get("sentences"), list):
                    raise DataError(f"{path}: {dataset}/{system}/{qid} is not an answer with a 'sentences' list")
                yield str(dataset), str(system), str(qid), answer


def _auto(answer: Mapping[str, Any], key: str, n: int, where: str) -> list[Any] | None:
    v = answer.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or len(v) != n:
        raise DataError(f"{where}: {key} should hold one entry per sentence ({n})")
    return v


def read_alce_human(path: str | Path, limit: int | None = None) -> AlceHumanFile:
    """The recall and precision items of ALCE's human-evaluation file (module docstring). ``limit``: only the first
    ``limit`` answers of each system's run (so a prefix covers both datasets and every system). A file that
    cannot be read or has another shape is one :class:`DataError` naming the place."""
    p = Path(path).expanduser()
    if p.is_dir():
        p = p / SHARED_FILE.name
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"ALCE human-evaluation file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{p}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"{p}: not JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    out = AlceHumanFile(p, limit=limit)
    taken: dict[tuple[str, str], int] = {}
    for dataset, system, qid, answer in _answers(data, p):
        if system not in out.systems.setdefault(dataset, []):
            out.systems[dataset].append(system)
        if limit is not None and taken.get((dataset, system), 0) >= limit:
            continue
        taken[(dataset, system)] = taken.get((dataset, system), 0) + 1
        out.answers += 1
        where = f"{p}: {dataset}/{system}/{qid}"
        sentences = answer["sentences"]
        auto_recall = _auto(answer, "automatic_recall_scores", len(sentences), where)
        auto_prec = _auto(answer, "automatic_citation_precision_scores", len(sentences), where)
        for k, s in enumerate(sentences):
            at = f"{where}, sentence {k + 1}"
            if not isinstance(s, Mapping) or not isinstance(s.get("text"), str) or not isinstance(s.get("citations"), list):
                raise DataError(f"{at}: want {{\"text\": str, \"citations\": [...], \"sentence_recall_score\": 0|1}}")
            out.sentences += 1
            cites = s["citations"]
            if not cites:
                out.sentences_without_citations += 1
                continue
            for c, cite in enumerate(cites):
                if not isinstance(cite, Mapping) or not isinstance(cite.get("text"), str) or not isinstance(cite.get("title"), str):
                    raise DataError(f"{at}, citation {c + 1}: want {{\"title\": str, \"text\": str, \"citation_precision_score\": 0|1|2}}")
            hyp = hypothesis(s["text"])
            ar = None if auto_recall is None else _score(auto_recall[k], (0, 1), at, "automatic_recall_scores")
            out.recall.append(
                AlceItem("recall", dataset, system, qid, k, None, premise(cites, range(len(cites))), hyp,
                         _score(s.get("sentence_recall_score"), (0, 1), at, "sentence_recall_score"), ar)
            )  # fmt: skip
            ap = None if auto_prec is None else auto_prec[k]
            if ap is not None and (not isinstance(ap, list) or len(ap) != len(cites)):
                raise DataError(f"{at}: automatic_citation_precision_scores should hold one score per citation ({len(cites)})")
            for c, cite in enumerate(cites):
                cat = f"{at}, citation {c + 1}"
                out.precision.append(
                    AlceItem("precision", dataset, system, qid, k, c, premise(cites, [c]), hyp,
                             _score(cite.get("citation_precision_score"), (0, 1, 2), cat, "citation_precision_score"),
                             None if ap is None else _score(ap[c], (0, 1, 2), cat, "automatic_citation_precision_scores"))
                )  # fmt: skip
    if not out.answers:
        raise DataError(f"{p}: holds no answer")
    if not out.recall:
        raise DataError(f"{p}: no sentence of the {out.answers} answers read has a citation")
    return out


# --------------------------------------------------------------------------- a whole evaluation run


def _resumed(path: Path, judge_id: str) -> dict[JudgePair, Judgement]:
    """The judgements of ``judge_id`` already in ``path`` (a judgements.jsonl of an earlier run), status ok only:
    an unparseable or failed pair is judged again."""
    from .. import jsonl

    done: dict[JudgePair, Judgement] = {}
    if not path.is_file():
        return done
    for _n, d in jsonl.read_numbered(path, policy="collect", torn="read", stats=jsonl.ReadStats()):
        try:
            j = Judgement.from_dict(d)
        except (KeyError, TypeError, ValueError):
            continue
        if j.judge == judge_id and j.status == "ok":
            done[JudgePair(j.evidence, j.claim)] = j
    return done


def run_alce_human_eval(
    judge: Any,
    f: AlceHumanFile,
    out_dir: str | Path,
    batch_size: int = 16,
    *,
    progress: Callable[[int], None] | None = None,
    resume: bool = False,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Judge every distinct pair of ``f`` once (in calls of about ``batch_size`` pairs, a sentence's pairs
    together), writing each judgement to ``out_dir/judgements.jsonl`` as it comes (``resume``: the judge's ok
    judgements already there are kept and not asked again); then ``items.jsonl`` (one line per recall and
    precision item: where it is, the human and automatic labels, the judge's probability and verdict) and
    ``results.json``: the judge's figures (``meta_alce_figures``) and the reference row's, what was measured, the
    counts. ``progress`` receives the number of pairs just judged (resumed ones at once)."""
    from .. import __version__
    from ..paths import file_sha256
    from ..stats import DEFAULT_LEVEL
    from .batches import judge_id, judgement_verdict, sentence_chunks
    from .meta import THRESHOLD, write_results
    from .meta_alce_figures import all_figures, judge_verdict, reference_verdict
    from .meta_figures import judge_identity

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    jid = judge_id(judge)
    jpath = out / "judgements.jsonl"
    judged = _resumed(jpath, jid) if resume else {}
    pairs = f.pairs()
    judged = {p: judged[p] for p in pairs if p in judged}
    resumed = len(judged)
    if progress is not None and resumed:
        progress(resumed)
    todo = [p for p in pairs if p not in judged]
    seconds = 0.0
    with jpath.open("w", encoding="utf-8") as jf:
        for j in judged.values():  # resumed judgements (read above) are written back first
            jf.write(json.dumps(j.to_dict(), ensure_ascii=False) + "\n")
        for part in sentence_chunks(todo, batch_size):
            t0 = time.perf_counter()
            got = judge.judge(part)
            seconds += time.perf_counter() - t0
            if len(got) != len(part):
                raise DataError(f"judge {jid} returned {len(got)} judgements for {len(part)} pairs")
            for p, j in zip(part, got):
                judged[p] = j
                jf.write(json.dumps(j.to_dict(), ensure_ascii=False) + "\n")
            jf.flush()
            if progress is not None:
                progress(len(part))
    with (out / "items.jsonl").open("w", encoding="utf-8") as itf:
        for item in (*f.recall, *f.precision):
            j = judged[item.pair]
            v = judgement_verdict(j)
            itf.write(json.dumps({**item.where(), "human": item.human, "automatic": item.automatic,
                                  "probability": j.probability, "verdict": v, "status": j.status}, ensure_ascii=False) + "\n")
    statuses = [judged[p].status for p in pairs]
    figures = all_figures(f, judge_verdict(judged), resamples=resamples, seed=seed)
    reference = all_figures(f, reference_verdict, resamples=resamples, seed=seed) if f.has_automatic else None
    results: dict[str, Any] = {
        "kind": "judge-eval",
        "task": "alce-human",
        "vericite_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "config": {"task": "alce-human", "judge": jid, "data": str(f.path), "limit": f.limit, "batch_size": batch_size,
                   "threshold": THRESHOLD, "resamples": resamples, "seed": seed, "resume": resume},
        "seed": seed,
        **judge_identity(judge),
        "threshold": THRESHOLD,
        **figures,
        "ci_level": DEFAULT_LEVEL,
        "resamples": resamples,
        "reference": {"judge": REFERENCE_JUDGE, **reference} if reference is not None else None,
        "reference_note": "" if reference is not None else "the file has no automatic labels (automatic_recall_scores, automatic_citation_precision_scores)",
        "counts": f.counts(),
        "unparseable": sum(1 for s in statuses if s == "unparseable") / len(statuses),
        "failed": sum(1 for s in statuses if s not in ("ok", "unparseable")) / len(statuses),
        "resumed_pairs": resumed,
        "seconds": round(seconds, 3),
        "pairs_per_second": (len(todo) / seconds) if seconds > 0 else None,
        "data": str(f.path),
        "data_sha256": file_sha256(f.path),  # the bytes judged, as --task pairs records them (compare_judges.same_data)
        "limit": f.limit,
    }
    write_results(out, results)
    return results


__all__ = ["AlceHumanFile", "AlceItem", "REFERENCE_JUDGE", "default_file", "read_alce_human", "run_alce_human_eval", "true_table", "write_true_table"]
