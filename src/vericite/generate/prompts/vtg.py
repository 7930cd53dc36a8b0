"""VTG's prompts (seed ``vtg_2312.09075``, App. B), each versioned:

* ``vtg-sentence@2``: App. B.1's instruction (the ALCE instruction VTG uses), the question and the memory
  ``D_S ∪ D_L`` numbered as ALCE numbers documents (``Document [n](Title: …): text``), then ``Answer:`` with the
  answer so far. Because the generator writes one sentence at a time and the embedded models are chat models
  (which restart an answer rather than continue it), one line is added after the documents: the model is asked
  for the *first sentence only* (empty answer so far), or for the *next sentence only*, and to write ``End.``
  when the answer is complete. That line is vericite's, not the paper's. (``@1`` offered ``End.`` for the first
  sentence too, and the embedded Qwen took it: an empty answer to ELI5's second question.)
* ``vtg-sentence@3``: the same instruction, question and memory, then the answer so far shown as such
  (``Answer so far: …``) and the model asked to *continue the answer* (the sentences that come next, without
  repeating it), or, with no answer yet, to *write the answer*; the generator keeps the first new sentence of
  the completion, as the paper's generator, which continues the answer text, keeps one sentence at a time.
  ``End.`` is offered only once the answer so far is complete. Why: with ``@2`` the embedded Qwen wrote
  ``End.`` after the first sentence on 18 of 22 ELI5 questions (docs/results-vtg.md).
* Both offer ``End.`` only from the ``min_sentences``-th sentence on (VTG's option, default 1: from the second).
* ``vtg-cite@1``: App. B.2 word for word (append ``[1][2][3]`` citations to the sentence, at least one and at
  most three, a minimum sufficient subset), with the memory numbered as above.
* ``vtg-queries@1``: App. B.3 word for word (``Given the claim: …, please generate up to {num} questions …``),
  made context-aware as §2.4 describes by putting the original question and the previous sentence before it.
"""

from __future__ import annotations

from typing import Any, Sequence

from ...types import Message

SENTENCE_ID = "vtg-sentence@2"
CONTINUE_ID = "vtg-sentence@3"
SENTENCE_PROMPTS = (SENTENCE_ID, CONTINUE_ID)
CITE_ID = "vtg-cite@1"
QUERIES_ID = "vtg-queries@1"
PROMPT_IDS = {"sentence": SENTENCE_ID, "cite": CITE_ID, "queries": QUERIES_ID}

SYSTEM = "You are a helpful assistant that answers the following questions with proper citations."
END_MARKER = "End."

SENTENCE_INSTRUCTION = (
    "Instruction: Write an accurate, engaging, and concise answer for the given question using only the provided"
    " search results (some of which might be irrelevant)."
)
FIRST_SENTENCE = "Write only the first sentence of the answer (one sentence, no citations)."
NEXT_SENTENCE = "Write only the next sentence of the answer below (one sentence, no citations)."
OFFER_END = " If the answer is complete, write only \"End.\""
WHOLE_ANSWER = "Write the answer (no citations)."
CONTINUE_ANSWER = "Continue the answer: write the sentences that come next (no citations; do not repeat the answer so far)."
OFFER_END_CONTINUE = " If the answer so far already answers the question completely, write only \"End.\""
CITE_INSTRUCTION = (
    "Instructions: You will be provided with a sentence and several related documents. Your task is to directly append"
    " citation annotations to the sentence using these documents without changing the sentence. When citing documents,"
    " use [1][2][3]. Cite at least one document and at most three documents. If multiple documents support the"
    " sentence, only cite a minimum sufficient subset of the documents."
)
QUERIES_TEMPLATE = (
    "Given the claim: {claim}, please generate up to {num} questions that can help verify the claim with the following"
    " constraints: 1. You should output no more than three questions. 2. The generated questions should be diverse and"
    " focus on different aspects of the given question. Generated questions:"
)


def document_lines(docs: Sequence[Any]) -> str:
    """The memory numbered from 1 as ALCE's ``doc_prompt`` shows documents: ``Document [n](Title: t): text``."""
    return "\n".join(f"Document [{i}](Title: {getattr(d, 'title', '')}): {getattr(d, 'text', '')}" for i, d in enumerate(docs, 1))


def _chat(text: str) -> list[Message]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def sentence_messages(question: str, docs: Sequence[Any], answer_so_far: str, *, prompt: str = SENTENCE_ID, offer_end: bool = True) -> list[Message]:
    """The sentence generator's prompt (``prompt``: one of :data:`SENTENCE_PROMPTS`); ``offer_end``: whether a
    non-empty answer so far may be declared complete with ``End.``."""
    head = f"{SENTENCE_INSTRUCTION}\n\nQuestion: {question}\n\n{document_lines(docs)}\n\n"
    started = bool(answer_so_far.strip())
    if prompt == CONTINUE_ID:
        if not started:
            return _chat(f"{head}{WHOLE_ANSWER}\n\nAnswer:")
        return _chat(f"{head}Answer so far: {answer_so_far.strip()}\n\n{CONTINUE_ANSWER}{OFFER_END_CONTINUE if offer_end else ''}")
    if prompt != SENTENCE_ID:
        raise ValueError(f"unknown sentence prompt {prompt!r}: one of {', '.join(SENTENCE_PROMPTS)}")
    ask = (NEXT_SENTENCE + (OFFER_END if offer_end else "")) if started else FIRST_SENTENCE
    return _chat(f"{head}{ask}\n\nAnswer: {answer_so_far}".rstrip())


def cite_messages(sentence: str, docs: Sequence[Any]) -> list[Message]:
    return _chat(f"{CITE_INSTRUCTION}\n\nDocument:\n{document_lines(docs)}\n\nSentence: {sentence}\n\nSentence with citation:")


def queries_messages(question: str, previous: str, claim: str, num: int) -> list[Message]:
    context = f"Question: {question}\n" + (f"Previous sentence: {previous}\n" if previous else "")
    return _chat(context + "\n" + QUERIES_TEMPLATE.format(claim=claim, num=num))
