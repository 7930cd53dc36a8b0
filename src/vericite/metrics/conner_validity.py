"""CONNER's validity (Eq. 7-8) and answer_em (§5's downstream accuracy): the LM reads the knowledge and answers the
query; its answer is judged by the three-way judge against the gold answer, or against the evidence (the item's
passages, else what the retriever finds for the answer), and matched against the gold short answers. A part of
:class:`vericite.metrics.conner.ConnerMetric` (its ``lm``, ``judge`` and ``retriever``); the reader's answers and
the evidence are asked once per evaluation (``conner_asked.py``). Split out of conner.py, which had grown past what
a reader holds."""

from __future__ import annotations

from typing import Any

from ..types import JudgePair
from .conner_asked import AskedOnce
from .conner_judged import is_probability, unusable
from .conner_specs import READER_PROMPT, gold_answer
from .judging import judge_corpus


class ValidityMeasures(AskedOnce):
    judge: Any

    def _validity(self, samples, texts, usable, values, reasons, extra, judgements, counts, want) -> None:  # type: ignore[no-untyped-def]
        """The reader answers from the knowledge; its answer is judged (validity) and matched (answer_em)."""
        from .alce import answer_scores

        val, em = "validity" in want, "answer_em" in want
        if self.lm is None:
            for i in usable:
                for m in ("validity", "answer_em"):
                    if m in want:
                        reasons[i][m] = "no language model (--lm)"
            return
        todo, judged_items = [], set()
        for i in usable:
            gold = gold_answer(samples[i])
            evidence = [p.text for p in (samples[i].passages or []) if p.text.strip()]
            need = False
            if em:
                if gold is None:
                    reasons[i]["answer_em"] = "no gold short answer"
                else:
                    need = True
            if val:
                if self.judge is None:
                    reasons[i]["validity"] = "no judge (--judge llm3:<model>, llm3c:<model>, llm3f:<fit file>, nli3:<model>, fake-3way)"
                elif gold is None and not evidence and self.retriever is None:
                    reasons[i]["validity"] = "no gold answer and no evidence"
                else:
                    need = True
                    judged_items.add(i)
            if need:
                todo.append(i)
        from ..errors import BackendError

        done: list[tuple[int, Any]] = []
        for i in todo:  # one call per item: a knowledge text too long for the reader's context fails alone
            got = self._read(READER_PROMPT.format(knowledge=texts[i], query=samples[i].question))
            if isinstance(got, BackendError):
                for m in ("validity", "answer_em"):
                    if m in want and m not in reasons[i]:
                        reasons[i][m] = f"the reader's call failed ({got})"
            else:
                done.append((i, got))
        pairs: dict[int, list[JudgePair]] = {}
        for i, answer in done:
            extra[i]["reader_answer"] = answer
            if not answer:
                for m in ("validity", "answer_em"):
                    if m in want and m not in reasons[i]:
                        reasons[i][m] = "the reader gave no answer"
                continue
            if em and "answer_em" not in reasons[i]:
                values["answer_em"][i] = answer_scores(samples[i].answers or [], answer)[0]  # type: ignore[index]
            if i not in judged_items:
                continue
            q, gold = samples[i].question, gold_answer(samples[i])
            if gold is not None:
                pairs[i] = [JudgePair(f"{q} {gold}", f"{q} {answer}", question=q)]
            else:
                found = self._evidence(samples[i], answer, extra[i])  # the item's passages, else the index's for the answer
                if not found:
                    reasons[i]["validity"] = "no evidence for the answer (the item's passages, or --index)"
                    continue
                pairs[i] = [JudgePair(e, answer, question=q) for e in found]
        judged = judge_corpus(self.judge, [p for ps in pairs.values() for p in ps]) if pairs else {}
        counts["judge_calls"] += len(judged)
        for i, ps in pairs.items():
            probs, failure = [], None
            for p in ps:
                j = judged[p]
                judgements[i].append({**j.to_dict(), "purpose": "validity"})
                if j.status == "ok" and is_probability(j.probability):
                    probs.append(float(j.probability))
                else:
                    why = unusable(j, counts)  # counted, whether or not an earlier one failed
                    failure = failure or why
            if probs:
                values["validity"][i] = round(max(probs), 6)
            else:
                reasons[i]["validity"] = f"no judgement could be read{f' ({failure})' if failure else ''}"
