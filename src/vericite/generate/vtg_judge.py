"""VTG's verifier judge as the verifiers see it (:class:`MeteredJudge`, used by ``vtg.py``): its calls metered
and timed by the answer's tracer, and a judge that fails made failed judgements, counted and traced, never a crash
or a pass; and which judges can verify (:data:`VERIFIER_RULE`, :func:`verifier_refusal`).

Every verifier (generation, memory, the simplifier's checks, greedy or halving) reads a judgement as
``judges.batches.judgement_verdict`` does: entailed when its status is ``ok`` and its ``probability`` is at least
0.5. A binary judge's probability is P(supported); a three-way judge's (``llm3:``, ``llm3c:``, ``llm3f:``,
``nli3:``, ``fake-3way``) is P(supports), so it verifies when P(supports) >= 0.5, not when supports is merely its
likeliest label (supports 0.45, not_enough_info 0.35, refutes 0.20 is not entailed): the stricter reading, and the
one ``vericite judge-eval``'s binary figures (measured.json's ``balanced_accuracy``) measure. A four-class judge
(CAQA's labels) is refused: its probability is P(supportive) against three other classes, measured as a
four-class accuracy only."""

from __future__ import annotations

from typing import Any

from ..models.usage import metering
from .vtg_trace import Tracer

#: how the verifiers read a judgement (module docstring)
VERIFIER_RULE = "entailed when the judgement is ok and its probability (P(supported); a three-way judge's P(supports)) is at least 0.5"


def verifier_refusal(judge: Any) -> str | None:
    """Why ``judge`` cannot be VTG's verifier, in one line, or None when it can: a judge whose ``labels`` hold
    CAQA's four classes (``llm4:``, ``nli4:``, ``autois:``, ``caqa:``, ``fake-4class``) is refused; any other judge
    is read by :data:`VERIFIER_RULE`."""
    from ..judges.four_class import is_four_class

    if not is_four_class(judge):
        return None
    labels = [str(x) for x in judge.labels]
    jid = getattr(judge, "id", type(judge).__name__)
    return (
        f"method vtg: verifier_judge {jid} is a four-class judge ({', '.join(labels)}), which cannot verify: give a binary "
        "judge (llm:<model>, nli:<model>, table:<file>) or a three-way one (llm3:<model>, llm3c:<model>, llm3f:<fit file>, "
        "nli3:<model>), read as entailed when its P(supports) is at least 0.5; autois:<judge> is its binary <judge>"
    )


class MeteredJudge:
    """The judge as the verifier sees it: an LLM judge on a backend (its ``backend`` attribute) has its calls
    counted by the ``verify`` component's meter too; any judge is counted by the tracer's judge calls."""

    def __init__(self, inner: Any, tracer: Tracer) -> None:
        self.inner = inner
        self.tracer = tracer
        self.id = getattr(inner, "id", type(inner).__name__)

    def judge(self, pairs: Any) -> Any:
        with self.tracer.timed("verify"):
            return self._judge(pairs)

    def _judge(self, pairs: Any) -> Any:
        """The inner judge's judgements; a judge that raises (but a model server's ``BackendError``: the loop
        records the question as failed and ``--resume`` retries it) or gives back anything but one
        :class:`Judgement` per pair has all the pairs of that call as failed judgements, counted
        (``judge_errors``) and its first message traced (``judge_error``): never a crash, never a pass. A
        plugin's failure (``PluginError``: a plugin judge, or a plugin model under the judge, that raised) is such
        a judge failure, not a server's."""
        from ..errors import BackendError, PluginError
        from ..types import Judgement

        pairs = list(pairs)
        try:
            with metering(self.inner, self.tracer.meters["verify"]):
                got = self.inner.judge(pairs)
            if not isinstance(got, (list, tuple)) or len(got) != len(pairs) or not all(isinstance(j, Judgement) for j in got):
                n = len(got) if isinstance(got, (list, tuple)) else None
                raise TypeError(f"returned {type(got).__name__ if n is None else f'{n} items'} for {len(pairs)} pairs, not one Judgement each")
            return list(got)
        except BackendError as e:
            if not isinstance(e, PluginError):
                raise
            why = f"judge {self.id}: {e}"[:300]
        except Exception as e:  # noqa: BLE001 - any judge failure is counted and traced, not a crash
            why = f"judge {self.id}: {type(e).__name__}: {e}"[:300]
        self.tracer.count("judge_errors")
        self.tracer.judge_error = self.tracer.judge_error or why
        return [Judgement(str(self.id), p.claim, p.evidence, None, None, why, "failed") for p in pairs]
