"""VTG's steps (seed §2.2–2.4), each one call (or a few) to the model or the judge, each traced:

* :func:`generate_sentence`: the *sentence generator*, the next single sentence (``vtg-sentence@2`` or ``@3``): the
  completion is read as its first Punkt sentence, citations removed; a completion that repeats the answer so
  far loses that prefix; an empty one, ``End.``, or only sentences already written end the answer. A sentence
  already written is its exact repeat or, below ``repeat_overlap`` 1.0, a near repeat: one written sentence holds
  at least that share of its content words (:func:`repeat_of`). With ``strip_preamble``, a leading phrase that
  names the sources ("Based on the provided search results,") is cut from the sentence (:func:`strip_preamble`),
  and with ``strip_source_leads`` one that names its source by its markers ("Document [2] mentions that");
  with ``drop_source_remarks``, a sentence that only remarks on the sources ("This information can be found in
  documents [1], [2], and [5].") is skipped as a repeat is, and with ``tidy_citations`` a list of markers leaves no
  punctuation behind (``vtg_remarks.py``); with ``strip_list_markers`` a completion written as a list is read as
  its items, not cut at its numbers (``vtg_lists.py``).
* :func:`generate_citations`: the *citation generator* (``vtg-cite@1``): the ``[n]`` markers of its completion,
  in range, without repeats, the first ``at_most`` (3); the sentence itself is the generator's (the paper asks
  the model not to change it, and vericite does not trust it to).
* :class:`Verifier`: the *generation verifier* (do the cited documents together entail the sentence?), the
  *memory verifier* (does the whole memory?, :data:`~vericite.generate.vtg_memory.MEMORY_RULE`) and the
  *citation simplifier* (each citation, one at a time, dropped when the sentence stays entailed without it; or,
  ``simplifier_strategy: halving``, chunks of them at once, ``vtg_simplify.py``), all
  with one judge and one premise format: the documents as ``"Title: {title}\\n{text}"`` joined by newlines, the
  hypothesis the sentence without citations, as ALCE's citation metrics ask. A judgement that cannot be read
  counts as *not entailed*, and is counted: never a silent pass.
* :func:`generate_queries` and :func:`find_evidence`: the *evidence finder*, M context-aware queries
  (``vtg-queries@1``; without query generation, the sentence itself), N documents retrieved per query that are
  not in ``D_L`` nor brought by an earlier query.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from ..attribution.alce import citation_numbers, remove_citations, sent_tokenize
from ..metrics.alce_citations import format_document
from ..metrics.judging import judgement_verdict
from ..types import GenParams, JudgePair, Passage
from .prompts import vtg as P
from .vtg_lists import list_sentences
from .vtg_memory import Memory, doc_key
from .vtg_remarks import capitalised, is_source_remark, strip_lead_after, strip_source_lead, without_citations
from .vtg_simplify import simplify_halving
from .vtg_trace import Tracer

_NUMBERING = re.compile(r"^\s*(?:[-*•]|\(?\d+[.):]|Q\d+[.:]|Question\s*\d*[.:])\s*", re.IGNORECASE)


def _norm(s: str) -> str:
    return " ".join(remove_citations(s).lower().split()).rstrip(".")


#: the near-repeat rule's default threshold for a new run (``repeat_overlap``; 1.0: the exact rule alone)
REPEAT_OVERLAP = 0.8
#: how many times a new run draws a completion of repeats again while the answer is short of ``min_sentences``
#: (``repeat_retries``; 0: the answer ends there at once, the rule before the option)
REPEAT_RETRIES = 2
#: how many times a new run draws again a completion that would end the answer short of ``min_sentences`` otherwise
#: than on repeats (a prompt echo, ``End.`` unasked, an empty completion; ``short_retries``; 0: the answer ends
#: there at once, the rule before the option)
SHORT_RETRIES = 2
#: whether a new run cuts a leading preamble phrase from the sentences (``strip_preamble``; False: the rule before
#: the option)
STRIP_PREAMBLE = True
#: whether a new run cuts a sentence's leading phrase that names its source by its markers ("Document [2] mentions
#: that", ``strip_source_leads``; ``vtg_remarks.strip_source_lead``; False: the rule before the option)
STRIP_SOURCE_LEADS = True
#: whether a new run skips the sentences that only remark on the sources (``drop_source_remarks``) and removes a
#: sentence's lists of markers with their separators (``tidy_citations``; ``vtg_remarks.py``; False: the rules before
#: the options)
DROP_SOURCE_REMARKS = TIDY_CITATIONS = True
#: whether a new run reads a completion written as a list as its items (``strip_list_markers``; ``vtg_lists.py``;
#: False: the rule before the option)
STRIP_LIST_MARKERS = True
#: whether a new run reads a sentence that quotes the question as a prompt echo (``question_quotes``;
#: :func:`quotes_question`; False: the rule before the option)
QUESTION_QUOTES = True
#: what :func:`content_tokens` leaves out: articles, forms of *be*/*have*/*do*, pronouns, prepositions,
#: conjunctions, and the ``s`` of a possessive (``Simon's``), the words that make two wordings of one claim differ
STOPWORDS = frozenset(
    "a an the and or but nor so as than that this these those which who whom whose what when where while it its "
    "is are was were be been being am has have had having do does did done he she they them their his her him we "
    "us our you your i me my of in on at to for from by with about into onto over under after before during "
    "between through also both either neither not no s there here then".split()
)
_WORD = re.compile(r"\w+")


def content_tokens(sentence: str) -> frozenset[str]:
    """A sentence's content words for the near-repeat rule: citations removed, lower-cased, runs of word
    characters (so punctuation and quotes go, ``1963`` stays), :data:`STOPWORDS` left out; a set (each word once).
    No stemming: ``wrote`` and ``written`` are two words."""
    return frozenset(w for w in _WORD.findall(remove_citations(sentence).lower()) if w not in STOPWORDS)


def containment(candidate: frozenset[str], written: frozenset[str]) -> float:
    """``|candidate ∩ written| / |candidate|``: how much of the candidate's content the written sentence holds
    (0.0 for a candidate with no content word)."""
    return len(candidate & written) / len(candidate) if candidate else 0.0


def repeat_of(sentence: str, written: Sequence[str], overlap: float = 1.0) -> tuple[int, float] | None:
    """The written sentence ``sentence`` repeats, as (its index, the containment), or None. An exact repeat (the
    same text once citations, case, spacing and a final full stop are set aside) at any ``overlap``, containment
    1.0; below 1.0, a near repeat too: the one written sentence that holds the most of its content words, when
    that is at least ``overlap`` (:func:`containment`; the earliest on a tie). ``overlap=1.0`` is the exact rule
    alone (a candidate whose words a longer written sentence all holds is not a repeat there)."""
    norm = _norm(sentence)
    for i, w in enumerate(written):
        if _norm(w) == norm:
            return i, 1.0
    if overlap >= 1.0:
        return None
    cand = content_tokens(sentence)
    best = max(((containment(cand, content_tokens(w)), -i) for i, w in enumerate(written)), default=None)
    if best is None or best[0] < overlap:
        return None
    return -best[1], best[0]


#: a quoted span (straight or curly double quotes; left open at the unit's end, where Punkt cut inside the quote)
_QUOTED = re.compile("[\"\u201c]([^\"\u201d]{3,})(?:[\"\u201d]|$)")
#: the fewest content words of a quoted span, and the share of them the question must hold, for it to restate the question
QUOTE_WORDS, QUOTE_OVERLAP = 3, 0.8


def quotes_question(unit: str, question: str) -> bool:
    """Whether ``unit`` quotes the question: a quoted span (:data:`_QUOTED`) of :data:`QUOTE_WORDS` content words or
    more (:func:`content_tokens`) that the question holds at :data:`QUOTE_OVERLAP` or more. The embedded Qwen's
    "The answer to the question \"Why does a gun ... when fired? \" [3] is that rifles ..." (ELI5-30's question 26):
    Punkt, as ALCE's evaluation does, cuts it after the quoted question mark, so its first part is no claim and the
    rest begins "is that"; read as a prompt echo (``question_quotes``): drawn again short of ``min_sentences``, as any is."""
    asked = content_tokens(question)
    spans = (content_tokens(m.group(1)) for m in _QUOTED.finditer(unit))
    return any(len(c) >= QUOTE_WORDS and containment(c, asked) >= QUOTE_OVERLAP for c in spans)


def first_text(backend: Any, messages: Any, params: GenParams) -> str:
    return str(backend.generate([messages], params)[0].text).replace("<|im_end|>", "")


# --------------------------------------------------------------------------- sentence generator


#: a sentence that speaks of the prompt's own words rather than the question ("The answer so far already answers
#: the question completely. End.", the embedded Qwen's reply to ``vtg-sentence@3``): the model declining to go on
PROMPT_ECHO = re.compile(r"\banswer so far\b", re.IGNORECASE)
#: why a completion that held only remarks on the sources (and nothing new) ends the answer (``drop_source_remarks``)
SOURCE_REMARK = "source-remark"
#: the sources a preamble names: "the provided search results", "the information provided in Document" (its
#: ``[n]`` already removed), "the document titled \"...\"", "the documents"
_SOURCES = (
    r"(?:the |these )?(?:provided |given |above )?(?:search results?|documents?|passages?|sources?|information|context)"
    r"(?: provided| given| above)?(?: in (?:the )?(?:provided )?(?:search results?|documents?|passages?))?(?: titled \"[^\"]{1,80}\")?"
)
#: a leading phrase that says where the sentence comes from rather than what it says, with its comma: "Based on the
#: provided search results,", "According to the search results,", "According to the information provided in
#: Document,", "As mentioned in the documents,": the phrases the embedded Qwen opens sentences with (of VTG's runs
#: on ASQA-10), a small fixed list, nothing else cut
PREAMBLE = re.compile(rf"^(?:based on|according to|as (?:mentioned|stated|shown|described|indicated) in) {_SOURCES}\s*,\s+", re.IGNORECASE)


def strip_preamble(sentence: str) -> tuple[str, str]:
    """``sentence`` without a leading :data:`PREAMBLE` phrase, its first letter capitalised (not in a word with
    capitals of its own: ``iPhone`` stays), and the phrase cut (``""`` when none, or when fewer than three words
    would be left: then the sentence as it is)."""
    m = PREAMBLE.match(sentence)
    rest = sentence[m.end() :] if m else ""
    if not m or len(rest.split()) < 3:
        return sentence, ""
    return capitalised(rest), sentence[: m.end()].strip()


def read_sentence(
    raw: str, written: Sequence[str], overlap: float = 1.0, skipped: list[tuple[str, int, float]] | None = None, preambles: list[tuple[str, str]] | None = None,
    remarks: list[str] | None = None, tidy: bool = False, leads: list[tuple[str, str]] | None = None, lists: list[dict[str, str]] | None = None,
    question: str | None = None,
) -> tuple[str | None, str]:
    """The next sentence in a completion, or None when the answer ends; and why (``""``, ``end-marker``,
    ``empty``, ``repeated``, ``prompt-echo``: a sentence that echoes the prompt's wording, :data:`PROMPT_ECHO`, or,
    ``question`` given, quotes it (:func:`quotes_question`);
    ``source-remark``: only remarks on the sources were left, below).
    Sentences that repeat one already written are skipped (a chat model often restarts the answer, or says a
    sentence again in other words): :func:`repeat_of` at ``overlap`` (1.0: only exact repeats; the method's
    ``repeat_overlap``); a completion with nothing else ends the answer as ``repeated``. ``skipped``, when given,
    receives each near repeat skipped (not an exact one) as (the sentence, the index of the written sentence it
    repeats, the containment). ``preambles``, when given, has each sentence's leading preamble cut first
    (:func:`strip_preamble`; the rules above then read what is left) and receives the sentence returned's, when
    one was cut, as (the sentence as written, the phrase cut). ``remarks``, when given, has each sentence that only
    remarks on the sources (``vtg_remarks.is_source_remark``, read after the preamble's cut) skipped as a repeat is
    and receives it as written, citations included; a completion with nothing else (no repeat either) ends the
    answer as ``source-remark``. ``tidy``: citations removed with the separators between them
    (``vtg_remarks.without_citations``), else ALCE's way (``remove_citations``, the rule before the option).
    ``leads``, when given, has each sentence's lead phrase that names its source by its markers cut too, on the
    sentence as written (``vtg_remarks.strip_source_lead``: "Document [2] mentions that"; the rest's citations then
    removed as above), or after a preamble that was (``vtg_remarks.strip_lead_after``: "Based on the search
    results, Document [2] mentions that", the rest capitalised), and receives the sentence returned's, when one
    was cut, as (the sentence as written, the lead as written, markers and all, with the preamble before it if
    one was cut: then not in ``preambles``). ``lists``, when given, has a completion written as a list read as its
    items (``vtg_lists.list_sentences``: markers cut, a bare marker and a lead-in skipped) and receives each
    sentence it changed up to the one returned (what was read), as ``{"written", "read"}`` (``"read"`` empty when
    skipped)."""
    body = raw.strip()
    if body.lower().startswith("answer:"):
        body = body[len("answer:") :].strip()
    text = body.replace("\n", " ").strip()
    if not text or text.lower().rstrip(".") == "end":
        return None, "end-marker" if text else "empty"
    repeated = remarked = False
    clean = without_citations if tidy else lambda x: " ".join(remove_citations(x).split())
    units, changed = list_sentences(body) if lists is not None else (sent_tokenize(text), None)
    for i, as_written in enumerate(units):
        if changed is not None and lists is not None:
            lists.extend(changed[i])
        s = clean(as_written)
        original, cut, lead = s, "", ""
        if preambles is not None:
            s, cut = strip_preamble(s)
        if leads is not None:  # after a preamble cut, the lead that follows it (the whole phrase recorded)
            rest, lead = strip_lead_after(as_written, cut, clean) if cut else strip_source_lead(as_written)
            s = clean(rest) if lead else s
        if not s or s.lower().rstrip(".") == "end":
            return None, "end-marker"
        if PROMPT_ECHO.search(s) or (question is not None and quotes_question(s, question)):
            return None, "prompt-echo"
        if remarks is not None and is_source_remark(strip_preamble(s)[0]):
            remarks.append(as_written)
            remarked = True
            continue
        hit = repeat_of(s, written, overlap)
        if hit is not None:
            repeated = True
            if skipped is not None and _norm(s) != _norm(written[hit[0]]):
                skipped.append((s, hit[0], hit[1]))
            continue
        if lead and leads is not None:
            leads.append((as_written.strip(), lead))
        elif cut and preambles is not None:
            preambles.append((original, cut))
        return s, ""
    if changed is not None and lists is not None:
        lists.extend(changed[-1])
    return None, "repeated" if repeated else SOURCE_REMARK if remarked else "empty"


def generate_sentence(
    backend: Any, question: str, memory: Memory, written: Sequence[str], params: GenParams, *, prompt: str = P.SENTENCE_ID, offer_end: bool = True,
    overlap: float = 1.0, skipped: list[tuple[str, int, float]] | None = None, preambles: list[tuple[str, str]] | None = None,
    remarks: list[str] | None = None, tidy: bool = False, leads: list[tuple[str, str]] | None = None, lists: list[dict[str, str]] | None = None,
    question_quotes: bool = False,
) -> tuple[str | None, str, str]:
    """(the sentence or None, why it ended, the raw completion); ``overlap``, ``skipped``, ``preambles``,
    ``remarks``, ``tidy``, ``leads`` and ``lists`` as :func:`read_sentence`'s; ``question_quotes``: a sentence that
    quotes the question is a prompt echo (``read_sentence``'s ``question``)."""
    messages = P.sentence_messages(question, memory.view_docs(), " ".join(written), prompt=prompt, offer_end=offer_end)
    raw = first_text(backend, messages, params)
    sentence, why = read_sentence(raw, written, overlap, skipped, preambles, remarks, tidy, leads, lists, question if question_quotes else None)
    return sentence, why, raw


# --------------------------------------------------------------------------- citation generator


def read_citations(raw: str, n_docs: int, at_most: int) -> tuple[list[int], int]:
    """The 1-based numbers cited (in range, first occurrence, at most ``at_most``) and how many were out of range."""
    out: list[int] = []
    bad = 0
    for n in citation_numbers(raw):
        if not 1 <= n <= n_docs:
            bad += 1
        elif n not in out:
            out.append(n)
    return out[:at_most], bad


def generate_citations(backend: Any, sentence: str, memory: Memory, params: GenParams, at_most: int) -> tuple[list[int], int, str]:
    """Catalogue positions cited, numbers out of range, the raw completion."""
    raw = first_text(backend, P.cite_messages(sentence, memory.view_docs()), params)
    numbers, bad = read_citations(raw, len(memory.view()), at_most)
    return memory.from_view(numbers), bad, raw


# --------------------------------------------------------------------------- verifiers and simplifier


def premise(docs: Sequence[Any]) -> str:
    return "\n".join(format_document(d) for d in docs)


class Verifier:
    """The two-tier verifier and the simplifier over one judge; every distinct pair is judged once per answer."""

    def __init__(self, judge: Any, tracer: Tracer, question: str, memory_words: int = 1500) -> None:
        self.judge = judge
        self.tracer = tracer
        self.question = question
        self.memory_words = memory_words
        self.seen: dict[JudgePair, tuple[bool, float | None, str]] = {}
        self.calls = 0  # judge calls made (a call judges one pair or a batch of them)

    def judge_many(self, memory: Memory, groups: Sequence[Sequence[int]], sentence: str) -> list[tuple[bool, float | None, str]]:
        """Per group of catalogue positions: (entailed, probability, status), judged in one call."""
        pairs = [JudgePair(premise([memory.doc(i) for i in g]), sentence, question=self.question) for g in groups]
        new = [p for p in dict.fromkeys(pairs) if p not in self.seen]
        if new:
            self.calls += 1
            judgements = self.judge.judge(new)
            self.tracer.judge_calls += len(new)
            self.tracer.judge_words += sum(len(p.evidence.split()) + len(p.claim.split()) for p in new)
            for p, j in zip(new, judgements):
                v = judgement_verdict(j)
                if v is None:
                    self.tracer.count("unreadable_judgements")
                self.seen[p] = (bool(v), j.probability, j.status if v is not None else (j.status if j.status != "ok" else "unparseable"))
            for p in new[len(judgements) :]:  # a judge that answered fewer pairs than asked
                self.tracer.count("unreadable_judgements")
                self.seen[p] = (False, None, "failed")
        return [self.seen[p] for p in pairs]

    def entails(self, memory: Memory, group: Sequence[int], sentence: str) -> tuple[bool, float | None, str]:
        if not group:
            return False, None, "no documents"
        return self.judge_many(memory, [group], sentence)[0]

    def generation(self, memory: Memory, cited: Sequence[int], sentence: str) -> dict[str, Any]:
        ok, p, status = self.entails(memory, cited, sentence)
        return {"entailed": ok, "probability": p, "status": status}

    def memory(self, memory: Memory, sentence: str) -> tuple[dict[str, Any], list[int]]:
        """The memory verifier's verdict, and the citations it leaves to simplify: the whole memory when it was
        judged as one premise, the most probable single document when per document."""
        view = memory.view()
        if not view:
            return {"mode": "empty", "entailed": False, "probability": None}, []
        if memory.words(view) <= self.memory_words:
            ok, p, status = self.entails(memory, view, sentence)
            return {"mode": "concatenated", "entailed": ok, "probability": p, "status": status, "docs": len(view)}, (list(view) if ok else [])
        verdicts = self.judge_many(memory, [[i] for i in view], sentence)
        entailed = [(v[1] if v[1] is not None else 0.0, -k, i) for k, (i, v) in enumerate(zip(view, verdicts)) if v[0]]
        best = max(entailed)[2] if entailed else None
        top = max((v[1] for v in verdicts if v[1] is not None), default=None)
        return {"mode": "per-document", "entailed": best is not None, "probability": top, "docs": len(view), "entailing": len(entailed)}, ([best] if best is not None else [])

    def simplify(self, memory: Memory, cited: Sequence[int], sentence: str, *, batch: bool = False, strategy: str = "greedy") -> tuple[list[int], dict[str, Any]]:
        """Each citation in turn is dropped when the others still entail the sentence (§2.3); ``strategy="halving"``:
        chunks of them dropped at once, halved while they cannot be (``vtg_simplify.simplify_halving``; the same
        result under a monotone judge, fewer checks; ``batch`` does not apply to it).

        Sequentially (``batch=False``) that is one judge call per check, each check depending on the last. Batched,
        one call judges every check the sequential loop could make next with the citations kept so far (drop the
        i-th, drop the (i+1)-th, ...): until one stays entailed the sequential loop makes exactly those checks
        with those citations, so the first entailed one (in the loop's order) is its next removal, and a new
        call starts after it with the citations left. The removals and the checks traced (``checked``: each with
        the citation left out, the verdict and its probability, in the loop's order) are the sequential loop's;
        ``speculative`` counts the checks a round judged after its removal, which the sequential loop never asks
        (the price of batching: judged, cached, not used), ``calls`` the judge calls made."""
        if strategy == "halving":
            return simplify_halving(self, memory, cited, sentence)
        kept = list(cited)
        removed: list[int] = []
        checked: list[dict[str, Any]] = []
        speculative = 0
        calls_before = self.calls
        order = list(cited)
        i = 0
        while i < len(order) and len(kept) >= 2:
            candidates = order[i:] if batch else order[i : i + 1]
            verdicts = self.judge_many(memory, [[x for x in kept if x != c] for c in candidates], sentence)
            hit = next((k for k, v in enumerate(verdicts) if v[0]), None)
            used = len(candidates) if hit is None else hit + 1
            for c, (ok, p, status) in zip(candidates[:used], verdicts[:used]):
                checked.append({"without": c + 1, "entailed": ok, "probability": p, **({"status": status} if status != "ok" else {})})
            speculative += len(candidates) - used
            if hit is not None:
                kept = [x for x in kept if x != candidates[hit]]
                removed.append(candidates[hit])
            i += used
        trace = {"removed": [r + 1 for r in removed], "checks": len(checked), "checked": checked, "calls": self.calls - calls_before}
        if batch:
            trace["speculative"] = speculative
        return kept, trace


# --------------------------------------------------------------------------- evidence finder


def read_queries(raw: str, m: int) -> list[str]:
    out: list[str] = []
    for line in raw.replace("<|im_end|>", "").splitlines():
        q = _NUMBERING.sub("", line).strip().strip('"').strip()
        if len(q.split()) >= 2 and q not in out:
            out.append(q)
    return out[:m]


def generate_queries(backend: Any, question: str, previous: str, sentence: str, m: int, params: GenParams) -> tuple[list[str], str]:
    raw = first_text(backend, P.queries_messages(question, previous, sentence, m), params)
    return read_queries(raw, m), raw


Search = Callable[[str, int], Sequence[Any]]  # (query, depth) -> documents, best first


def find_evidence(search: Search, queries: Sequence[str], n: int, memory: Memory) -> tuple[list[Any], dict[str, list[Any]]]:
    """N documents per query, not in ``D_L`` and not brought by an earlier query; all of them, and by query."""
    taken = {doc_key(memory.doc(i)) for i in memory.long}
    found: list[Any] = []
    by_query: dict[str, list[Any]] = {}
    for q in queries:
        got: list[Any] = []
        for d in search(q, n + len(taken)):
            if doc_key(d) in taken:
                continue
            taken.add(doc_key(d))
            got.append(d)
            if len(got) == n:
                break
        by_query[q] = got
        found.extend(got)
    return found, by_query


class PoolSearch:
    """Search within a question's own documents (an ALCE file's, when no index is given), TF-IDF cosine as
    ``alce_cite.TfidfSearcher``, best first (ties: the earlier document)."""

    def __init__(self, docs: Sequence[Passage]) -> None:
        from .alce_cite import TfidfSearcher

        self.docs = list(docs)
        self.searcher = TfidfSearcher([{"title": d.title, "text": d.text} for d in self.docs])

    def __call__(self, query: str, depth: int) -> list[Passage]:
        q = self.searcher.vector(query)
        scores = [sum(w * v.get(t, 0.0) for t, w in q.items()) for v in self.searcher.docs]
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.docs[i] for i in order if scores[i] > 0][:depth]
