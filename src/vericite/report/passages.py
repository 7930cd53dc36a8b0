"""How the report shows passage citations (``[1][2]``, ALCE): coloured by the judge's verdict, with the documents
given beside the answer. Registered in ``report/answers.py`` as the renderer of citations of kind ``passage``."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from .format import clip, esc

PASSAGE_STATUSES = {
    "unknown_source": "out of range: no document of that number was given (the sentence counts as unsupported)",
    "unknown_entity": "out of range: no document of that number was given",
    "malformed": "malformed: the bracket holds no document number (ALCE does not read it)",
}
MAX_PASSAGES_PER_SAMPLE = 20
Span = tuple[int, int]


class PassageRenderer:
    """``[1]``-style citations of the documents given with the question (ALCE), coloured by the judge's verdict
    where the sample's scores hold one (``scores.alce.sentences``: per sentence whether its citations entail it and,
    per citation used, whether it is needed): green when the sentence is entailed and the citation needed, orange
    when entailed but not needed (the others entail it without), red when the sentence is not entailed; grey past
    the citations ALCE uses (the first 3). Without verdicts (no judge) a citation shows its document. The
    documents given are listed beside the answer, the cited ones marked."""

    def prepare(self, sample: Mapping[str, Any]) -> dict[Span, tuple[str, str]]:
        passages = [p for p in sample.get("passages") or [] if isinstance(p, Mapping)]

        def title(n: Any) -> str:
            if isinstance(n, int) and 1 <= n <= len(passages):
                return f"document [{n}]: {clip(passages[n - 1].get('title') or passages[n - 1].get('text'), 80)}"
            return f"document [{n}]"

        answer = sample.get("answer")
        sents = answer.get("sentences") if isinstance(answer, Mapping) else None
        scores = sample.get("scores")
        alce = scores.get("alce") if isinstance(scores, Mapping) else None
        rows = alce.get("sentences") if isinstance(alce, Mapping) else None
        out: dict[Span, tuple[str, str]] = {}
        for k, sent in enumerate(sents if isinstance(sents, list) else []):
            cits = [c for c in (sent.get("citations") or []) if isinstance(c, Mapping)] if isinstance(sent, Mapping) else []
            markers = [c for c in cits if c.get("kind") == "passage" and c.get("passage") is not None]
            row = rows[k] if isinstance(rows, list) and k < len(rows) and isinstance(rows[k], Mapping) else None
            used = [u for u in (row.get("citations") or []) if isinstance(u, Mapping)] if row else []
            for pos, c in enumerate(markers):
                span = tuple(c.get("span") or (-1, -1))
                n = c.get("passage")
                if row is None:
                    out[span] = ("cite-passage", title(n))  # type: ignore[index]
                elif row.get("rejected"):
                    out[span] = ("cite-unsupported", f"{title(n)} — the sentence is unsupported: {row['rejected']}")  # type: ignore[index]
                elif pos >= len(used):
                    out[span] = ("cite-unused", f"{title(n)} — not read: ALCE uses a sentence's first {len(used)} citations")  # type: ignore[index]
                elif row.get("entailed") is None or used[pos].get("precise") is None:
                    out[span] = ("cite-passage", f"{title(n)} — no verdict: a judgement failed or could not be read")  # type: ignore[index]
                elif not row.get("entailed"):
                    out[span] = ("cite-unsupported", f"{title(n)} — not entailed: the cited documents do not support the sentence")  # type: ignore[index]
                elif used[pos].get("precise"):
                    out[span] = ("cite-correct", f"{title(n)} — entailed, and this citation is needed")  # type: ignore[index]
                else:
                    out[span] = ("cite-incorrect", f"{title(n)} — entailed, but not needed: the other citations support the sentence without it")  # type: ignore[index]
        return out

    def classify(self, c: Mapping[str, Any], prepared: dict[Span, tuple[str, str]]) -> tuple[str, str]:
        span = tuple(c.get("span") or (-1, -1))
        return prepared.get(span, ("cite-passage", f"document [{c.get('passage')}]"))  # type: ignore[arg-type]

    def status_text(self, status: str) -> str:
        return PASSAGE_STATUSES.get(status, f"{status}: unknown status")

    def label(self, c: Mapping[str, Any], first: bool) -> str:
        return str(c.get("passage") if c.get("passage") is not None else c.get("raw") or "?")

    def evidence_html(self, sample: Mapping[str, Any]) -> str:
        passages = sample.get("passages")
        if not isinstance(passages, list) or not passages:
            return ""
        cited = {n for n in _cited_passages(sample) if 1 <= n <= len(passages)}
        shown = [i for i in range(len(passages)) if i < MAX_PASSAGES_PER_SAMPLE or i + 1 in cited]
        rows = []
        for i in shown:
            p = passages[i]
            if not isinstance(p, Mapping):
                continue
            mark = '<span class="tag tag-cited">cited</span>' if i + 1 in cited else ""
            rows.append(
                f'<tr><td class="num">[{i + 1}]</td><td><b>{esc(p.get("title"))}</b> {mark}'
                f'<div class="passage-text">{esc(clip(p.get("text"), 700))}</div></td></tr>'
            )
        more = f'<p class="muted">{len(shown)} of {len(passages):,} documents (the first {MAX_PASSAGES_PER_SAMPLE} and every cited one)</p>' if len(shown) < len(passages) else ""
        return (
            f'<details class="knowledge passages" open><summary>documents given ({len(passages):,}; {len(cited)} cited)</summary>'
            f'<table class="grid-table small"><tbody>{"".join(rows)}</tbody></table>{more}</details>'
        )


def citations_of(sample: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every citation (a mapping) of a record's answer, whatever its kind; what is malformed is passed over."""
    answer = sample.get("answer")
    if isinstance(answer, Mapping) and isinstance(answer.get("sentences"), list):
        for s in answer["sentences"]:
            for c in (s.get("citations") or []) if isinstance(s, Mapping) else []:
                if isinstance(c, Mapping):
                    yield c


def _cited_passages(sample: Mapping[str, Any]) -> set[int]:
    return {c["passage"] for c in citations_of(sample) if c.get("kind") == "passage" and isinstance(c.get("passage"), int)}
