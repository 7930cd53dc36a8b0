"""Agreement of vericite's CONNER measures with what others measured (issue 14, part 5):
``python -m vericite.bench.conner_agreement [--lm MODEL] [--limit N] [--alce-limit N] [--out FILE]``.

1. CONNER's own per-item figures for the NQ reference passages (``../shared/data/conner/nq/random_testset/``):
   ``nq_ref_rel`` (monoBERT relevance; 368 values for 500 passages, in an order the release does not say: they
   are paired with the first 368 passages of ``nq_ref`` by position, which is an assumption) and
   ``nq_ref_avg_sent_ppl`` (GPT-Neo mean sentence perplexity; 500 values, NaN kept out). vericite's relevance
   (the embedded ms-marco cross-encoder on (question, passage)) and, with ``--lm``, its mean sentence
   perplexity are compared by Spearman's rank correlation: the models differ, so ranking is what can agree.
2. ALCE's human utility ratings (``../shared/data/alce/human_eval/human_eval_utility_completed.json``, 1–5, the
   only human ratings offline): Somers' D of the rating given vericite's relevance of (question, output) and,
   with ``--lm``, its coherence_sentence and informativeness. These are ALCE answers rated for utility, not
   CONNER knowledge rated for its six perspectives: a proxy, said so in the output.

Prints one JSON object (and writes it to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np


def ranks(x: Sequence[float]) -> np.ndarray:
    """Average ranks (ties share their mean rank)."""
    a = np.asarray(x, dtype=float)
    order = np.argsort(a, kind="mergesort")
    r = np.empty(len(a))
    sa = a[order]
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and sa[j + 1] == sa[i]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return None
    return float(np.corrcoef(rx, ry)[0, 1])


def somers_d(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Somers' D of y given x: (concordant − discordant) / pairs not tied on x (as CONNER §6 reports it)."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    dx = np.sign(xa[:, None] - xa[None, :])
    dy = np.sign(ya[:, None] - ya[None, :])
    untied = int(np.count_nonzero(dx)) // 2
    if untied == 0:
        return None
    return float((dx * dy).sum() / 2 / untied)


def _floats(text: str) -> list[float]:
    """Numbers one a line, or a JSON list on the first line (NaN read as nan)."""
    text = text.strip()
    if text.startswith("["):
        return [float("nan") if v is None else float(v) for v in json.loads(text.splitlines()[0].replace("NaN", "null"))]
    return [float(v) for v in text.split()]


def conner_nq(scorer: Any, lm: Any, limit: int | None) -> dict[str, Any]:
    from ..models.lm_scoring import perplexity
    from ..paths import shared_data_dir
    from ..attribution.sentences import split_sentences
    from ..datasets.nq import load_nq
    from ..metrics.conner import sigmoid

    d = shared_data_dir() / "conner" / "nq" / "random_testset"  # type: ignore[operator]
    passages = (d / "nq_ref").read_text(encoding="utf-8").splitlines()
    questions = [s.question for s in load_nq()]
    rel_theirs = _floats((d / "nq_ref_rel").read_text())
    ppl_theirs = _floats((d / "nq_ref_avg_sent_ppl").read_text())
    n = min(len(passages), len(questions), limit or len(passages))
    out: dict[str, Any] = {"source": str(d)}
    m = min(n, len(rel_theirs))
    logits = scorer.score([(questions[i], passages[i]) for i in range(m)])
    ours = [sigmoid(float(v)) for v in logits]
    out["relevance"] = {
        "spearman": spearman(ours, rel_theirs[:m]), "n": m, "ours": f"sigmoid of {scorer.id} on (question, passage)",
        "theirs": "nq_ref_rel (monoBERT)", "alignment": f"their {len(rel_theirs)} values paired by position with the first {len(rel_theirs)} passages (the release does not say which passages they are)",
    }
    if lm is None:
        out["coherence_sentence"] = {"not_run": "needs --lm MODEL (under the model lock)"}
        return out
    from ..models.lm_scoring import sentence_logprobs

    texts, spans = [], []
    for i in range(min(n, len(ppl_theirs))):
        texts.append(passages[i])
        spans.append([(s.start, s.end) for s in split_sentences(passages[i]) if s.clean])
    rows = sentence_logprobs(lm, texts, spans, context="sentence")
    mine, theirs = [], []
    for i, sents in enumerate(rows):
        ppls = [p for p in (perplexity(lps) for lps in sents) if p is not None]
        if ppls and not math.isnan(ppl_theirs[i]):
            mine.append(sum(ppls) / len(ppls))
            theirs.append(ppl_theirs[i])
    out["sentence_perplexity"] = {"spearman": spearman(mine, theirs), "n": len(mine), "ours": f"mean sentence PPL (cap 200) of {lm.identity().name}, each sentence alone", "theirs": "nq_ref_avg_sent_ppl (GPT-Neo)"}
    return out


def alce_utility(scorer: Any, lm: Any, limit: int | None) -> dict[str, Any]:
    from ..attribution.sentences import split_sentences
    from ..metrics.conner import INFO_PREFIX, sigmoid
    from ..models.lm_scoring import continuation_logprobs, perplexity, sentence_logprobs
    from ..paths import shared_data_dir

    f = shared_data_dir() / "alce" / "human_eval" / "human_eval_utility_completed.json"  # type: ignore[operator]
    doc = json.loads(Path(f).read_text(encoding="utf-8"))
    items = [(it["question"], it["output"], float(it["utility_score"])) for sub in doc.values() for model in sub.values() for it in model.values()
             if isinstance(it, dict) and str(it.get("output", "")).strip() and it.get("utility_score") is not None]
    items = items[: limit or len(items)]
    out: dict[str, Any] = {"source": str(f), "comparable": "ALCE answers rated 1-5 for utility, not CONNER knowledge rated per perspective: a proxy"}
    rel = [sigmoid(float(v)) for v in scorer.score([(q, o) for q, o, _ in items])]
    out["relevance"] = {"somers_d": somers_d(rel, [u for *_, u in items]), "n": len(items)}
    if lm is None:
        out["coherence_sentence"] = out["informativeness"] = {"not_run": "needs --lm MODEL (under the model lock)"}
        return out
    spans = [[(s.start, s.end) for s in split_sentences(o) if s.clean] for _, o, _ in items]
    coh = []
    for sents in sentence_logprobs(lm, [o for _, o, _ in items], spans):
        inv = [1 / p for p in (perplexity(x) for x in sents) if p is not None]
        coh.append(sum(inv) / len(inv) if inv else float("nan"))
    info = []
    for lps in continuation_logprobs(lm, [(INFO_PREFIX.format(topic="", query=q), o) for q, o, _ in items]):
        info.append(1 - math.exp(sum(lps) / len(lps)) if lps else float("nan"))
    u = [x for *_, x in items]
    for name, vals in (("coherence_sentence", coh), ("informativeness", info)):
        keep = [i for i, v in enumerate(vals) if not math.isnan(v)]
        out[name] = {"somers_d": somers_d([vals[i] for i in keep], [u[i] for i in keep]), "n": len(keep), "lm": lm.identity().name}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vericite.bench.conner_agreement", description=__doc__.split("\n\n")[0])
    ap.add_argument("--lm", help="a causal LM for sentence perplexity, coherence and informativeness (load it under the model lock)")
    ap.add_argument("--limit", type=int, help="the first N NQ reference passages")
    ap.add_argument("--alce-limit", type=int, help="the first N ALCE rated answers")
    ap.add_argument("--relevance-model", default="ms-marco")
    ap.add_argument("--out", help="write the JSON here too")
    a = ap.parse_args(argv)
    from .. import registry
    from ..errors import VericiteError
    from ..paths import shared_data_dir

    try:
        if shared_data_dir(required=False) is None:
            raise VericiteError("../shared/data is not beside this checkout (set VERICITE_DATA)")
        scorer = registry.create("scorers", a.relevance_model)
        lm = None
        if a.lm:
            from ..models import load_model

            lm = load_model(a.lm)
        result = {"conner_nq_reference": conner_nq(scorer, lm, a.limit), "alce_human_utility": alce_utility(scorer, lm, a.alce_limit)}
    except VericiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    text = json.dumps(result, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
