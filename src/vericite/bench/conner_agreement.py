"""Agreement of vericite's CONNER measures with what others measured (issue 14, part 5):
``python -m vericite.bench.conner_agreement [--lm MODEL] [--data-path DIR] [--limit N] [--max-words W] [--alce-limit N]
[--skip-nq | --skip-alce] [--resamples N] [--seed S] [--out FILE]``.

1. CONNER's own per-item figures for the NQ reference passages (``../shared/data/conner/nq/random_testset/``, or the
   folder ``--data-path`` names, or the folder of the NQ file it names: its questions, ``nq_ref`` and the figures):
   ``nq_ref_rel`` (monoBERT relevance; 368 values for 500 passages, in an order the release does not say: they
   are paired with the first 368 passages of ``nq_ref`` by position, which is an assumption) and
   ``nq_ref_avg_sent_ppl`` (GPT-Neo: per passage the mean over its sentences of min(PPL, 200); 500 values that
   CONNER's ppl.py wrote in ``nq_ref``'s line order, so the pairing by position is how the file was made; NaN
   left out). vericite's relevance (the embedded ms-marco cross-encoder on (question, passage)) and, with
   ``--lm``, each sentence's perplexity (each sentence alone, as ppl.py) are compared by Spearman's rank
   correlation: the models differ, so ranking is what can agree. Two rows for the LM: the mean sentence PPL
   against theirs (like for like), and ``coherence_sentence`` (Eq. 3, the mean of 1/PPL) against 1/theirs (a
   reciprocal keeps the ranking reversed, so a positive rho is agreement on both rows). ``--max-words`` leaves
   out passages longer than W words (some are whole articles), counted in the output. The files are read by
   ``bench/conner_reference.py``: their summary lines are never values, their NaN are left out of each
   correlation and counted (``their_nan_left_out``), and ``reference_files`` says what each of the four files
   holds (``nq_ref_avg_lm_entropy`` is all NaN in the release: it is reported so, and compared with nothing).
2. ALCE's human utility ratings (``../shared/data/alce/human_eval/human_eval_utility_completed.json``, 1–5, the
   only human ratings offline): Somers' D of the rating given vericite's relevance of (question, output) and,
   with ``--lm``, its coherence_sentence and informativeness. These are ALCE answers rated for utility, not
   CONNER knowledge rated for its six perspectives: a proxy, said so in the output. The answers are taken in the
   file's order (dataset, then system, then question), so ``--alce-limit`` takes the first system's answers; with
   ``--alce-interleave`` one answer of each of the eight (dataset, system) in turn, so a prefix covers them all.

The LM's texts are scored a few at a time (progress on stderr), each chunk reaching the call cache when it is
done: a run cut off is continued by the same command. Ctrl-C stops it within a moment, even inside a llama.cpp
decode (``models/llamacpp_interrupt.py``): one line on stderr, exit code 130, no JSON.

Every statistic comes with ``n`` and ``ci95``, its 95% percentile bootstrap interval: ``--resamples`` samples (default
1000) of the items, each drawn with both of its values (paired), seeded by ``--seed`` (default 0); each records
them under ``bootstrap``. Samples where the statistic is undefined (a side constant) are left out of its interval.

Prints one JSON object (and writes it to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Sequence


from ..errors import VericiteError
from ..jsonl import text_lines
from ..stats import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_cis, point, somers_d_of, spearman_of
from .conner_reference import REFERENCE_FILES, finite_pairs, read_reference_values

#: texts scored per model call (each chunk reaches the call cache when done: a cut-off run resumes)
CHUNK = 4

#: what Ctrl-C prints (exit 130, no JSON: the figures need every text scored)
INTERRUPTED = "interrupted: the chunks scored so far are in the call cache; run the same command again to continue"


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (ties share their mean rank): ``stats.spearman_of`` on the items themselves, so
    the point and its bootstrap are one computation. None under 3 pairs or with a constant side. NaN is refused (a
    ValueError): leave such pairs out first, and count them (``conner_reference.finite_pairs``)."""
    if not all(math.isfinite(v) for v in (*x, *y)):
        raise ValueError("spearman of values that are not all finite: leave the NaN out first (finite_pairs)")
    return point(spearman_of(x, y), len(x))


def somers_d(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Somers' D of y given x: (concordant − discordant) / pairs not tied on x (as CONNER §6 reports it), as
    ``stats.somers_d_of`` on the items themselves; None where no pair is untied on x."""
    return point(somers_d_of(x, y), len(x))


def agreement(statistic: str, x: Sequence[float], y: Sequence[float], *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """``statistic`` (``spearman``, or ``somers_d`` of y given x) of the paired values, with ``n`` and ``ci95``: the
    percentile bootstrap interval (``stats.bootstrap_cis``) over ``resamples`` samples of the items, each item
    drawn with both its values (paired), seeded; samples where the statistic is undefined are left out of it.
    [None, None] where the statistic itself is undefined. ``bootstrap`` records how it was drawn."""
    value = {"spearman": spearman, "somers_d": somers_d}[statistic](x, y)
    statistic_of = {"spearman": spearman_of, "somers_d": somers_d_of}[statistic]
    lo, hi = bootstrap_cis({statistic: statistic_of(x, y)}, len(x), resamples=resamples, seed=seed)[statistic] if value is not None else (None, None)
    return {
        statistic: value, "n": len(x), "ci95": [lo, hi],
        "bootstrap": {"resamples": resamples, "seed": seed, "level": DEFAULT_LEVEL, "resampled": "items, each with its pair of values (percentile)"},
    }


def reference_files(d: Path) -> dict[str, Any]:
    """What each of CONNER's per-passage files in ``d`` holds (values, NaN, summary lines), by vericite's name."""
    out: dict[str, Any] = {}
    for what, fname in REFERENCE_FILES.items():
        f = d / fname
        out[what] = {"file": fname, **read_reference_values(f).describe()} if f.is_file() else {"file": fname, "missing": True}
    return out


def nq_folder(data_path: str | Path | None = None) -> tuple[Path, Path]:
    """CONNER's NQ folder and its questions file: ``data_path`` a folder (its ``nq_test_random_testset.txt``) or that
    file (its folder); None: the shared data's (``datasets.nq.default_file``). A folder without ``nq_ref`` is one line."""
    from ..datasets.nq import RELATIVE, default_file

    p = Path(data_path) if data_path else default_file().parent
    questions = p if p.is_file() else p / RELATIVE.name
    if not (questions.parent / "nq_ref").is_file():
        raise VericiteError(f"CONNER's NQ reference passages (nq_ref) not found in {questions.parent}")
    return questions.parent, questions


def conner_nq(
    scorer: Any, lm: Any, limit: int | None, max_words: int | None = None, data_path: str | Path | None = None, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """The NQ part (module docstring) over the folder ``data_path`` names (:func:`nq_folder`; None: the shared data's);
    each statistic with n and its bootstrap CI (:func:`agreement`)."""
    boot = {"resamples": resamples, "seed": seed}
    from ..models.lm_scoring import PPL_CAP, perplexity
    from ..attribution.sentences import split_sentences
    from ..datasets.nq import load_nq
    from ..metrics.conner import sigmoid

    d, questions_file = nq_folder(data_path)
    passages = text_lines((d / "nq_ref").read_text(encoding="utf-8"))
    questions = [s.question for s in load_nq(questions_file)]
    rel_file = read_reference_values(d / "nq_ref_rel").require_finite()
    ppl_file = read_reference_values(d / "nq_ref_avg_sent_ppl")
    rel_theirs, ppl_theirs = rel_file.values, ppl_file.values
    n = min(len(passages), len(questions), limit or len(passages))
    out: dict[str, Any] = {"source": str(d), "reference_files": reference_files(d)}
    m = min(n, len(rel_theirs))
    logits = scorer.score([(questions[i], passages[i]) for i in range(m)])
    ours, theirs_rel, rel_nan = finite_pairs([sigmoid(float(v)) for v in logits], rel_theirs[:m])
    out["relevance"] = {
        **agreement("spearman", ours, theirs_rel, **boot), "their_nan_left_out": rel_nan,
        "ours": f"sigmoid of {scorer.id} on (question, passage)",
        "theirs": "nq_ref_rel (monoBERT)", "alignment": f"their {len(rel_theirs)} values paired by position with the first {len(rel_theirs)} passages (the release does not say which passages they are)",
    }
    if lm is None:
        out["coherence_sentence"] = {"not_run": "needs --lm MODEL (e.g. smollm2-135m)"}
        return out
    if ppl_file.finite == 0:
        try:
            ppl_file.require_finite()
        except VericiteError as e:
            out["sentence_perplexity"] = out["coherence_sentence"] = {"not_run": str(e)}
            return out
    from ..models.lm_scoring import sentence_logprobs

    long_out = their_nan = 0
    texts, spans, theirs_all = [], [], []
    for i in range(min(n, len(ppl_theirs))):
        if max_words is not None and len(passages[i].split()) > max_words:
            long_out += 1
            continue
        if not math.isfinite(ppl_theirs[i]):
            their_nan += 1  # nothing to compare with: not scored at all
            continue
        texts.append(passages[i])
        spans.append([(s.start, s.end) for s in split_sentences(passages[i]) if s.clean])
        theirs_all.append(ppl_theirs[i])
    rows = chunked(lambda ts, ss: sentence_logprobs(lm, ts, ss, context="sentence"), texts, spans, "NQ reference passages")
    mean_ppl, inv_ppl, theirs = [], [], []
    no_ppl = 0
    for i, sents in enumerate(rows):
        ppls = [p for p in (perplexity(lps) for lps in sents) if p is not None]
        if not ppls:
            no_ppl += 1  # no sentence with a scored token: no perplexity of ours to compare
        else:
            mean_ppl.append(sum(ppls) / len(ppls))
            inv_ppl.append(sum(1 / p for p in ppls) / len(ppls))
            theirs.append(theirs_all[i])
    model = lm.identity().name
    alignment = (f"their {len(ppl_theirs)} values, written by CONNER's ppl.py in nq_ref's line order (it asserts 500), "
                 "paired with nq_ref's lines by position: the order the file was made in; their NaN left out")
    kept = f"the first {n} passages" + (f", {long_out} of them over {max_words} words left out" if max_words is not None else "")
    if no_ppl:
        kept += f", {no_ppl} with no sentence {model} could score left out"
    out["sentence_perplexity"] = {
        **agreement("spearman", mean_ppl, theirs, **boot), "passages": kept, "their_nan_left_out": their_nan, "no_perplexity_left_out": no_ppl,
        "ours": f"mean sentence PPL (cap {PPL_CAP:g}) of {model}, each sentence alone (as CONNER's ppl.py)",
        "theirs": "nq_ref_avg_sent_ppl (GPT-Neo 2.7B: mean over nltk sentences of min(PPL, 200); the released values stop at 100.0)",
        "alignment": alignment,
    }
    out["coherence_sentence"] = {
        **agreement("spearman", inv_ppl, [1 / t for t in theirs], **boot), "passages": kept, "their_nan_left_out": their_nan, "no_perplexity_left_out": no_ppl,
        "ours": f"coherence_sentence (Eq. 3): mean over sentences of 1/PPL (cap {PPL_CAP:g}) of {model}, each sentence alone",
        "theirs": "1 / nq_ref_avg_sent_ppl (their file holds the mean sentence PPL; its reciprocal ranks as coherence does, so a positive rho is agreement)",
        "alignment": alignment,
    }
    return out


def chunked(score: Callable[[list[str], list[Any]], list[Any]], texts: list[str], spans: list[Any], what: str, size: int = CHUNK) -> list[Any]:
    """``score`` over ``size`` texts at a time, with progress on stderr: each chunk's model calls reach the call
    cache when it is done, so a run cut off is continued by the same command."""
    rows: list[Any] = []
    for k in range(0, len(texts), size):
        rows.extend(score(texts[k : k + size], spans[k : k + size]))
        print(f"  {what}: {min(k + size, len(texts))}/{len(texts)}", file=sys.stderr, flush=True)
    return rows


def interleave(groups: Sequence[Sequence[Any]]) -> list[Any]:
    """The first of each group, then the second of each, ...: a prefix covers every group."""
    return [g[i] for i in range(max((len(g) for g in groups), default=0)) for g in groups if i < len(g)]


def alce_utility(scorer: Any, lm: Any, limit: int | None, interleaved: bool = False, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """The ALCE part (module docstring); each Somers' D with n and its bootstrap CI (:func:`agreement`)."""
    from ..attribution.sentences import split_sentences
    from ..metrics.conner import INFO_PREFIX, sigmoid
    from ..models.lm_scoring import continuation_logprobs, perplexity, sentence_logprobs
    from ..paths import shared_data_dir

    f = shared_data_dir() / "alce" / "human_eval" / "human_eval_utility_completed.json"  # type: ignore[operator]
    doc = json.loads(Path(f).read_text(encoding="utf-8"))
    groups = [[(it["question"], it["output"], float(it["utility_score"])) for it in model.values()
               if isinstance(it, dict) and str(it.get("output", "")).strip() and it.get("utility_score") is not None]
              for sub in doc.values() for model in sub.values()]
    items = interleave(groups) if interleaved else [x for g in groups for x in g]
    items = items[: limit or len(items)]
    out: dict[str, Any] = {"source": str(f), "comparable": "ALCE answers rated 1-5 for utility, not CONNER knowledge rated per perspective: a proxy",
                           "order": "one answer of each (dataset, system) in turn" if interleaved else "the file's order (dataset, system, question)"}
    rel = [sigmoid(float(v)) for v in scorer.score([(q, o) for q, o, _ in items])]
    out["relevance"] = agreement("somers_d", rel, [u for *_, u in items], resamples=resamples, seed=seed)
    if lm is None:
        out["coherence_sentence"] = out["informativeness"] = {"not_run": "needs --lm MODEL (e.g. smollm2-135m)"}
        return out
    spans = [[(s.start, s.end) for s in split_sentences(o) if s.clean] for _, o, _ in items]
    coh = []
    outputs = [o for _, o, _ in items]
    for sents in chunked(lambda ts, ss: sentence_logprobs(lm, ts, ss), outputs, spans, "ALCE coherence"):
        inv = [1 / p for p in (perplexity(x) for x in sents) if p is not None]
        coh.append(sum(inv) / len(inv) if inv else float("nan"))
    info = []
    prefixes = [INFO_PREFIX.format(topic="", query=q) for q, _, _ in items]
    for lps in chunked(lambda ps, os_: continuation_logprobs(lm, list(zip(ps, os_))), prefixes, outputs, "ALCE informativeness"):
        info.append(1 - math.exp(sum(lps) / len(lps)) if lps else float("nan"))
    u = [x for *_, x in items]
    for name, vals, none in (("coherence_sentence", coh, "no_perplexity_left_out"), ("informativeness", info, "no_tokens_left_out")):
        keep = [i for i, v in enumerate(vals) if not math.isnan(v)]  # an answer the LM scored nothing of: counted
        out[name] = {**agreement("somers_d", [vals[i] for i in keep], [u[i] for i in keep], resamples=resamples, seed=seed), none: len(vals) - len(keep), "lm": lm.identity().name}
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vericite.bench.conner_agreement", description=__doc__.split("\n\n")[0])
    ap.add_argument("--lm", help="a causal LM for sentence perplexity, coherence and informativeness (smollm2-135m runs without the model lock; Qwen under it)")
    ap.add_argument("--data-path", help="CONNER's NQ folder (nq_test_random_testset.txt, nq_ref and its figures), or that file (default: ../shared/data/conner/nq/random_testset)")
    ap.add_argument("--limit", type=int, help="the first N NQ reference passages")
    ap.add_argument("--max-words", type=int, help="leave out NQ reference passages longer than this (some are whole articles); counted in the output")
    ap.add_argument("--skip-alce", action="store_true", help="the NQ part only")
    ap.add_argument("--skip-nq", action="store_true", help="the ALCE part only")
    ap.add_argument("--alce-limit", type=int, help="the first N ALCE rated answers")
    ap.add_argument("--alce-interleave", action="store_true", help="take ALCE's answers one of each (dataset, system) in turn, so a prefix covers all eight")
    ap.add_argument("--relevance-model", default="ms-marco")
    ap.add_argument("--resamples", type=int, default=DEFAULT_RESAMPLES, help=f"bootstrap samples of the items for each statistic's 95%% CI (default {DEFAULT_RESAMPLES})")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"the bootstrap's seed (default {DEFAULT_SEED})")
    ap.add_argument("--out", help="write the JSON here too")
    a = ap.parse_args(argv)
    from .. import registry
    from ..paths import shared_data_dir

    from ..models import release

    lm = None
    try:
        if shared_data_dir(required=False) is None and not (a.skip_alce and a.data_path):
            raise VericiteError("../shared/data is not beside this checkout (set VERICITE_DATA)")
        scorer = registry.create("scorers", a.relevance_model)
        if a.lm:
            from ..models import load_model

            lm = load_model(a.lm)
        result = {}
        if not a.skip_nq:
            result["conner_nq_reference"] = conner_nq(scorer, lm, a.limit, a.max_words, a.data_path, resamples=a.resamples, seed=a.seed)
        if not a.skip_alce:
            result["alce_human_utility"] = alce_utility(scorer, lm, a.alce_limit, a.alce_interleave, resamples=a.resamples, seed=a.seed)
    except VericiteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if lm is not None:
            release(lm)
    text = json.dumps(result, indent=2)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
