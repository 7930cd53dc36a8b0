"""One answer as the report shows it: the text with each citation coloured by its status, the per-sample scores,
the judgements, and the evidence the model was given.

What a citation means depends on its kind, so each kind has a renderer (``RENDERERS``, looked up by the
citation's ``kind``): it colours a resolved citation, words a status, labels a citation inside a bracket of
several, and shows the sample's evidence of its kind. Triples (KaLMA's ``[entity, property: value]``) are the
renderer of today's runs and the one used for a citation without a known kind; ``[NA]`` is a marker any format
may use and is drawn the same everywhere. A new citation format adds a renderer with ``register_renderer``.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from ..normalise import triple_key
from ..types import judgement_label
from .format import clip, esc, fmt
from .passages import PassageRenderer, citations_of

MAX_JUDGEMENTS_PER_SAMPLE = 200
MAX_KNOWLEDGE_PER_SAMPLE = 200

SAMPLE_FLAGS = [
    ("incorrect", "has an incorrect citation (not in the given knowledge)"),
    ("bad", "has an unresolved or malformed citation"),
    ("na", "has [NA]"),
    ("nocite", "has no citation"),
    ("judge", "has an unparseable or failed judgement"),
    ("unparsed", "output not parsed"),
]

FLAG_BADGES = [
    ("incorrect", "incorrect citation"),
    ("bad", "unresolved citation"),
    ("na", "[NA]"),
    ("nocite", "no citation"),
    ("judge", "judge problem"),
    ("unparsed", "not parsed"),
]

# the flag a citation's css class gives its sample (anything else: "bad")
CLASS_FLAGS = {
    "cite-correct": "ok", "cite-incorrect": "incorrect", "cite-na": "na", "cite-passage": "ok",
    "cite-unsupported": "incorrect", "cite-unused": "ok",
}  # fmt: skip

NA_CLASS = ("cite-na", "[NA]: the model says the knowledge given does not support this sentence")


class CitationRenderer(Protocol):
    """How the report shows one kind of citation."""

    def prepare(self, sample: Mapping[str, Any]) -> Any:
        """What ``classify`` needs from the sample, computed once per sample (e.g. the keys of the knowledge given)."""

    def classify(self, c: Mapping[str, Any], prepared: Any) -> tuple[str, str]:
        """(css class, tooltip) of a citation whose status is ok."""

    def status_text(self, status: str) -> str:
        """The tooltip of a citation that did not resolve (status not ok)."""

    def label(self, c: Mapping[str, Any], first: bool) -> str:
        """The citation's text inside a bracket of several (``first``: the first citation of the bracket)."""

    def evidence_html(self, sample: Mapping[str, Any]) -> str:
        """The sample's evidence of this kind (collapsible), or "" when it has none."""


# --------------------------------------------------------------------------- triples (KaLMA)

Key = tuple[str, str, str]

# how the knowledge-graph parser words a citation it could not resolve
KG_STATUSES = {
    "unknown_entity": "unknown_entity: the cited entity is not in the graph",
    "no_property": "no_property: the citation names no property",
    "no_value": "no_value: the citation gives no value",
    "malformed": "malformed: the bracket could not be read as a citation",
}


def _triple_key(subject: Any, prop: Any, value: Any) -> Key:
    """``normalise.triple_key`` of a triple or citation read from a file, whatever its fields hold."""
    return triple_key(str(subject), str(prop), str(value))


class TripleRenderer:
    """``[entity, property: value]`` citations against the sample's ``knowledge`` triples: correct (green) when
    the cited triple is in the knowledge given, incorrect (orange) when it is not."""

    def prepare(self, sample: Mapping[str, Any]) -> set[Key]:
        keys = set()
        for t in sample.get("knowledge") or []:
            if isinstance(t, Mapping) and all(isinstance(t.get(k), str) for k in ("subject", "property", "value")):
                keys.add(_triple_key(t["subject"], t["property"], t["value"]))
        return keys

    def classify(self, c: Mapping[str, Any], prepared: set[Key]) -> tuple[str, str]:
        e, p, v = c.get("entity"), c.get("property"), c.get("value")
        if all(isinstance(s, str) for s in (e, p, v)):
            key = _triple_key(e, p, v)
            if key in prepared:
                return "cite-correct", f"correct: ({key[0]}, {key[1]}, {key[2]}) is in the knowledge given"
            return "cite-incorrect", f"incorrect: ({key[0]}, {key[1]}, {key[2]}) is not in the knowledge given for this question"
        return "cite-bad st-malformed", "ok status but incomplete citation"

    def status_text(self, status: str) -> str:
        return KG_STATUSES.get(status, f"{status}: unknown status")

    def label(self, c: Mapping[str, Any], first: bool) -> str:
        parts = []
        if first and c.get("entity"):
            parts.append(str(c.get("entity")))
        if c.get("property") is not None or c.get("value") is not None:
            parts.append(f"{c.get('property') or ''}: {c.get('value') or ''}".strip())
        return ", ".join(parts) if parts else "?"

    def evidence_html(self, sample: Mapping[str, Any]) -> str:
        knowledge = sample.get("knowledge")
        if not isinstance(knowledge, list) or not knowledge:
            return ""
        gold = {
            _triple_key(t.get("subject", ""), t.get("property", ""), t.get("value", ""))
            for t in sample.get("gold") or []
            if isinstance(t, Mapping)
        }
        cited = _cited_keys(sample)
        rows = []
        for t in knowledge[:MAX_KNOWLEDGE_PER_SAMPLE]:
            if not isinstance(t, Mapping):
                continue
            key = _triple_key(t.get("subject", ""), t.get("property", ""), t.get("value", ""))
            mark = ('<span class="tag">gold</span> ' if key in gold else "") + ('<span class="tag tag-cited">cited</span>' if key in cited else "")
            label = f' <span class="muted">{esc(t.get("subject_label"))}</span>' if t.get("subject_label") else ""
            rows.append(f"<tr><td><code>{esc(t.get('subject'))}</code>{label}</td><td>{esc(t.get('property'))}</td><td>{esc(t.get('value'))}</td><td>{mark}</td></tr>")
        more = f'<p class="muted">first {MAX_KNOWLEDGE_PER_SAMPLE} of {len(knowledge):,}</p>' if len(knowledge) > MAX_KNOWLEDGE_PER_SAMPLE else ""
        absent = [t for t in sample.get("absent") or [] if isinstance(t, Mapping)]
        absent_html = ""
        if absent:
            items = "".join(f"<li><code>{esc(t.get('subject'))}</code> {esc(t.get('property'))}: {esc(t.get('value'))}</li>" for t in absent)
            absent_html = f'<p class="sub">removed (absent) knowledge</p><ul class="absent">{items}</ul>'
        return (
            f'<details class="knowledge"><summary>knowledge given ({len(knowledge):,} triples)</summary>'
            '<table class="grid-table small"><thead><tr><th>entity</th><th>property</th><th>value</th><th></th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>{more}{absent_html}</details>'
        )


def _cited_keys(sample: Mapping[str, Any]) -> set[Key]:
    triples = (c for c in citations_of(sample) if all(isinstance(c.get(k), str) for k in ("entity", "property", "value")))
    return {_triple_key(c["entity"], c["property"], c["value"]) for c in triples}


# --------------------------------------------------------------------------- dispatch

RENDERERS: dict[str, CitationRenderer] = {"triple": TripleRenderer(), "passage": PassageRenderer()}
DEFAULT_KIND = "triple"  # a citation with no kind, or one no renderer knows, reads as a triple (as runs write them)


def register_renderer(kind: str, renderer: CitationRenderer) -> None:
    RENDERERS[kind] = renderer


def renderer_for(kind: Any) -> CitationRenderer:
    return RENDERERS.get(str(kind), RENDERERS[DEFAULT_KIND])


class _Prepared:
    """Each renderer's per-sample state, computed when a citation of its kind first needs it."""

    def __init__(self, sample: Mapping[str, Any]) -> None:
        self.sample = sample
        self._done: dict[int, Any] = {}

    def of(self, renderer: CitationRenderer) -> Any:
        if id(renderer) not in self._done:
            self._done[id(renderer)] = renderer.prepare(self.sample)
        return self._done[id(renderer)]


def citation_class(c: Mapping[str, Any], prepared: _Prepared) -> tuple[str, str]:
    """(css class, tooltip) of one citation: correct (green), incorrect (orange), unresolved (red), [NA], passage."""
    kind = c.get("kind")
    if kind == "na":
        return NA_CLASS
    renderer = renderer_for(kind)
    status = str(c.get("status") or "ok")
    if status == "ok":
        return renderer.classify(c, prepared.of(renderer))
    why = renderer.status_text(status)
    return f"cite-bad st-{''.join(ch if ch.isalnum() or ch == '_' else '-' for ch in status)}", why


def _render_group(group: Sequence[Mapping[str, Any]], raw: str, prepared: _Prepared, flags: set[str]) -> str:
    """One bracket of the answer: its citations, each coloured by status; ``[NA]`` as a badge."""
    spans = []
    for c in group:
        cls, tip = citation_class(c, prepared)
        flags.add(CLASS_FLAGS.get(cls, "bad"))
        spans.append((c, cls, tip))
    if len(spans) == 1:
        c, cls, tip = spans[0]
        if cls == "cite-na":
            return f'<span class="cite cite-na" title="{esc(tip)}" data-status="na">NA</span>'
        return f'<span class="cite {cls}" title="{esc(tip)}" data-status="{esc(c.get("status") or "ok")}">{esc(raw)}</span>'
    inner = []
    for i, (c, cls, tip) in enumerate(spans):
        text = "NA" if cls == "cite-na" else renderer_for(c.get("kind")).label(c, i == 0)
        inner.append(f'<span class="cite {cls}" title="{esc(tip)}" data-status="{esc(c.get("status") or "ok")}">{esc(text)}</span>')
    return f'<span class="cite-group" title="{esc(raw)}">[{", ".join(inner)}]</span>'


def _groups_by_span(cits: list[Mapping[str, Any]], raw: str) -> list[tuple[int, int, list[Mapping[str, Any]]]] | None:
    """Citations grouped by bracket when every span points at its bracket in ``raw``; None otherwise."""
    groups: dict[tuple[int, int], list[Mapping[str, Any]]] = {}
    for c in cits:
        span = c.get("span")
        if not (isinstance(span, list) and len(span) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in span)):
            return None
        s, e = span
        if s < 0 or e > len(raw) or e <= s or raw[s:e] != c.get("raw"):
            return None
        groups.setdefault((s, e), []).append(c)
    ordered = sorted(groups.items())
    pos = 0
    for (s, e), _ in ordered:
        if s < pos:
            return None
        pos = e
    return [(s, e, g) for (s, e), g in ordered]


def render_answer_html(sample: Mapping[str, Any], flags: set[str]) -> str:
    prepared = _Prepared(sample)
    answer = sample.get("answer")
    output = sample.get("output")
    sentences = answer.get("sentences") if isinstance(answer, Mapping) else None
    if not isinstance(sentences, list):
        flags.add("unparsed")
        text = output if output is not None else (answer.get("raw") if isinstance(answer, Mapping) else None)
        if text is None:
            return '<div class="answer muted">no output</div>'
        return f'<div class="answer unparsed" title="not parsed">{esc(text)}</div>'
    sentences = [s for s in sentences if isinstance(s, Mapping)]
    cits = [c for s in sentences for c in (s.get("citations") or []) if isinstance(c, Mapping)]
    if not any(c.get("kind") != "na" for c in cits):
        flags.add("nocite")
    raw = answer.get("raw") if isinstance(answer.get("raw"), str) else (output if isinstance(output, str) else "")
    groups = _groups_by_span(cits, raw)
    out: list[str] = []
    if groups is not None:
        pos = 0
        for s, e, g in groups:
            out.append(esc(raw[pos:s]))
            out.append(_render_group(g, raw[s:e], prepared, flags))
            pos = e
        out.append(esc(raw[pos:]))
        return f'<div class="answer">{"".join(out)}</div>'
    # spans missing or not matching: place each sentence's brackets by searching its text
    for si, s in enumerate(sentences):
        text = str(s.get("text") or "")
        scits = [c for c in (s.get("citations") or []) if isinstance(c, Mapping)]
        pos = 0
        i = 0
        while i < len(scits):
            c = scits[i]
            group = [c]
            while i + len(group) < len(scits) and scits[i + len(group)].get("raw") == c.get("raw") and scits[i + len(group)].get("span") == c.get("span"):
                group.append(scits[i + len(group)])
            i += len(group)
            braw = str(c.get("raw") or "")
            at = text.find(braw, pos) if braw else -1
            if at < 0:
                out.append(esc(text[pos:]) + " ")
                pos = len(text)
                out.append(_render_group(group, braw or "[?]", prepared, flags))
                continue
            out.append(esc(text[pos:at]))
            out.append(_render_group(group, braw, prepared, flags))
            pos = at + len(braw)
        out.append(esc(text[pos:]))
        if si < len(sentences) - 1:
            out.append(" ")
    return f'<div class="answer">{"".join(out)}</div>'


# --------------------------------------------------------------------------- the rest of a sample


def _scores_html(scores: Any) -> str:
    if not isinstance(scores, Mapping) or not scores:
        return ""
    def cell(k: Any, v: Any) -> str:
        if isinstance(v, Mapping):  # a family's scores (ALCE's, G-Eval's): its numbers; per-sentence rows are drawn on the answer
            return "".join(cell(f"{k}.{kk}", vv) for kk, vv in v.items() if not isinstance(vv, (list, Mapping)))
        return f'<span class="score"><b>{esc(k)}</b> {fmt(v)}</span>'

    cells = "".join(cell(k, v) for k, v in scores.items())
    bars = "".join(shares_html(k, v) for k, v in scores.items() if isinstance(v, Mapping))
    return f'<div class="scores"><span class="sub">scores</span>{cells}</div>{bars}'


#: how many segments a shares bar colours apart (then the colours repeat)
SHARE_COLOURS = 5


def shares_html(name: Any, entry: Mapping[str, Any]) -> str:
    """A family's per-answer ``shares`` (a share per class, with their ``counts`` and ``pairs``; the four-class
    diagnosis writes them) as one stacked bar with its legend; "" when the entry has none or they are all null."""
    shares = entry.get("shares")
    if not isinstance(shares, Mapping):
        return ""
    counts = entry.get("counts") if isinstance(entry.get("counts"), Mapping) else {}
    values = [(str(k), v) for k, v in shares.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not values:
        return f'<div class="shares"><span class="sub">{esc(name)}</span> <span class="muted">no pair judged</span></div>'
    segs, legend = [], []
    for i, (k, v) in enumerate(values):
        n = counts.get(k)
        label = f"{k}: {v:.0%}" + (f" ({n})" if isinstance(n, int) else "")
        if v > 0:
            segs.append(f'<span class="share share-{i % SHARE_COLOURS}" style="width:{100 * v:.2f}%" title="{esc(label)}"></span>')
        legend.append(f'<span class="share-key"><i class="share-{i % SHARE_COLOURS}"></i>{esc(label)}</span>')
    pairs = entry.get("pairs")
    what = f" of {pairs} (sentence, citation) pairs" if isinstance(pairs, int) else ""
    return (
        f'<div class="shares"><span class="sub">{esc(name)}{esc(what)}</span>'
        f'<div class="share-bar">{"".join(segs)}</div><div class="share-legend">{"".join(legend)}</div></div>'
    )


def _judgements_html(judgements: Any, flags: set[str]) -> str:
    if not isinstance(judgements, list) or not judgements:
        return ""
    rows = []
    for j in judgements[:MAX_JUDGEMENTS_PER_SAMPLE]:
        if not isinstance(j, Mapping):
            continue
        status = str(j.get("status") or "ok")
        if status != "ok":
            flags.add("judge")
        cls = "" if status == "ok" else "warn"
        raw = j.get("raw")
        rows.append(
            f'<tr><td><code>{esc(j.get("judge"))}</code></td><td>{esc(j.get("purpose") or "")}</td>'
            f'<td>{esc(j.get("claim"))}</td><td class="evidence">{esc(clip(j.get("evidence"), 400))}</td>'
            f'<td class="num">{fmt(j.get("probability"))}</td><td>{esc(judgement_label(j.get("label")) if j.get("label") is not None else "—")}</td>'
            f'<td class="{cls}" title="{esc(clip(raw, 300)) if raw else ""}">{esc(status)}</td></tr>'
        )
    more = ""
    if len(judgements) > MAX_JUDGEMENTS_PER_SAMPLE:
        more = f'<p class="muted">first {MAX_JUDGEMENTS_PER_SAMPLE} of {len(judgements):,} judgements</p>'
    return (
        f'<details class="judgements"><summary>judgements ({len(judgements):,})</summary><table class="grid-table small">'
        "<thead><tr><th>judge</th><th>purpose</th><th>claim</th><th>evidence</th><th>P(supported)</th><th>label</th>"
        f'<th>status</th></tr></thead><tbody>{"".join(rows)}</tbody></table>{more}</details>'
    )


def evidence_html(sample: Mapping[str, Any]) -> str:
    """The sample's evidence as each citation kind shows it (today: the knowledge triples)."""
    seen: set[int] = set()
    parts = []
    for r in RENDERERS.values():
        if id(r) not in seen:
            seen.add(id(r))
            parts.append(r.evidence_html(sample))
    return "".join(parts)


def sample_html(index: int, sample: Mapping[str, Any]) -> str:
    flags: set[str] = set()
    answer = render_answer_html(sample, flags)
    judgements = _judgements_html(sample.get("judgements"), flags)
    flags.discard("ok")
    sid = sample.get("id", index)
    badges = "".join(f'<span class="flag flag-{f}">{esc(text)}</span>' for f, text in FLAG_BADGES if f in flags)
    question = sample.get("question")
    full_q = "" if len(str(question or "")) <= 160 else (
        f'<p class="question"><span class="sub">question</span> {esc(question)}</p>'
    )
    error = f'<p class="warn">error: {esc(sample.get("error"))}</p>' if sample.get("error") else ""
    return (
        f'<details class="sample" id="sample-{index}" data-flags="{" ".join(sorted(flags))}"{" open" if index == 1 else ""}>'
        f'<summary><span class="sid">{esc(clip(sid, 40))}</span> <span class="q">{esc(clip(question, 160))}</span>{badges}</summary>'
        f'<div class="sample-body">{full_q}'
        f"{answer}{error}{_scores_html(sample.get('scores'))}{judgements}{evidence_html(sample)}</div></details>"
    )
