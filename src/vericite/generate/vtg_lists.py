"""VTG's ``strip_list_markers`` (``vtg_steps.read_sentence``): a completion written as a list read as its items.

Asked to continue an answer, a chat model often writes a list ("The types of guns include:\\n\\n1. **Pistols**:
...\\n2. **Rifles**: ..."; the embedded Qwen on ELI5, session #16). Read as prose, Punkt cuts it at the numbers, so
the "sentence" taken is "The types of guns include: 1." or "2.", verified against nothing and drawn again until
the trials run out (ELI5 question 6: six of fourteen trials spent on "2." and "3.", two of them kept unverified).
Under the option, :func:`list_sentences`:

* when a line of the completion starts with a list marker (``1.``, ``2)``, ``(3)``, ``-``, ``*``, ``•``), each line
  is read apart (a line break ends an item), its marker cut;
* markdown emphasis (``**``, ``__``) is cut;
* a sentence that is only a number marker ("2.": Punkt's cut of "2. Rifles" on one line) is skipped, a marker
  that starts a sentence is cut, and one that ends it after a colon or semicolon ("including: 1.") too;
* a lead-in, a sentence that ends in a colon once its marker is cut ("The types of guns include:"), is skipped:
  it announces the items and claims nothing of its own; so is a sentence left ending in a semicolon ("pistols; 3."
  is "pistols;", the tail of an item the completion began before it).

A completion without any of these reads as before (the same sentences, the same text), so the option changes only
the lists. What was cut or skipped is returned for the trace, each as written, with the sentence it came before
(a reader that stops at a sentence traces only what it read)."""

from __future__ import annotations

import re

from ..attribution.alce import sent_tokenize

#: a list item's marker at the start of a line or sentence, with the space after it
LEAD_MARKER = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|[-*•])\s+")
#: a sentence that is only a number marker (Punkt's "2." of "2. Rifles: ...")
BARE_MARKER = re.compile(r"^\s*\(?\d{1,2}[.)]\s*$")
#: a number marker that ends a sentence after a colon or semicolon ("including: 1.")
TRAILING_MARKER = re.compile(r"([:;])\s+\(?\d{1,2}[.)]\s*$")
EMPHASIS = re.compile(r"\*\*|__")


def list_sentences(text: str) -> tuple[list[str], list[list[dict[str, str]]]]:
    """``text``'s sentences with list markers read as the module says, and what was changed on the way to each:
    ``changed[i]`` the sentences skipped before sentence i and its own change, each ``{"written": the sentence as
    Punkt cut it, "read": what it became, "" when skipped}``; ``changed[-1]`` (one more than the sentences) those
    skipped after the last, so a reader that stops at sentence i traces ``changed[: i + 1]``."""
    lines = [line for line in text.splitlines() if line.strip()]
    chunks = lines if any(LEAD_MARKER.match(line) for line in lines) else [text.replace("\n", " ").strip()]
    out: list[str] = []
    changed: list[list[dict[str, str]]] = [[]]
    for chunk in chunks:
        for written in sent_tokenize(chunk):
            read = EMPHASIS.sub("", written).strip()
            if BARE_MARKER.match(read):
                read = ""
            else:
                read = TRAILING_MARKER.sub(r"\1", LEAD_MARKER.sub("", read)).strip()
                if read.endswith((":", ";")):
                    read = ""
            if read != written.strip():
                changed[-1].append({"written": written.strip(), "read": read})
            if read:
                out.append(read)
                changed.append([])
    return out, changed
