"""CONNER's measures that score pairs: ``factuality`` (Eq. 1), each (evidence, sentence) pair of the knowledge judged by
the three-way judge and aggregated over the sentences; ``relevance`` (Eq. 2), and ``coherence_paragraph`` when a
discourse model is given, the sigmoid of a pair scorer's score for (query, knowledge). A part of
:class:`vericite.metrics.conner.ConnerMetric` (its ``judge``, ``aggregation``, ``scorer`` and ``coherence``); the
evidence of a sentence is asked once per evaluation (``conner_asked.py``). Split out of conner.py, which had reached
the 450-line limit."""

from __future__ import annotations

import math
import numbers
from typing import Any

from ..types import JudgePair
from .conner_asked import AskedOnce
from .conner_judged import passage_major, three_way, unusable
from .conner_specs import CLASS_OF, LABELS, sigmoid
from .judging import judge_corpus


class PairMeasures(AskedOnce):
    judge: Any
    scorer: Any
    coherence: Any
    aggregation: str

    def _relevance(self, samples, texts, usable, values, reasons) -> None:  # type: ignore[no-untyped-def]
        if self.scorer is None:
            for i in usable:
                reasons[i]["relevance"] = "no relevance model"
            return
        self._pair_sigmoid(self.scorer, "relevance", "the relevance model", samples, texts, usable, values, reasons)

    def _coherence(self, samples, texts, sentences, usable, values, reasons) -> None:  # type: ignore[no-untyped-def]
        """Paragraph coherence by the discourse model ``coherence``: the sigmoid of its score for (q, k)."""
        paragraphs = []
        for i in usable:
            if len(sentences[i]) < 2:
                reasons[i]["coherence_paragraph"] = "one sentence: no paragraph to judge"
            else:
                paragraphs.append(i)
        self._pair_sigmoid(self.coherence, "coherence_paragraph", "the coherence model", samples, texts, paragraphs, values, reasons)

    @staticmethod
    def _pair_sigmoid(scorer, name, what, samples, texts, items, values, reasons) -> None:  # type: ignore[no-untyped-def]
        logits = list(scorer.score([(samples[i].question, texts[i]) for i in items])) if items else []
        if len(logits) != len(items):
            for i in items:
                reasons[i][name] = f"{what} gave {len(logits)} scores for {len(items)} pairs"
            return
        for i, x in zip(items, logits):
            if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):  # NaN was reported as 0.0
                reasons[i][name] = f"{what} gave no score ({x!r})"[:120]
                continue
            values[name][i] = round(sigmoid(float(x)), 6)

    def _factuality(self, samples, texts, sentences, usable, values, reasons, extra, judgements, counts, progress) -> None:  # type: ignore[no-untyped-def]
        if self.judge is None:
            for i in usable:
                reasons[i]["factuality"] = "no judge (--judge llm3:<model>, llm3c:<model>, llm3f:<fit file>, nli3:<model>, fake-3way)"
            return
        plan: dict[int, list[tuple[str, list[str]]]] = {}
        for i in usable:
            sents = [texts[i][s:e].strip() for s, e in sentences[i]]
            rows = [(s, self._evidence(samples[i], s, extra[i])) for s in sents]
            if not any(ev for _, ev in rows):
                reasons[i]["factuality"] = "no evidence (the item's passages, or --index)"
                continue
            plan[i] = rows
        pairs = passage_major([JudgePair(ev, s, question=samples[i].question) for i, rows in plan.items() for s, evs in rows for ev in evs])
        bar = (lambda total: progress(total, "judging")) if progress is not None else None
        judged = judge_corpus(self.judge, pairs, progress=bar)
        counts["judge_calls"] += len(judged)
        for i, rows in plan.items():
            vectors = []
            failure = None  # the first failed judgement's message (a prompt too long for the judge's context)
            for s, evs in rows:
                best = None
                for ev in evs:
                    j = judged[JudgePair(ev, s, question=samples[i].question)]
                    judgements[i].append({**j.to_dict(), "purpose": "factuality"})
                    sc = three_way(j)
                    if sc is None:
                        why = unusable(j, counts)  # counted, whether or not an earlier one failed
                        failure = failure or why
                        continue
                    if best is None or sc["supports"] > best["supports"]:
                        best = sc
                if best is not None:
                    vectors.append(best)
            if not vectors:
                reasons[i]["factuality"] = f"no sentence could be judged ({failure or 'unparseable judgements'})"
                continue
            if self.aggregation == "mean":
                agg = {k: sum(v[k] for v in vectors) / len(vectors) for k in LABELS}
            else:
                pick = min if self.aggregation == "min" else max
                agg = pick(vectors, key=lambda v: v["supports"])
            label = max(LABELS, key=lambda k: agg[k])
            values["factuality"][i] = round(agg["supports"], 6)
            for k, share in CLASS_OF.items():
                values[share][i] = 1.0 if k == label else 0.0
            extra[i]["factuality_vector"] = {k: round(v, 6) for k, v in agg.items()}
            extra[i]["factuality_label"] = CLASS_OF[label]
