"""A VTG answer's trace (``vtg`` in each samples.jsonl record): per sentence, each trial's text, its citations,
both verifiers' verdicts with probabilities, the simplifier's removals, the queries and the documents they
brought, the memory's sizes, and the tokens of each step; per answer, the totals by component and the counts of
what went wrong (bounded, never silent): judgements that could not be read, citations out of range, queries that
could not be read, retrievals that found nothing, sentences kept unverified, the sentence cap reached
(``sentence_cap``: a limit, not a failure, which the report counts apart), judge calls that failed, an answer left empty, the answer ended on repeats, (with the near-repeat rule) near repeats
skipped (:data:`NEAR_REPEATS`, each one's text in its trial's ``near_repeats``) and (with ``repeat_retries`` above
0) completions of repeats drawn again and answers ended short of ``min_sentences`` (:data:`SHORT_ANSWERS`), and
(with ``short_retries`` above 0) the other early endings drawn again, by reason (:data:`SHORT_RETRY_COUNTS`), and
(with ``strip_preamble`` or ``strip_source_leads``) the sentences whose leading preamble (or lead naming its source)
was cut (:data:`PREAMBLES`, each trial's ``preamble``),
and (with ``drop_source_remarks``) the sentences skipped as remarks on the sources and the completions of them drawn
again (:data:`REMARKS`, each trial's ``source_remarks``), and (with ``strip_list_markers``) the sentences of a list
read as its items (:data:`LIST_MARKERS`, each trial's ``list_markers``)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator, Sequence

from ..models.usage import UsageMeter
from ..types import Usage

#: the components whose model calls are counted apart
COMPONENTS = ("sentence", "cite", "queries", "verify")
#: what is counted when it goes wrong
PROBLEMS = (
    "unreadable_judgements", "citations_out_of_range", "no_citation", "queries_unreadable", "retrieval_empty",
    "unverified_sentences", "sentence_cap", "repeated_sentence", "judge_errors", "empty_answer",
)  # fmt: skip
#: counted (in ``problems``, after :data:`PROBLEMS`) only by an answer written with the near-repeat rule
#: (``repeat_overlap`` below 1.0): each near repeat the sentence generator's completions held and that was skipped
#: (``vtg_steps.read_sentence``; an exact repeat is not counted here, as it never was), whether a new sentence
#: followed it or the answer ended ``repeated`` (then ``repeated_sentence`` counts the end too). Absent at 1.0, so
#: an answer written by the exact rule alone has the trace it always had.
NEAR_REPEATS = "near_repeated_sentence"
#: counted (in ``problems``, after the above) only by an answer written with ``repeat_retries`` above 0:
#: ``repeat_retries``, the completions that held only repeats while the answer was short of ``min_sentences``
#: and were drawn again (each traced in its trial's ``retries``), and ``short_answer``, an answer that ended (not
#: at ``max_sentences``) with fewer than ``min_sentences`` sentences, whatever ended it (with ``min_sentences`` 1:
#: an empty answer). Absent at 0, so an answer written without retries has the trace it always had.
SHORT_ANSWERS = ("repeat_retries", "short_answer")
#: counted (in ``problems``, after the above; ``short_answer`` too) only by an answer written with ``short_retries``
#: above 0: the completions that would have ended the answer short of ``min_sentences`` otherwise than on repeats
#: and were drawn again, by why they would have ended it (``vtg_steps.read_sentence``'s reason -> the counter;
#: each traced in its trial's ``short_retries``). Absent at 0, so an answer written without them has the trace it
#: always had.
SHORT_RETRY_COUNTS = {"prompt-echo": "prompt_echo_retries", "end-marker": "end_marker_retries", "empty": "empty_retries"}
#: counted (in ``problems``, last) only by an answer written with ``strip_preamble`` or ``strip_source_leads``: the
#: sentences written (trials, the answer's kept ones and the others) whose leading preamble ("Based on the provided
#: search results,") or lead naming its source by its markers ("Document [2] mentions that") was cut, each traced in
#: its trial's ``preamble``. Not a failure: the phrase is not the sentence's claim. Absent without
#: the option, so an answer written before it has the trace it always had.
PREAMBLES = "preamble_stripped"
#: counted (in ``problems``, last) only by an answer written with ``drop_source_remarks``: ``source_remark_dropped``,
#: the sentences the completions held (trials, draws again included) that only remark on the sources ("This
#: information can be found in documents [1], [2], and [5].", ``vtg_remarks.is_source_remark``) and were skipped,
#: each traced as written in its trial's ``source_remarks``; and, with ``short_retries`` above 0 too,
#: ``source_remark_retries``, the completions of nothing else drawn again short of ``min_sentences`` (a
#: ``short_retries`` reason, ``source-remark``). Absent without the option, so an answer written before it has the
#: trace it always had.
REMARKS = ("source_remark_dropped", "source_remark_retries")
#: counted (in ``problems``, last) only by an answer written with ``strip_list_markers``: the sentences of the
#: completions (trials, draws again included) read, up to the one taken, that a list marker, emphasis or a lead-in
#: changed or skipped (``vtg_lists.list_sentences``), each traced in its trial's ``list_markers``. Absent without
#: the option, so an answer written before it has the trace it always had.
LIST_MARKERS = "list_markers_cut"


def usage_dict(u: Usage) -> dict[str, int]:
    """``{prompt_tokens, completion_tokens, calls}``, with ``uncounted_calls`` when some calls' tokens are unknown."""
    return u.to_dict()


@dataclass
class Trial:
    """One attempt at a sentence."""

    trial: int
    sentence: str = ""
    raw: str = ""  # the sentence generator's completion
    cite_raw: str = ""
    citations: list[int] = field(default_factory=list)  # 1-based, in the final document list: the trial's last word
    generated_citations: list[int] = field(default_factory=list)  # the citation generator's (what the generation verifier judged)
    generation_verifier: dict[str, Any] | None = None  # {"entailed", "probability", "status"}
    memory_verifier: dict[str, Any] | None = None  # {"mode", "entailed", "probability", "docs", ...}
    simplifier: dict[str, Any] | None = None  # {"removed": [...], "checks": n}
    queries: list[str] = field(default_factory=list)
    retrieved: dict[str, list[int]] = field(default_factory=dict)  # query -> 1-based documents it brought
    memory: dict[str, int] = field(default_factory=dict)  # sizes when the sentence was written
    outcome: str = ""  # verified-citations | verified-memory | accepted (no verifier) | unverified | retry | end
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)  # component -> usage of this trial
    # near repeats the completions skipped: {"sentence", "repeats" (the written sentence's index), "overlap", "draw"
    # (0: the first completion, r: the r-th retry)}; in the trace only with the near-repeat rule (below 1.0)
    near_repeats: list[dict[str, Any]] = field(default_factory=list)
    # completions that held only repeats, drawn again (short of min_sentences): {"seed", "raw"}, in order; ``raw``
    # above is the draw after the last; in the trace only with repeat_retries above 0
    retries: list[dict[str, Any]] = field(default_factory=list)
    # completions that would have ended the answer short of min_sentences otherwise (a prompt echo, End., empty),
    # drawn again: {"why", "seed", "raw"}, in order; in the trace only with short_retries above 0
    short_retries: list[dict[str, Any]] = field(default_factory=list)
    # the sentence's leading preamble cut (strip_preamble): {"original": the sentence as written, citations removed,
    # "stripped": the phrase}, or its lead naming its source (strip_source_leads): {"original": the sentence as
    # written, "stripped": the lead, or the preamble and the lead after it when both were cut}, both with their
    # markers; or None; in the trace only with either option
    preamble: dict[str, str] | None = None
    # the sentences skipped as remarks on the sources (drop_source_remarks): {"sentence": as written, citations
    # included, "draw": 0 for the first completion, r for the r-th draw again}; in the trace only with the option
    source_remarks: list[dict[str, Any]] = field(default_factory=list)
    # the sentences read (up to the one taken) that a list marker, emphasis or a lead-in changed or skipped
    # (strip_list_markers): {"written": as Punkt cut it, "read": what it became ("" when skipped), "draw"}; in the
    # trace only with the option
    list_markers: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SentenceTrace:
    index: int
    trials: list[Trial] = field(default_factory=list)
    kept: str = ""  # the sentence as it went into the answer, with its citations
    verified: bool = False


class Tracer:
    """Collects an answer's trace; ``meters`` count each component's model calls."""

    def __init__(self, near_repeats: bool = False, retries: bool = False, short_retries: bool = False, preamble: bool = False, remarks: bool = False, lists: bool = False) -> None:
        self.sentences: list[SentenceTrace] = []
        self.meters = {c: UsageMeter() for c in COMPONENTS}
        self.near_repeats, self.retries, self.short_retries, self.preamble, self.remarks, self.lists = near_repeats, retries, short_retries, preamble, remarks, lists
        short = (*(SHORT_ANSWERS if retries else ()), *(("short_answer",) if short_retries and not retries else ()), *(SHORT_RETRY_COUNTS.values() if short_retries else ()))
        remarked = REMARKS if remarks and short_retries else REMARKS[:1] if remarks else ()
        self.problems = {p: 0 for p in (*PROBLEMS, *((NEAR_REPEATS,) if near_repeats else ()), *short, *((PREAMBLES,) if preamble else ()), *remarked, *((LIST_MARKERS,) if lists else ()))}
        self.judge_calls = 0
        self.judge_words = 0  # words of the premises and hypotheses judged (the judge's model tokens: meters["verify"])
        self.end = ""  # end-marker | empty | sentence-cap | repeated | prompt-echo | source-remark
        self.judge_error = ""  # the first failure of a judge call (its pairs: failed judgements), when one failed
        self._mark: dict[str, Usage] = {}
        self.seconds = {c: 0.0 for c in (*COMPONENTS, "retrieval")}  # wall time by component

    @contextlib.contextmanager
    def timed(self, component: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[component] += time.perf_counter() - t0

    def count(self, problem: str, n: int = 1) -> None:
        self.problems[problem] += n

    def mark(self) -> None:
        self._mark = {c: m.usage for c, m in self.meters.items()}

    def since_mark(self) -> dict[str, dict[str, int]]:
        out = {}
        for c, m in self.meters.items():
            u = m.since(self._mark.get(c, Usage()))
            if u.calls:
                out[c] = usage_dict(u)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "sentences": [self._sentence(s) for s in self.sentences],
            "components": {c: usage_dict(m.usage) for c, m in self.meters.items()},
            "judge": {"calls": self.judge_calls, "words": self.judge_words},
            "seconds": {c: round(v, 3) for c, v in self.seconds.items()},
            "problems": dict(self.problems),
            **({"judge_error": self.judge_error} if self.judge_error else {}),
            "end": self.end,
            "trials": sum(len(s.trials) for s in self.sentences),
            "evidence_rounds": sum(1 for s in self.sentences for t in s.trials if t.queries),
        }

    def _sentence(self, s: SentenceTrace) -> dict[str, Any]:
        """A sentence's trace; its trials' ``near_repeats``, ``retries``, ``short_retries``, ``preamble``,
        ``source_remarks`` and ``list_markers`` only under their rules."""
        out = asdict(s)
        for t in out["trials"]:
            if not self.near_repeats:
                del t["near_repeats"]
            if not self.retries:
                del t["retries"]
            if not self.short_retries:
                del t["short_retries"]
            if not self.preamble:
                del t["preamble"]
            if not self.remarks:
                del t["source_remarks"]
            if not self.lists:
                del t["list_markers"]
        return out


#: the counters an answer's trace holds only under their options: a summary sums each that some answer holds
OPTIONAL_PROBLEMS = (NEAR_REPEATS, *SHORT_ANSWERS, *SHORT_RETRY_COUNTS.values(), PREAMBLES, *REMARKS, LIST_MARKERS)


def summarise_traces(traces: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Answers' traces summed: kept and verified sentences, trials, evidence rounds, judge calls, usage by component
    (``verify``: the judge's model calls) and problems (:data:`PROBLEMS`, and each of :data:`OPTIONAL_PROBLEMS`
    that some answer holds)."""
    sentences = [s for t in traces for s in t.get("sentences", []) if s.get("kept")]
    held = [q for q in OPTIONAL_PROBLEMS if any(q in t.get("problems", {}) for t in traces)]
    return {
        "sentences": len(sentences),
        "verified_sentences": sum(1 for s in sentences if s.get("verified")),
        "trials": sum(t.get("trials", 0) for t in traces),
        "evidence_rounds": sum(t.get("evidence_rounds", 0) for t in traces),
        "judge_calls": sum(t.get("judge", {}).get("calls", 0) for t in traces),
        "components": {c: usage_dict(sum((Usage.from_dict((t.get("components") or {}).get(c)) for t in traces), Usage())) for c in COMPONENTS},
        "problems": {p: sum(t.get("problems", {}).get(p, 0) for t in traces) for p in (*PROBLEMS, *held)},
    }
