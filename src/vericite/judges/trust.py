"""How far a judge can be trusted: its accuracy as vericite's judge meta-evaluation measured it
(``vericite judge-eval``), shipped in ``judges/measured.json`` and written beside every result a judge produced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

#: the measurement of a judge on KaLMA's (sentence, cited triple) pairs: a task key of judges/measured.json
ALIGNMENT_TASK = "kalma-alignment"
#: the measurement of a judge against ALCE's human citation labels (``judge-eval --task alce-human``): its
#: ``balanced_accuracy``, ``cohen_kappa``, ``roc_auc`` and ``n`` are sentence recall's, with ``precision_*``
#: beside them and ``reference``: ALCE's own judge (TRUE T5-11B) on the same sentences
ALCE_HUMAN_TASK = "alce-human"


def num(x: Any) -> str:
    """A figure to three decimals, else "n/a"."""
    return f"{x:.3f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "n/a"


def trust_words(meas: dict[str, Any] | None) -> str:
    """A measurement in one line: balanced accuracy, ROC AUC (a three-way judge's three-way balanced accuracy beside
    them: :func:`three_way_words`) and what it was measured on; for ALCE's human labels, Cohen's kappa beside ALCE's
    own judge's ("recall κ 0.320 (ALCE's TRUE T5-11B: κ 0.578)")."""
    if is_four_class(meas):
        return four_class_words(meas)  # type: ignore[arg-type]
    if not meas or meas.get("balanced_accuracy") is None:
        return (meas or {}).get("note", "accuracy not measured")
    if meas.get("task") == ALCE_HUMAN_TASK:
        ref = meas.get("reference") or {}
        text = (
            f"measured on {meas.get('data', 'ALCE human citation labels')}: recall κ {num(meas.get('cohen_kappa'))}, "
            f"balanced accuracy {num(meas['balanced_accuracy'])}, ROC AUC {num(meas.get('roc_auc'))}"
        )
        if ref:
            text += f" (ALCE's {ref.get('judge', 'TRUE T5-11B')} on the same sentences: κ {num(ref.get('cohen_kappa'))}, balanced accuracy {num(ref.get('balanced_accuracy'))})"
        return text
    three = three_way_words(meas)
    three = f"; {three}" if three else ""
    return f"measured balanced accuracy {num(meas['balanced_accuracy'])}, ROC AUC {num(meas.get('roc_auc'))}{three} on {meas.get('data', 'labelled pairs')}"


def three_way_words(meas: Any) -> str | None:
    """A three-way judge's figures on three-way gold labels (a measurement's ``three_way``, as ``vericite
    judge-eval`` writes them): "three-way balanced accuracy 0.480 [0.437, 0.521]", the interval only when
    measured (``three_way.ci.balanced_accuracy``); None without them."""
    three = meas.get("three_way") if isinstance(meas, Mapping) else None
    if not isinstance(three, Mapping) or three.get("balanced_accuracy") is None:
        return None
    ci = (three.get("ci") or {}).get("balanced_accuracy") if isinstance(three.get("ci"), Mapping) else None
    ci_words = f" [{num(ci[0])}, {num(ci[1])}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 else ""
    return f"three-way balanced accuracy {num(three['balanced_accuracy'])}{ci_words}"


def is_four_class(meas: Any) -> bool:
    """Whether a measurement is a four-class judge's (CAQA: ``micro_f1``, no balanced accuracy or ROC AUC)."""
    return isinstance(meas, Mapping) and meas.get("balanced_accuracy") is None and meas.get("micro_f1") is not None


def four_class_words(meas: dict[str, Any]) -> str:
    """A four-class judge's measurement on CAQA items (``micro_f1``: accuracy over the four classes) in one line:
    "measured four-class accuracy 0.366 [0.307, 0.418], macro F1 0.242 on <data> (n 287)"."""
    ci = meas.get("micro_f1_ci")
    ci_words = f" [{num(ci[0])}, {num(ci[1])}]" if isinstance(ci, (list, tuple)) and len(ci) == 2 else ""
    n = f" (n {meas['n']})" if meas.get("n") is not None else ""
    return (f"measured four-class accuracy {num(meas['micro_f1'])}{ci_words}, macro F1 {num(meas.get('macro_f1'))} "
            f"on {meas.get('data', 'CAQA items')}{n}")


def measured_trust(judge_id: str | None, task: str | None = None, *, fit_sha256: str | None = None) -> dict[str, Any] | None:
    """The judge's measured accuracy from vericite's judge meta-evaluation (judges/measured.json), if any: the
    measurement on ``task`` when there is one (e.g. ``"kalma-alignment"``), else the judge's primary one.

    A fitted judge (``llm3f:<fit file>``) is measured per fit: its id carries the first 12 hex of the fit file's
    sha256, and its entry records the whole sha256 (``fit_sha256``). That entry is returned only when the caller
    gives the judge's own ``fit_sha256`` (its ``calibration()["fit_sha256"]``) and the two are equal, so a
    measurement is never attached to another fit, nor to a judge whose fit is not known; a fitted judge gets no
    entry that does not record its fit."""
    if not judge_id:
        return None
    path = Path(__file__).resolve().parent / "measured.json"
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    entry = table.get(judge_id) or table.get(judge_id.split("@")[0])
    if not isinstance(entry, dict):
        return None
    if (entry.get("fit_sha256") or fit_sha256) and entry.get("fit_sha256") != fit_sha256:
        return None  # another fit's measurement, a fit not known here, or an entry not registered by its fit
    primary = {k: v for k, v in entry.items() if k != "also"}
    also = [m for m in entry.get("also") or [] if isinstance(m, dict)]
    if task is not None:
        for m in [primary, *also]:
            if m.get("task") == task:
                return m
    return primary
