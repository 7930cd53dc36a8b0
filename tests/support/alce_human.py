"""A hand-written file shaped as ALCE's human_eval_citations_completed.json (two datasets, three answers, a sentence
without citations, a run's ``overall_results``, scores written as floats too), the figures worked out by hand for
it, and a table judge's verdicts built from any such file's automatic (TRUE) labels."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

D = {k: {"title": f"T{k}", "text": f"text of document {k}"} for k in range(1, 5)}


def _cite(k: int, score: Any) -> dict[str, Any]:
    return {**D[k], "citation_precision_score": score}


MINI: dict[str, Any] = {
    "asqa": {
        "sysA.json": {
            "q1": {
                "id": "q1", "question": "Capital of France?", "output": "Paris is the capital of France [1][2]. It is large.",
                "sentences": [
                    {"text": "Paris is the capital of France [1][2].", "citations": [_cite(1, 2), _cite(2, 0.0)], "sentence_recall_score": 1, "sentence_precision_score": 1},
                    {"text": "It is large.", "citations": [], "sentence_recall_score": 0, "sentence_precision_score": 0},
                ],
                "automatic_recall_scores": [1, 0], "automatic_citation_precision_scores": [[2, 0], []], "automatic_precision_scores": [1, 0],
            },
            "q2": {
                "id": "q2", "question": "Where is Berlin?", "output": "Berlin is in Germany [1].",
                "sentences": [{"text": "Berlin is in Germany [1].", "citations": [_cite(3, 1.0)], "sentence_recall_score": 0, "sentence_precision_score": 0}],
                "automatic_recall_scores": [1], "automatic_citation_precision_scores": [[2]], "automatic_precision_scores": [1],
            },
            "overall_results": {"citation_rec": 50.0},
        }
    },
    "eli5": {
        "sysB.json": {
            "e1": {
                "id": "e1", "question": "Why does water boil?", "output": "Water boils at 100 C [1].",
                "sentences": [{"text": "Water boils at 100 C [1].", "citations": [_cite(4, 2)], "sentence_recall_score": 1, "sentence_precision_score": 1}],
                "automatic_recall_scores": [0], "automatic_citation_precision_scores": [[0]], "automatic_precision_scores": [0],
            },
            "overall_results": {"citation_rec": 0.0},
        }
    },
}  # fmt: skip

#: worked out by hand for MINI's automatic labels against its human ones (the reference row)
#: recall: gold [1, 0, 1], TRUE [1, 1, 0]; precision full: gold [T, F, F, T], TRUE [T, F, T, F];
#: precision any: gold [T, F, T, T], TRUE [T, F, T, F]
MINI_REFERENCE = {
    "recall_n": 3, "recall_cohen_kappa": -0.5, "recall_balanced_accuracy": 0.25,
    "precision_n": 4, "precision_cohen_kappa": 0.0, "precision_balanced_accuracy": 0.5,
    "precision_any_n": 4, "precision_any_cohen_kappa": 0.5, "precision_any_balanced_accuracy": 5 / 6,
}  # fmt: skip


def write_mini(folder: Path, data: Mapping[str, Any] = MINI) -> Path:
    p = Path(folder) / "human_eval_citations_completed.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def _hypothesis(sentence: str) -> str:
    """ALCE's remove_citations, stripped (written out again here, not imported from the code under test)."""
    return re.sub(r"\[\d+", "", re.sub(r" \[\d+", "", sentence)).replace(" |", "").replace("]", "").strip()


def _premise(citations: list[Mapping[str, Any]]) -> str:
    return "\n".join(f"Title: {c['title']}\n{c['text']}" for c in citations)


def true_table(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A table judge's lines that give the file's automatic labels: a sentence's pair entailed iff its automatic
    recall is 1, a citation's (of a sentence with several) iff its automatic precision is 2. A single citation's
    pair is its sentence's."""
    lines: dict[tuple[str, str], bool] = {}
    for systems in data.values():
        for answers in systems.values():
            for qid, a in answers.items():
                if qid == "overall_results":
                    continue
                for k, s in enumerate(a["sentences"]):
                    if not s["citations"]:
                        continue
                    hyp = _hypothesis(s["text"])
                    lines[(_premise(s["citations"]), hyp)] = a["automatic_recall_scores"][k] == 1
                    if len(s["citations"]) > 1:
                        for c, cite in enumerate(s["citations"]):
                            lines[(_premise([cite]), hyp)] = a["automatic_citation_precision_scores"][k][c] == 2
    return [{"premise": p, "hypothesis": h, "entailed": v} for (p, h), v in lines.items()]


def write_table(path: Path, data: Mapping[str, Any]) -> Path:
    Path(path).write_text("".join(json.dumps(x) + "\n" for x in true_table(data)), encoding="utf-8")
    return Path(path)
