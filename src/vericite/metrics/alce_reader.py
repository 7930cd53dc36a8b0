"""The final-answer reader of ALCE's short-answer metrics (``vericite evaluate --task alce-short --reader
llm:<model>``): VTG's reading of NQ and WebQuestions (after Sun et al. 2023: "LLMs are prompted to generate the
final answer, which is then compared with the reference answer using answer-level exact match (EM) and token-level
F1").

An answer that says "The capital is Paris [1]." never equals the gold alias "Paris", so ``answer_em`` over the
whole output is 0 for every model that answers in sentences. With a reader, a language model is given the question
and the citation-free output and asked for the final short answer only (prompt ``alce-final-answer@1``: an
instruction, two worked examples as chat turns, then the answer to read; greedy,
at most :data:`MAX_TOKENS` tokens, the first line of its reply kept); ``answer_em`` and ``answer_f1`` score that
short answer instead of the output. ``answer_hit`` is not the reader's: it stays on the whole output.

Per answer (:meth:`FinalAnswerReader.read`): an output that is empty after preprocessing is not read (its short
answer is the empty output, scored as without a reader); a call that fails (``BackendError``) or a reply with no
answer on its first line is a failure, with its reason: that answer's EM and F1 are not computed (never a 0).
The reader's model is loaded by the evaluation's driver before the first answer is judged (``load``, so a model
that cannot be loaded is one line then, not after the judging), never by an evaluation's ``--ray`` workers, which
only judge; its calls go through the evaluation's call cache and count in ``judge_usage`` under its model's name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import VericiteError
from ..types import GenParams

#: the reader's prompts by number (``llm:<model>@<number>``; the id of number N is ``alce-final-answer@N``): the
#: instruction (a system message), then worked examples as turns of the chat (the user's question and response, the
#: assistant's short answer alone), then the answer to read
PROMPTS = {
    1: {
        "system": (
            "You read a response to a question and write its final answer: only the short answer itself (a name, a "
            "date, a number or a few words), not a sentence, no explanation, no citation. If the response gives no "
            "answer, write: unknown"
        ),
        "examples": (
            ("who wrote the song the sound of silence?", "The Sound of Silence was written by Paul Simon in 1964 [2].", "Paul Simon"),
            ("how many players does a basketball team have on the court?", "Each team has five players on the court at a time [1].", "five"),
        ),
        "user": "Question: {question}\nResponse: {output}\nFinal answer:",
    },
}
PROMPT_NAME = "alce-final-answer"
DEFAULT_PROMPT = 1
#: the reader's reply is a short answer: a few tokens, greedy
MAX_TOKENS = 24
_ECHOED = re.compile(r"^\s*(final answer|short answer|answer)\s*:\s*", re.IGNORECASE)


def prompt_id(number: int) -> str:
    return f"{PROMPT_NAME}@{number}"


def parse_reader_spec(spec: str) -> tuple[str, int]:
    """``llm:<model>[@<prompt number>]`` -> (model name, prompt number); anything else is one line of error."""
    kind, sep, rest = spec.partition(":")
    if kind != "llm" or not sep or not rest.strip():
        raise VericiteError(f"--reader {spec!r}: want llm:<model>[@<prompt number>] (the model that reads each answer's final short answer; see `vericite models`)")
    name, at, number = rest.rpartition("@")
    if at and number.isdigit() and name:
        if int(number) not in PROMPTS:
            raise VericiteError(f"--reader {spec!r}: unknown prompt number {number} (known: {', '.join(map(str, PROMPTS))})")
        return name, int(number)
    return rest, DEFAULT_PROMPT


def short_answer(reply: str) -> str:
    """The reader's short answer in its reply: the first line, stripped, without an echoed "Final answer:"."""
    first = (reply or "").strip().split("\n", 1)[0].strip()
    return _ECHOED.sub("", first).strip()


@dataclass
class Reading:
    """One answer read: ``answer`` the short answer (None when the reading failed, ``reason`` then says why);
    ``called``: whether the reader's model was asked (an empty output is not read)."""

    answer: str | None
    reason: str | None = None
    called: bool = True


class FinalAnswerReader:
    """``FinalAnswerReader(spec, load)``: ``spec`` ``llm:<model>[@<prompt number>]``, ``load`` a model loader
    (``vericite.models.model_loader(ctx)``), called with the model name at the first reading."""

    def __init__(self, spec: str, load: Callable[[str], Any]) -> None:
        self.model, self.number = parse_reader_spec(spec)
        self.spec = f"llm:{self.model}"
        self.prompt = prompt_id(self.number)
        self._load = load
        self._backend: Any = None

    @property
    def id(self) -> str:
        """How a metric entry names it (as G-Eval's ``geval@1:<model>``): ``alce-final-answer@1:<model>``."""
        return f"{self.prompt}:{self.model}"

    @property
    def backend(self) -> Any:
        if self._backend is None:
            from ..errors import load_failure

            try:
                self._backend = self._load(self.model)
            except Exception as e:  # noqa: BLE001 - an unknown model, a missing or corrupt file: one line, no traceback
                raise load_failure(f"the reader's model {self.model} (--reader {self.spec})", e) from None
        return self._backend

    def load(self) -> Any:
        """The reader's model, loaded now if it is not yet (the evaluation's driver calls it before any answer is
        judged: ``AlceMetric.preload``); one that cannot be loaded is one line naming it."""
        return self.backend

    def messages(self, question: str, output: str) -> list[dict[str, str]]:
        p = PROMPTS[self.number]
        out = [{"role": "system", "content": p["system"]}]
        for q, response, answer in p["examples"]:
            out += [{"role": "user", "content": p["user"].format(question=q, output=response)}, {"role": "assistant", "content": answer}]
        return out + [{"role": "user", "content": p["user"].format(question=question.strip(), output=output.strip())}]

    def read(self, question: str, output: str) -> Reading:
        """The final short answer of ``output`` (citation-free) to ``question``; one call, greedy (module doc)."""
        from ..errors import BackendError

        if not output.strip():
            return Reading("", called=False)
        try:
            got = self.backend.generate([self.messages(question, output)], GenParams(max_tokens=MAX_TOKENS, temperature=0.0))
        except BackendError as e:
            return Reading(None, f"the reader's call failed ({e})")
        if len(got) != 1:
            return Reading(None, f"the reader's model gave {len(got)} replies for 1 prompt")
        answer = short_answer(got[0].text)
        if not answer:
            return Reading(None, "the reader gave no answer (its reply's first line is empty)")
        return Reading(answer)
