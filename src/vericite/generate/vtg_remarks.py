"""Two rules of VTG's sentence generator (``vtg_steps.read_sentence``) on the text of a sentence written:

* :func:`without_citations` (``tidy_citations``): the sentence's ``[n]`` markers removed with what stood between
  them, so a list of markers leaves no punctuation behind: "found in documents [1], [2], and [5]." is "found in
  documents.", where ALCE's ``remove_citations`` (:func:`~vericite.attribution.alce.remove_citations`, what the
  rule before the option used, and still the metrics' reading) leaves "found in documents,, and.". Only the
  separators between markers go (a comma, a semicolon, ``&``, ``and``/``or``), and brackets left empty by them
  or holding only "see" ("([2])", "(see [2])"); any marker these do not match is removed ALCE's way.
* :func:`is_source_remark` (``drop_source_remarks``): a sentence that only remarks on the sources, saying where
  something can be found rather than what ("This information can be found in documents [1], [2], and [5].",
  "For more information, see Document [2].", "Document [2] and Document [3] provide additional information about
  the release date of the iPhone."): a small fixed list of whole-sentence forms, :data:`SOURCE_REMARK`. A sentence
  that says something and cites ("According to Document [1], the tower is 300 m tall.", "Document [2] mentions
  that the first iPhone was released on June 29, 2007.") matches none of them.
* :func:`strip_source_lead` (``strip_source_leads``): such a sentence's lead phrase that names its source by its
  markers ("Document [2] mentions that", "According to document [3],", "As stated in [1],", "Documents [1] and
  [2] state that"), read on the sentence as written (its markers there), cut: :data:`SOURCE_LEAD`, a small fixed
  list of forms, each naming a source by a marker, so "Document management systems store files [1]." and an
  "according to" within the sentence stay as they are. After a preamble that ``strip_preamble`` cut (both options
  on), a lead is cut too (:func:`strip_lead_after`): "Based on the search results, Document [2] mentions that".
"""

from __future__ import annotations

import re
from typing import Callable

from ..attribution.alce import remove_citations

#: one marker as a chat model writes it: ``[1]``, ``[1, 2]``, ``[1-3]``, with the spaces before it
_ONE = r"\s*\[\d+(?:\s*[,;\u2013-]\s*\d+)*\]"
#: a run of markers with what separates them ("[1], [2], and [3]", "[1][2]", "[1] & [2]"), none after it
MARKER_RUN = re.compile(rf"{_ONE}(?:\s*[,;&]?\s*(?:(?:and|or)\s+)?{_ONE})*")
_GONE = "\x00"  # where a run of markers was, while the brackets around it are read
#: brackets that held only a run of markers, or "see" and one ("([2])", "(see [2])"); no other brackets
_EMPTIED = re.compile(rf"\s*\(\s*(?:(?:see|cf\.)\s*)?{_GONE}\s*\)", re.IGNORECASE)


def without_citations(sentence: str) -> str:
    """``sentence`` without its citation markers and the separators between them (module docstring), spaces
    collapsed and stripped."""
    text = _EMPTIED.sub("", MARKER_RUN.sub(_GONE, sentence.replace(_GONE, ""))).replace(_GONE, "")
    return " ".join(remove_citations(text).split())


#: what a remark names as its sources, citations removed: "documents", "Document and Document", "the provided search
#: results", "the documents above"
_SOURCE = (
    r"(?:the |these |those |this |that |each |both |all (?:the |of the |three |two )?)?(?:provided |given |above |following |cited |listed |retrieved |relevant |same )?"
    r"(?:search results?|documents?|passages?|sources?|references?|articles?)(?: (?:provided|given|above|listed|cited))?"
)
_SOURCES = rf"{_SOURCE}(?:(?:,| and|, and| or|, or) {_SOURCE})*"
#: what a remark says the sources hold: "this information", "the answer", "more details"
_THING = (
    r"(?:(?:all )?(?:this|that|these|the|such|more|further|additional|detailed|the above|the same|the relevant) )?"
    r"(?:information|answer|answers|facts?|details?|claims?|statements?|data)"
)
#: a topic after "information about": no comma, no figure, no verb of its own (so no claim)
_TOPIC = r"(?:(?!\b(?:that|which|who|whom|whose|is|are|was|were|has|have|had|will|would|can|could|did|does)\b)[^,;:0-9\"]){1,80}"
#: the whole sentence (citations removed) only remarks on the sources:
#: "This information can be found in documents." / "This is stated in the search results." (where it is);
#: "For more information, see Document." / "Refer to the documents above for more details." (where to look);
#: "Document and Document provide additional information about the release date of the iPhone." (that they hold
#: something, on a topic without a claim)
SOURCE_REMARK = re.compile(
    r"^(?:"
    rf"(?:{_THING}|this|that|it|these|all of this) (?:can|could|may) (?:also )?be (?:found|seen|read|verified|confirmed) (?:in|from|within) {_SOURCES}"
    rf"|(?:{_THING}|this|that|it|these|all of this) (?:is|are|was|were) (?:also )?(?:found|available|mentioned|given|provided|stated|reported|described|listed|"
    rf"supported|confirmed|cited|based) (?:in|by|on|from|within) {_SOURCES}"
    rf"|(?:for (?:more|further|additional|detailed) (?:information|details)(?: on this)?,? )?(?:please )?(?:see|refer to|check|consult) {_SOURCES}"
    rf"(?: for (?:more|further|additional|detailed) (?:information|details))?"
    rf"|{_SOURCES} (?:also )?(?:provides?|contains?|gives?|offers?|has|have|includes?) {_THING}(?: (?:about|on|regarding|for) {_TOPIC})?"
    r")[\s,;]*(?:(?:and|or)\s*)?[.!]?$",  # the separators ALCE's removal leaves after a list ("documents,, and.")
    re.IGNORECASE,
)


def is_source_remark(sentence: str) -> bool:
    """Whether ``sentence`` (its citations removed here too) is only a remark on the sources (:data:`SOURCE_REMARK`)."""
    return SOURCE_REMARK.match(without_citations(sentence)) is not None


def capitalised(rest: str) -> str:
    """``rest`` with its first letter capitalised, not in a word with capitals of its own (``iPhone`` stays)."""
    first = rest.split(None, 1)[0] if rest.split() else ""
    if first and first[0].islower() and not any(c.isupper() for c in first[1:]):
        return rest[0].upper() + rest[1:]
    return rest


#: one marker as written, and the sources a lead names by their markers: "Document [2]", "[1]", "Documents [1] and
#: [2]", "Document [1] and Document [2]", "the passages [1], [3]"
_MARK = r"\[\d+(?:\s*[,;\u2013-]\s*\d+)*\]"
_NOUN = r"(?:documents?|passages?|sources?|search results?|references?|articles?)"
_NAMED = rf"(?:the\s+)?(?:{_NOUN}\s*)?{_MARK}(?:\s*(?:,\s*(?:and\s+)?|and\s+|&\s*)?(?:{_NOUN}\s*)?{_MARK})*"
#: what a lead says its source does, before "that": "mentions", "states", "stated", "also notes"
_SAYS = (
    r"(?:also\s+)?(?:mention(?:s|ed)?|state[sd]?|says?|said|note[sd]?|report(?:s|ed)?|indicate[sd]?|explain(?:s|ed)?|show(?:s|ed)?"
    r"|confirm(?:s|ed)?|suggest(?:s|ed)?|reveal(?:s|ed)?|highlight(?:s|ed)?|add(?:s|ed)?|clarif(?:y|ies|ied)|specif(?:y|ies|ied))"
)
#: a sentence's lead phrase that names its source by its markers, read on the sentence as written: "Document [2]
#: mentions that", "Documents [1] and [2] state that" (a source, a verb of saying, "that"), "According to document
#: [3],", "As stated in [1],", "Based on Document [4]," (a comma after the source); at the start only, and a marker
#: always, so "Document management systems store files [1]." and "The tower, according to Document [1], is tall."
#: are not leads
SOURCE_LEAD = re.compile(
    rf"^(?:{_NAMED}\s+{_SAYS}\s+that"
    rf"|(?:according\s+to|based\s+on|as\s+(?:mentioned|stated|shown|described|indicated|noted|reported|explained|seen)\s+(?:in|by))\s+{_NAMED}\s*,)\s+",
    re.IGNORECASE,
)


def strip_source_lead(sentence: str) -> tuple[str, str]:
    """``sentence`` (as written, markers and all) without a leading :data:`SOURCE_LEAD` phrase, the rest's markers
    kept and its first letter capitalised (:func:`capitalised`), and the phrase cut as written ("Document [2]
    mentions that"); ``""`` when none, or when fewer than three words (citations removed) would be left: then the
    sentence as it is."""
    m = SOURCE_LEAD.match(sentence.strip())
    rest = sentence.strip()[m.end() :] if m else ""
    if not m or len(without_citations(rest).split()) < 3:
        return sentence, ""
    return capitalised(rest), sentence.strip()[: m.end()].strip()


def strip_lead_after(sentence: str, preamble: str, clean: Callable[[str], str]) -> tuple[str, str]:
    """``sentence`` (as written, markers and all) that opens with the preamble ``preamble`` (the phrase
    ``vtg_steps.strip_preamble`` cut from ``clean(sentence)``, its markers removed, ending in a comma) followed by
    a :data:`SOURCE_LEAD` phrase, without both: the rest as :func:`strip_source_lead` leaves it, and the whole
    phrase cut as written ("Based on the search results, Document [2] mentions that"); ``""`` when no lead follows
    the preamble as written (or :func:`strip_source_lead` cuts none): then the sentence as it is."""
    text = sentence.strip()
    for comma in re.finditer(",", text):
        if clean(text[: comma.end()]) != preamble:
            continue
        after = text[comma.end() :]
        rest, lead = strip_source_lead(after)
        if not lead:
            break
        return rest, text[: comma.end() + len(after) - len(after.lstrip()) + len(lead)]
    return sentence, ""
