"""What VTG's traces say (issue 12: "which component fails most (the trace says)"), summed over a run folder's
answers: how each kept sentence was verified, the trials and evidence rounds it took, the verifiers' rejections,
what went wrong by component (the trace's ``problems``, ``generate/vtg_trace.py``), the repeats apart (not a
component's failure: :data:`REPEATS`), the answers the sentence cap ended apart (a limit, not a failure:
:data:`LIMITS`) and the tokens per question by component; for answers written with
``short_retries``, ``strip_preamble``, ``drop_source_remarks`` or ``strip_list_markers``, columns of their own
(:data:`DRAWN_AGAIN`, the preambles cut, the remarks on the sources dropped, the list sentences cut, the answers'
ends, :data:`ENDS`), none for a folder without them. :class:`VtgTraces` gathers it one record at a time (the report page reads samples.jsonl once);
:func:`vtg_trace_section` is the page's section, a row per folder (an experiment: one per level, from
``level-<x>/samples.jsonl``, each read once for this and the token figure: ``runs.cost.read_samples``);
:func:`summary_markdown` the same table as Markdown, for the results docs (``scripts/vtg_trace.py``)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import jsonl
from ..errors import DataError
from ..generate.vtg_trace import LIST_MARKERS, PREAMBLES, REMARKS, SHORT_RETRY_COUNTS
from ..runs.cost import SamplesFile, read_samples
from .format import esc, fmt, fmt_level
from .sections import section

#: how a kept sentence's last trial ended, in the order shown (``generate/vtg_trace.Trial.outcome``)
OUTCOMES = ("verified-citations", "verified-memory", "accepted", "unverified")
#: what went wrong, by the component it is the failure of (the trace's ``problems`` counters); repeats are not
#: here (:data:`REPEATS`), nor the sentence cap (:data:`LIMITS`)
FAILURES: dict[str, tuple[str, ...]] = {
    "citation generator": ("citations_out_of_range", "no_citation"),
    "evidence finder": ("queries_unreadable", "retrieval_empty"),
    "judge": ("unreadable_judgements", "judge_errors"),
    "sentence generator": ("empty_answer", "short_answer"),
}
#: the limits an answer reached, counted on their own and not in "fails most": ``sentence_cap``, an answer ended at
#: ``max_sentences`` (the trace's counter, its name kept), a guard on the answer's length that the sentence generator
#: did nothing wrong to reach. Shown in a column of their own.
LIMITS = ("sentence_cap",)
#: the sentence generator's repeats, counted on their own and not in "fails most": a repeat is skipped (the next
#: sentence taken) or drawn again, or ends an answer that may be complete; one that leaves the answer short of
#: ``min_sentences`` is counted by ``short_answer`` (with ``repeat_retries`` or ``short_retries`` above 0), a
#: failure. Shown as answers ended on repeats / near repeats skipped / completions of repeats drawn again.
REPEATS = ("repeated_sentence", "near_repeated_sentence", "repeat_retries")
#: the completions drawn again short of ``min_sentences``, by why (a repeat, a prompt echo, ``End.`` unasked, an
#: empty completion, only remarks on the sources): the trace's counters, each only in an answer written with its
#: option (``repeat_retries``; ``short_retries``; ``drop_source_remarks`` and ``short_retries``). Not failures, as
#: a repeat drawn again is not; shown in a column of their own when a folder's answers hold one of the last four
#: (a folder with ``repeat_retries`` alone has them in :data:`REPEATS`'s column).
DRAWN_AGAIN = ("repeat_retries", *SHORT_RETRY_COUNTS.values(), REMARKS[1])
#: the sentences skipped as only remarks on the sources (``drop_source_remarks``): not a failure, as a near repeat
#: skipped is not (not in "fails most"); an answer they leave short of ``min_sentences`` is counted by
#: ``short_answer``, the sentence generator's failure
REMARKS_DROPPED = REMARKS[0]
#: why the answers ended, in the order shown (``generate/vtg_trace.Tracer.end``), any other after them
ENDS = ("end-marker", "empty", "repeated", "prompt-echo", "source-remark", "sentence-cap")


class VtgTraces:
    """The VTG traces of one folder's answers (records without a ``vtg`` trace are not counted)."""

    def __init__(self) -> None:
        self.answers = 0
        self.sentences = 0
        self.trials = 0  # trials of kept sentences, the end marker's not counted
        self.evidence_rounds = 0
        self.outcomes: dict[str, int] = {}
        self.rejected = {"generation verifier": 0, "memory verifier": 0}  # trials each verifier judged not entailed
        self.simplified = 0  # citations the simplifier removed
        self.problems: dict[str, int] = {}
        self.tokens: list[int] = []  # prompt + completion tokens per answer
        self.component_tokens: dict[str, int] = {}
        self.ends: dict[str, int] = {}

    def add(self, record: Any) -> None:
        trace = record.get("vtg") if isinstance(record, Mapping) else None
        if not isinstance(trace, Mapping):
            return
        self.answers += 1
        self.evidence_rounds += _int(trace.get("evidence_rounds"))
        end = trace.get("end")
        if end:
            self.ends[str(end)] = self.ends.get(str(end), 0) + 1
        for name, count in (trace.get("problems") or {}).items():
            self.problems[str(name)] = self.problems.get(str(name), 0) + _int(count)
        total = 0
        for component, usage in (trace.get("components") or {}).items():
            if isinstance(usage, Mapping):
                n = _int(usage.get("prompt_tokens")) + _int(usage.get("completion_tokens"))
                self.component_tokens[str(component)] = self.component_tokens.get(str(component), 0) + n
                total += n
        self.tokens.append(total)
        for sentence in trace.get("sentences") or []:
            trials = [t for t in (sentence.get("trials") or []) if isinstance(t, Mapping) and t.get("outcome") != "end"]
            if not trials:
                continue
            self.sentences += 1
            self.trials += len(trials)
            outcome = str(trials[-1].get("outcome") or "unverified")
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            for t in trials:
                for verifier, key in (("generation verifier", "generation_verifier"), ("memory verifier", "memory_verifier")):
                    verdict = t.get(key)
                    if isinstance(verdict, Mapping) and verdict.get("entailed") is False:
                        self.rejected[verifier] += 1
                simplifier = t.get("simplifier")
                if isinstance(simplifier, Mapping):
                    self.simplified += len(simplifier.get("removed") or [])

    def __bool__(self) -> bool:
        return self.answers > 0

    def failures(self) -> dict[str, int]:
        """Component -> how many times it failed (:data:`FAILURES`), most first."""
        counts = {c: sum(self.problems.get(p, 0) for p in names) for c, names in FAILURES.items()}
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    def summary(self) -> dict[str, Any]:
        """The figures of one row, as plain numbers (None where there is nothing to divide by)."""
        n, s = self.answers, self.sentences
        failures = self.failures()
        worst = next(iter(failures.items()), ("", 0))
        return {
            "answers": n,
            "sentences_per_answer": s / n if n else None,
            "outcomes": {o: (self.outcomes.get(o, 0) / s if s else None) for o in OUTCOMES},
            "trials_per_sentence": self.trials / s if s else None,
            "evidence_rounds_per_answer": self.evidence_rounds / n if n else None,
            "rejected": dict(self.rejected),
            "simplified_citations": self.simplified,
            "failures": failures,
            "fails_most": worst[0] if worst[1] > 0 else None,
            "repeats": {p: self.problems.get(p, 0) for p in REPEATS},
            "limits": {p: self.problems.get(p, 0) for p in LIMITS},
            "problems": {k: v for k, v in self.problems.items() if v},
            "tokens_per_answer_median": statistics.median(self.tokens) if self.tokens else None,
            "component_tokens_per_answer": {k: v / n for k, v in self.component_tokens.items()} if n else {},
            "ends": dict(self.ends),
            # only the counters of the options some answer was written with (a counter absent from every trace:
            # left out of drawn_again, None for the preambles and the remarks)
            "drawn_again": {p: self.problems[p] for p in DRAWN_AGAIN if p in self.problems},
            "preambles_cut": self.problems.get(PREAMBLES),
            "remarks_dropped": self.problems.get(REMARKS_DROPPED),
            "lists_cut": self.problems.get(LIST_MARKERS),
        }


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def traces_of(samples: SamplesFile) -> VtgTraces:
    """The traces of a folder's samples.jsonl, read by ``runs.cost.read_samples`` (unreadable lines skipped, as the
    page skips them; no file: none; a failed read: one line, :class:`DataError`)."""
    if samples.error is not None:
        raise DataError(f"{samples.path}: cannot read: {samples.error.strerror or samples.error}")
    traces = VtgTraces()
    if samples.data is not None:
        for record in jsonl.read_appended(samples.path, jsonl.ReadStats(), errors="replace", data=samples.data):
            traces.add(record)
    return traces


def level_traces(run_dir: Path, experiments: Mapping[str, Any], *,
                 read: Callable[[Path], SamplesFile] = read_samples) -> list[tuple[str, VtgTraces]]:  # fmt: skip
    """(label, traces) for each level of each experiment whose folder ``level-<x>`` holds VTG answers. ``read``:
    how a level's samples.jsonl is read (the report page's reads each once, for this and its token figure)."""
    rows = []
    for name, exp in experiments.items():
        for row in (exp.get("rows") or []) if isinstance(exp, Mapping) else []:
            level = row.get("level") if isinstance(row, Mapping) else None
            traces = traces_of(read(run_dir / f"level-{level}"))
            if traces:
                rows.append((f"{name} = {fmt_level(level)}", traces))
    return rows


COLUMNS = ("answers", "sentences / answer", "verified by citations", "by memory", "unverified", "trials / sentence",
           "evidence rounds / answer", "rejected (gen. / mem. verifier)", "citations simplified away",
           "fails most (repeats apart)", "repeats (ended / near skipped / drawn again)", "answers at the sentence cap",
           "median tokens / answer")  # fmt: skip
#: the columns of the newer options, after the repeats' column, each shown only when a row has its counters
#: (:func:`_newer_columns`)
DRAWN_AGAIN_COLUMN = "drawn again (repeat / prompt echo / early End. / empty / source remark)"
PREAMBLES_COLUMN, REMARKS_COLUMN, LISTS_COLUMN, ENDS_COLUMN = "preambles cut", "source remarks dropped", "list sentences cut", "answers' ends"
#: a newer column's counter in a row's summary (None: the row's answers were written without the option)
_COUNTED = {PREAMBLES_COLUMN: "preambles_cut", REMARKS_COLUMN: "remarks_dropped", LISTS_COLUMN: "lists_cut"}


def _newer_columns(summaries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The newer options' columns the rows call for: the draws again by why when a row was written with
    ``short_retries`` (or the remarks' draws again), the preambles cut with ``strip_preamble`` (or ``strip_source_leads``), the remarks dropped
    with ``drop_source_remarks``, the list sentences cut with ``strip_list_markers``, and then the answers' ends; none
    for rows written before these options."""
    columns = [
        *([DRAWN_AGAIN_COLUMN] if any(set(s["drawn_again"]) - {DRAWN_AGAIN[0]} for s in summaries) else []),
        *(c for c, key in _COUNTED.items() if any(s.get(key) is not None for s in summaries)),
    ]
    return columns + [ENDS_COLUMN] if columns else []


def _newer_cell(column: str, s: Mapping[str, Any]) -> str:
    """A row's cell of a newer column; a dash where the row's answers were written without the option."""
    if column == DRAWN_AGAIN_COLUMN:
        return " / ".join(str(s["drawn_again"][p]) if p in s["drawn_again"] else "—" for p in DRAWN_AGAIN)
    if column in _COUNTED:
        value = s.get(_COUNTED[column])
        return "—" if value is None else str(value)
    ends = sorted(s["ends"].items(), key=lambda kv: (ENDS.index(kv[0]) if kv[0] in ENDS else len(ENDS), kv[0]))
    return ", ".join(f"{k} {v}" for k, v in ends) or "—"


def _head(newer: Sequence[str]) -> list[str]:
    return [*COLUMNS[:-1], *newer, COLUMNS[-1]]


def _cells(s: Mapping[str, Any], newer: Sequence[str] = ()) -> list[str]:
    o = s["outcomes"]
    fails = s["failures"].get(s["fails_most"], 0) if s["fails_most"] else 0
    return [
        str(s["answers"]), fmt(s["sentences_per_answer"], 2), _share(o["verified-citations"]), _share(o["verified-memory"]),
        _share(o["unverified"]), fmt(s["trials_per_sentence"], 2), fmt(s["evidence_rounds_per_answer"], 2),
        f'{s["rejected"]["generation verifier"]} / {s["rejected"]["memory verifier"]}', str(s["simplified_citations"]),
        f'{s["fails_most"]} ({fails})' if s["fails_most"] else "nothing", " / ".join(str(s["repeats"][p]) for p in REPEATS),
        str(s["limits"]["sentence_cap"]),
        *(_newer_cell(c, s) for c in newer), fmt(s["tokens_per_answer_median"], 0),
    ]  # fmt: skip


#: what the newer columns count, said under the table when it has them (the page's note, the Markdown's last line)
NEWER_NOTE = (
    "Answers written with short_retries, strip_preamble (or strip_source_leads), drop_source_remarks or strip_list_markers have columns of their own: the "
    "completions drawn again short of min_sentences, by why (a repeat, a prompt echo, End. before it was offered, "
    "an empty completion, only remarks on the sources), the sentences whose leading preamble (or source lead) was cut, the "
    "sentences dropped as only remarks on the sources, the sentences of a list whose marker was cut or which were skipped (a bare "
    '"2.", a lead-in), and why the answers ended. None of these is counted in '
    '"fails most": a remark on the sources is skipped or drawn again as a repeat is, and a preamble cut is not the '
    "sentence's claim; an answer they left short of min_sentences (one ended by source-remark too) is the sentence "
    "generator's failure, short of min_sentences. A dash: the row's answers were written without that option."
)


def _share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def summary_markdown(rows: Sequence[tuple[str, VtgTraces]]) -> str:
    """The rows as a Markdown table, then each row's problems and tokens by component, and (with the newer
    columns) :data:`NEWER_NOTE`."""
    summaries = [(label, traces.summary()) for label, traces in rows]
    newer = _newer_columns([s for _, s in summaries])
    columns = _head(newer)
    out = ["| folder | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    notes = []
    for label, s in summaries:
        out.append(f"| {label} | " + " | ".join(_cells(s, newer)) + " |")
        problems = ", ".join(f"{k} {v}" for k, v in sorted(s["problems"].items())) or "none"
        tokens = ", ".join(f"{k} {v:.0f}" for k, v in s["component_tokens_per_answer"].items())
        notes.append(f"- {label}: problems {problems}; tokens per answer by component: {tokens}")
    return "\n".join(out + [""] + notes + (["", NEWER_NOTE] if newer else [])) + "\n"


def vtg_trace_section(rows: Iterable[tuple[str, VtgTraces]]) -> str:
    """The page's section, "" when no folder holds VTG answers."""
    rows = list(rows)
    if not rows:
        return ""
    summaries = [(label, traces.summary()) for label, traces in rows]
    newer = _newer_columns([s for _, s in summaries])
    head = "<tr><th>folder</th>" + "".join(f"<th>{esc(c)}</th>" for c in _head(newer)) + "<th>problems</th></tr>"
    body = []
    for label, s in summaries:
        problems = ", ".join(f"{k} {v}" for k, v in sorted(s["problems"].items())) or "none"
        body.append(f"<tr><td>{esc(label)}</td>" + "".join(f"<td>{esc(c)}</td>" for c in _cells(s, newer)) + f"<td>{esc(problems)}</td></tr>")
    note = ('<p class="muted">From each answer\'s trace: how each kept sentence was verified (its last trial), the '
            "trials it took, the trials each verifier judged not entailed, and what went wrong, by the component it "
            "is the failure of (citation generator: citations out of range or none; evidence finder: queries "
            "unreadable or nothing retrieved; judge: unreadable or failed; sentence generator: an answer empty or "
            "short of min_sentences). Repeats are not counted there: a repeat is skipped or drawn again, or ends an "
            "answer that may be complete; their column counts the answers ended on repeats, the near repeats "
            "skipped and the completions of repeats drawn again, and one that left an answer short of "
            "min_sentences is that answer's failure, short of min_sentences. Nor is the sentence cap: an answer "
            "that reached max_sentences was ended by a limit, not by a failure; its column counts those answers.")  # fmt: skip
    note += f" {esc(NEWER_NOTE)}</p>" if newer else "</p>"
    return section("vtg-trace", "VTG trace", note + f'<table class="metrics">{head}{"".join(body)}</table>')
