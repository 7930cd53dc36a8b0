"""A scripted model for VTG's tests: it writes sentences, citations and queries by what each prompt holds, so
each of VTG's steps can be driven one way or the other; the keyword judge (``fakes.judges.KeywordJudge``:
supported when every word of the claim is in the evidence) verifies."""

from __future__ import annotations

import contextlib
import json
import re
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest

from vericite import progress, registry
from vericite.models.fake import FakeBackend, last_user_message
from vericite.types import Passage

DOCS = [
    Passage("d1", "Paris is the capital of France.", "Paris"),
    Passage("d2", "Berlin is the capital of Germany.", "Berlin"),
    Passage("d3", "Rome is the capital of Italy.", "Rome"),
    Passage("d4", "Madrid is a large city.", "Madrid"),
]
QUESTION = "Which cities are capitals?"


#: the three sentences the retry tests script (``PARIS_AGAIN``: Paris's near repeat), and the citations of two
PARIS, PARIS_AGAIN = "Paris is the capital of France.", "The capital of France is Paris."
ROME, BERLIN = "Rome is the capital of Italy.", "Berlin is the capital of Germany."
CITES = {"Rome": "title:Rome", "Berlin": "title:Berlin"}


def keyword_vtg(backend: FakeBackend, **opts: Any) -> Any:
    """VTG (k 4, one document per query, no evidence rounds unless ``opts`` say) on ``backend``, verified by the
    keyword judge."""
    from vericite.fakes.judges import KeywordJudge
    from vericite.generate.vtg import build
    from vericite.registry import BuildContext

    opts = {"k": 4, "docs_per_query": 1, "trials": 0, **opts}
    return build("", ctx=BuildContext(), backend=backend, judge=KeywordJudge(), **opts)


def answer_q1(m: Any) -> Any:
    """``m``'s answer to :data:`QUESTION` with :data:`DOCS`."""
    from vericite.types import Sample

    return m.answer(Sample("q1", QUESTION, passages=list(DOCS)))


def kept_sentences(r: Mapping[str, Any]) -> list[str]:
    """The kept sentences of an answer's VTG trace, citations cut."""
    return [s["kept"].split(" [")[0] + "." for s in r["vtg"]["sentences"] if s["kept"]]


def doc_number(prompt: str, title: str) -> int | None:
    m = re.search(r"Document \[(\d+)\]\(Title: " + re.escape(title) + r"\)", prompt)
    return int(m.group(1)) if m else None


def answer_so_far(prompt: str) -> str:
    """The answer so far in a sentence prompt: ``vtg-sentence@3``'s ``Answer so far: …`` line, else what follows
    ``@2``'s closing ``Answer:``."""
    m = re.search(r"^Answer so far: (.*)$", prompt, re.MULTILINE)
    return m.group(1).strip() if m else prompt.rsplit("Answer:", 1)[1].strip()


def citation_sentence(prompt: str) -> str | None:
    """The sentence a citation prompt (``vtg-cite``) asks citations for, None for any other prompt."""
    if "Sentence with citation:" not in prompt:
        return None
    return prompt.rsplit("Sentence: ", 1)[1].split("\n", 1)[0]


def scripted(sentences: Sequence[str], cites: Mapping[str, str] | None = None, queries: str = "1. What is the capital of Italy?\n2. Where is Rome?", *, eager_end: bool = False, rest: bool = False) -> FakeBackend:
    """Sentences in order (the answer so far decides which is next; ``End.`` after them); citations by the
    sentence's first word: a ``title:<Title>`` value cites that document's number in the prompt, else the reply
    as given (default ``[1]``). ``eager_end``: ``End.`` whenever the prompt offers it (the embedded Qwen's habit);
    ``rest``: every sentence still to come, not only the next."""
    cites = dict(cites or {})

    def reply(messages: Any, params: Any) -> str:
        prompt = last_user_message(messages)
        sentence = citation_sentence(prompt)
        if sentence is not None:
            how = cites.get(sentence.split()[0], "[1]")
            if how.startswith("title:"):
                n = doc_number(prompt, how[len("title:") :])
                return f"{sentence} [{n}]" if n else sentence
            return f"{sentence} {how}"
        if "Generated questions:" in prompt:
            return queries
        so_far = answer_so_far(prompt)
        done = sum(1 for s in sentences if s in so_far)
        if done >= len(sentences) or (eager_end and so_far and '"End."' in prompt):
            return "End."
        return " ".join(sentences[done:]) if rest else sentences[done]

    return FakeBackend("vtg-script", replies=reply)


def restating(sentences: Sequence[str], again: str, cites: Mapping[str, str] | None = None, *, first: bool = False) -> FakeBackend:
    """:func:`scripted`'s model, but a sentence prompt with an answer so far, drawn with seed 0, gets ``again`` (a
    restatement of a sentence written, or one of them as it is): with the method's seed 0 and ``trials=0``, each
    sentence's first draw after the first repeats, and a draw again (seed 1, 2, ...) writes the next sentence.
    With ``first=True`` it is the sentence prompt with no answer so far (the answer's first draw) that gets it."""
    inner = scripted(sentences, cites).replies
    assert callable(inner)

    def reply(messages: Any, params: Any) -> str:
        prompt = last_user_message(messages)
        sentence_prompt = "Sentence with citation:" not in prompt and "Generated questions:" not in prompt
        if sentence_prompt and bool(answer_so_far(prompt)) != first and params.seed == 0:
            return again
        return inner(messages, params)

    return FakeBackend("vtg-restating", replies=reply)


SAID_PARIS = "Based on the provided search results, Paris is the capital of France."
SAID_ROME = "According to the search results [3], the capital of Italy is Rome."


def two_capitals(name: str, first: str, second: str, last: str, cite_rome: bool = True) -> FakeBackend:
    """A model that writes ``first`` with no answer so far, ``second`` until Rome is in the answer, then ``last``;
    cites the third document (Rome, with the question's four :data:`DOCS`) for a sentence naming Rome (or, with
    ``cite_rome=False``, for every sentence not naming Paris), else the first."""

    def reply(messages: Any, params: Any) -> str:
        prompt = last_user_message(messages)
        sentence = citation_sentence(prompt)
        if sentence is not None:
            third = "Rome" in sentence if cite_rome else "Paris" not in sentence
            return f"{sentence} {'[3]' if third else '[1]'}"
        so_far = answer_so_far(prompt)
        return first if not so_far else second if "Rome" not in so_far else last

    return FakeBackend(name, replies=reply)


def saying() -> FakeBackend:
    """A model that opens each sentence with a preamble (:data:`SAID_PARIS`, then :data:`SAID_ROME`, then ``End.``);
    cites the first document for Paris, the third (Rome, with the question's four :data:`DOCS`) for the rest."""
    return two_capitals("vtg-saying", SAID_PARIS, SAID_ROME, "End.", cite_rome=False)


#: remarks on the sources the embedded Qwen wrote (runs/vtg-trials-rr/level-0 and level-2), and the brief's third
REMARK = "This information can be found in documents [1], [2], and [3]."
REMARK_MANGLED = "This information can be found in documents,, and."  # REMARK as ALCE's remove_citations leaves it
SEE = "For more information, see Document [2]."


def remarking() -> FakeBackend:
    """Paris (then :data:`REMARK` in the same completion, never read), then :data:`REMARK` followed by Rome, then only
    :data:`SEE`; cites the first document for Paris and the remark, the third (Rome) for Rome."""
    return two_capitals("vtg-remarking", f"{PARIS} {REMARK}", f"{REMARK} {ROME}", SEE)


#: sentences that name their source by its markers before saying anything (``strip_source_leads``)
PARIS_LED, ROME_LED = "Document [1] mentions that Paris is the capital of France [1].", "As stated in [3], Rome is the capital of Italy."


def leading() -> FakeBackend:
    """A model that names the source before each sentence (:data:`PARIS_LED`, then :data:`ROME_LED`, then ``End.``);
    cites the third document (Rome) for Rome, the first for the rest."""
    return two_capitals("vtg-leading", PARIS_LED, ROME_LED, "End.")


@pytest.fixture
def script_model():
    """The backend name ``vtg-script``: a scripted model that writes two sentences about Paris and Rome and cites
    them, registered for the test and removed after it."""
    def factory(arg, *, ctx, **options):
        return scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[2]", "Rome": "title:Rome"})

    registry.backends.register("vtg-script", factory, replace=True)
    yield "vtg-script"
    registry.backends.unregister("vtg-script")


def vtg_experiment_config(tmp_path: Path, items: Sequence[Mapping[str, Any]], model: str, experiment: str, extra: str = "") -> Path:
    """``items`` written as an ALCE-format file and a ``vericite run`` config over it: VTG (k 2, N 1, T 1, the fake
    judge for the verifiers and the evaluation) under ``experiment``; ``extra``: more YAML lines (e.g. levels)."""
    data = tmp_path / "eli5_eval.json"
    data.write_text(json.dumps(list(items)), encoding="utf-8")
    cfg = tmp_path / "vtg.yaml"
    cfg.write_text(
        f"name: t\ndataset: {data}\nmodel: {model}\nmethod: vtg\n"
        "method_args: {k: 2, docs_per_query: 1, trials: 1, verifier_judge: fake}\n"
        f"task: alce\njudge: fake\nresamples: 20\nexperiment: {experiment}\n{extra}",
        encoding="utf-8",
    )
    return cfg


def slow_script() -> FakeBackend:
    """The scripted model (Paris, then Rome), each call 0.05 s: for progress while answers run (picklable for Ray)."""
    backend = scripted(["Paris is the capital of France.", "Rome is the capital of Italy."], cites={"Paris": "[1]", "Rome": "title:Rome"})
    inner = backend.generate

    def slow(*a, **k):  # a slow model: the driver reads the steps while the answers run
        time.sleep(0.05)
        return inner(*a, **k)

    backend.generate = slow
    return backend


class StepLabels:
    """The labels a run's progress gives ``advance.running`` (``seen``), recorded by a ``progress_bar`` put in its
    place; a pooled run's driver reads its workers' steps every 0.01 s, which Ray workers send every 0.01 s."""

    def __init__(self, monkeypatch):
        self.seen: list[str] = []

        @contextlib.contextmanager
        def bar(total, description, *, enabled=True, completed=0, interval=None):
            yield progress.Advance(lambda n=1: None, self.seen.append)

        monkeypatch.setattr(progress, "progress_bar", bar)
        from vericite.runs import distributed as D

        monkeypatch.setattr(D, "STEP_POLL_S", 0.01)
        import vericite.distributed.steps as steps

        monkeypatch.setattr(steps, "STEP_PUSH_S", 0.01)  # a Ray worker's reports sent at once
