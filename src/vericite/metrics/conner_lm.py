"""CONNER's measures that score the knowledge with a causal LM (Eq. 3-6): sentence coherence, the paragraph's
sentence-order test, informativeness and helpfulness; a part of :class:`vericite.metrics.conner.ConnerMetric`
(its ``lm``, ``sentence_context``, ``seed``, ``shuffles`` and ``unrelated``), kept apart from the judged measures
(factuality, validity) and the corpus plumbing.

The texts that the sentence-order test, informativeness and helpfulness score go to the LM in one
``continuation_logprobs`` call: a knowledge text is the paragraph of its own order test and the beginning of its
helpfulness prompt, and of the prompts of the items that draw it as unrelated knowledge, so a backend that scores a
call's texts in the order of their tokens and keeps a shared prefix (llama.cpp) evaluates it once rather than
about ``2 + 2 * unrelated`` times. Each text's log-probabilities are the same whichever call holds it."""

from __future__ import annotations

import contextlib
import math
import random
from collections import defaultdict
from typing import Any

from ..models.lm_scoring import continuation_logprobs, perplexity, sentence_logprobs
from .conner_specs import HELP_PREFIX, INFO_PREFIX, gold_response


class LMMeasures:
    lm: Any
    sentence_context: str
    seed: int
    shuffles: int
    unrelated: int

    def _lm_measures(self, samples, texts, sentences, usable, values, reasons, want, extra=None, progress=None) -> None:  # type: ignore[no-untyped-def]
        """``progress``: a ``ProgressBar``; a bar over the texts the LM scores (both calls) moves as they are scored."""
        names = [m for m in ("coherence_sentence", "coherence_paragraph", "informativeness", "helpfulness") if m in want]
        if self.lm is None:
            for i in usable:
                for m in names:
                    reasons[i][m] = "no language model (--lm)"
            return
        sentence = "coherence_sentence" in want and bool(usable)
        # the texts of the three measures below, planned first so that the bar knows every text the LM will score;
        # their reasons are given after coherence_sentence's (``later``), in the order they always were
        later: dict[int, dict[str, str]] = defaultdict(dict)
        order = self._order_plan(texts, sentences, usable, later) if "coherence_paragraph" in want else {}
        info = self._info_pairs(samples, texts, usable) if "informativeness" in want else []
        helps = self._help_plan(samples, texts, usable, later) if "helpfulness" in want else {}
        order_flat = [(i, t) for i, ts in order.items() for t in ts]
        help_flat = [(i, k) for i, ks in helps.items() for k in ks]
        help_pairs = [(HELP_PREFIX.format(knowledge=k, query=samples[i].question), " " + gold_response(samples[i])) for i, k in help_flat]  # type: ignore[operator]
        pairs = [("", t) for _, t in order_flat] + info + help_pairs
        # sentence_logprobs scores a text per item (paragraph context) or each sentence alone (sentence context)
        n_sentence = (len(usable) if self.sentence_context == "paragraph" else sum(len(sentences[i]) for i in usable)) if sentence else 0
        total = n_sentence + len(pairs)
        kinds = ", ".join(dict.fromkeys("coherence" if m.startswith("coherence") else m for m in names))
        bar = progress(total, f"scoring texts with the LM ({kinds})") if progress is not None and total else contextlib.nullcontext(None)
        with bar as advance:
            if sentence:
                rows = sentence_logprobs(self.lm, [texts[i] for i in usable], [sentences[i] for i in usable], context=self.sentence_context, progress=advance)
                for i, sents in zip(usable, rows):
                    inv = [1.0 / p for p in (perplexity(lps) for lps in sents) if p is not None]
                    if inv:
                        values["coherence_sentence"][i] = round(sum(inv) / len(inv), 6)
                    else:
                        reasons[i]["coherence_sentence"] = "no sentence with a scored token"
            for i, why in later.items():
                reasons[i].update(why)
            if not want & {"coherence_paragraph", "informativeness", "helpfulness"}:
                return
            # one call for the texts of the three measures (module docstring)
            scored = continuation_logprobs(self.lm, pairs, progress=advance)
        cut = len(order_flat) + len(info)
        if order_flat:
            self._order_values(order_flat, scored[: len(order_flat)], values)
        for i, lps in zip(usable if info else [], scored[len(order_flat) : cut]):
            if lps:
                values["informativeness"][i] = round(1.0 - math.exp(sum(lps) / len(lps)), 6)
            else:
                reasons[i]["informativeness"] = "no scored token"
        if help_flat:
            self._help_values(help_flat, scored[cut:], values, reasons, extra)
        for i, ks in helps.items():  # u as used: fewer than ``unrelated`` when the corpus has fewer other texts
            if extra is not None and values["helpfulness"][i] is not None:
                extra[i]["helpfulness_unrelated"] = len(ks) - 1

    @staticmethod
    def _info_pairs(samples, texts, usable) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
        pairs = []
        for i in usable:
            topic = (samples[i].meta or {}).get("topic")
            prefix = INFO_PREFIX.format(topic=f"Topic: {topic} " if topic else "", query=samples[i].question)
            pairs.append((prefix, texts[i]))
        return pairs

    def _order_plan(self, texts, sentences, usable, reasons) -> dict[int, list[str]]:  # type: ignore[no-untyped-def]
        """Per item with two sentences or more: its paragraph, then its ``shuffles`` seeded shuffled orders."""
        plans = {}
        for i in usable:
            sents = [texts[i][s:e].strip() for s, e in sentences[i]]
            if len(sents) < 2:
                reasons[i]["coherence_paragraph"] = "one sentence: no order to test"
                continue
            rng = random.Random(f"{self.seed}:{texts[i]}")
            orders = []
            for _ in range(self.shuffles):
                o = list(range(len(sents)))
                for _try in range(10):
                    rng.shuffle(o)
                    if o != sorted(o):
                        break
                orders.append(list(o))
            plans[i] = [" ".join(sents)] + [" ".join(sents[k] for k in o) for o in orders]
        return plans

    @staticmethod
    def _order_values(flat, scored, values) -> None:  # type: ignore[no-untyped-def]
        totals: dict[int, list[float]] = {}
        for (i, _), lps in zip(flat, scored):
            totals.setdefault(i, []).append(sum(lps))
        for i, (own, *shuffled) in totals.items():
            wins = sum(1.0 if own > x else 0.5 if own == x else 0.0 for x in shuffled)
            values["coherence_paragraph"][i] = round(wins / len(shuffled), 6)

    def _help_plan(self, samples, texts, usable, reasons) -> dict[int, list[str]]:  # type: ignore[no-untyped-def]
        """Per item with a gold answer: its knowledge, then ``unrelated`` seeded knowledge texts of other items."""
        pool = [i for i in usable]
        plans: dict[int, list[str]] = {}
        for i in usable:
            a = gold_response(samples[i])
            if a is None:
                reasons[i]["helpfulness"] = "no gold answer"
                continue
            others = [j for j in pool if j != i and texts[j] != texts[i]]
            if not others:
                reasons[i]["helpfulness"] = "no other item's knowledge to compare with"
                continue
            rng = random.Random(f"{self.seed}:{samples[i].id}")
            plans[i] = [texts[i]] + [texts[j] for j in rng.sample(others, min(self.unrelated, len(others)))]
        return plans

    @staticmethod
    def _help_values(flat, scored, values, reasons, extra=None) -> None:  # type: ignore[no-untyped-def]
        """Eq. 6 per item; ``extra``'s ``helpfulness_raw`` is 1 − L/mean L⁻ before the clamp at 0 (negative: the
        gold answer is less likely after the knowledge than after the unrelated texts)."""
        losses: dict[int, list[float]] = {}
        for (i, _), lps in zip(flat, scored):
            losses.setdefault(i, []).append(-sum(lps) / len(lps) if lps else math.nan)
        for i, (own, *rest) in losses.items():
            base = sum(rest) / len(rest)
            if not (math.isfinite(own) and math.isfinite(base)) or base <= 0:
                reasons[i]["helpfulness"] = "the gold answer has no scored token"
                continue
            raw = 1.0 - own / base
            values["helpfulness"][i] = round(max(0.0, raw), 6)
            if extra is not None:
                extra[i]["helpfulness_raw"] = round(raw, 6)
