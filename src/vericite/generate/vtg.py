"""VTG, verifiable text generation with evolving memory and self-reflection (seed ``vtg_2312.09075``, §2,
Algorithm 1), registered as method ``vtg`` (``vtg@1``).

Per question: the long-term memory ``D_L`` holds the top ``k`` documents (the question's own, or retrieved from
``--index``), the short-term memory ``D_S`` starts empty (``vtg_memory.py``). Then, sentence by sentence
(``vtg_steps.py``): the *sentence generator* writes the next sentence from the question, the answer so far and
the memory; the *citation generator* appends at most three ``[n]``; the *generation verifier* asks the judge
whether the cited documents entail the sentence, else the *memory verifier* whether the memory does; verified by
either, the *citation simplifier* drops each citation whose removal keeps it entailed, the sentence joins the
answer and its citations join ``D_L``; verified by neither, the *evidence finder* writes ``queries`` (M) queries
from the question, the previous sentence and this one, retrieves ``docs_per_query`` (N) documents for each,
which replace ``D_S``, and the sentence is written again. ``trials`` (T) is the number of evidence-finder
rounds a sentence may have: when the sentence written after the T-th still fails, it is kept with its own
citations and marked unverified (the paper's ``t > T`` would allow T + 1). The answer ends at an end marker
(``End.``), an empty completion, a completion holding only sentences already written, or ``max_sentences``; short
of ``min_sentences``, a completion holding only sentences already written is drawn again first (another seed, at
most ``repeat_retries`` times, none at temperature 0: :meth:`VtgMethod.draw_sentence`), so is one that would end
it otherwise (a prompt echo, ``End.`` before it is offered, an empty completion; at most ``short_retries`` times),
and an answer that still ends short is counted (``short_answer``).
``sentence_prompt`` chooses the generator's prompt (``vtg-sentence@2``: write the next sentence only;
``vtg-sentence@3``: continue the answer, the first new sentence kept; ``prompts/vtg.py``), ``min_sentences``
from which sentence on ``End.`` is offered, and ``repeat_overlap`` which sentences are repeats, skipped
(``vtg_steps.repeat_of``: exact ones, and below 1.0 those whose content words one written sentence holds at that
share; a new run's default 0.8, a resumed folder's what it recorded, 1.0 before the option: ``upgrade_manifest``;
``repeat_retries`` and ``short_retries`` likewise: 2, what was recorded, 0 before the option). ``strip_preamble``
cuts a sentence's leading phrase that names the sources ("Based on the provided search results,",
``vtg_steps.strip_preamble``; True, what was recorded, False before the option), the sentence as written traced;
``strip_source_leads`` likewise a lead that names its source by its markers ("Document [2] mentions that",
``vtg_remarks.strip_source_lead``, after a preamble cut too; likewise, traced and counted as a preamble);
``drop_source_remarks`` skips, as a repeat, a sentence that only remarks on the sources ("This information can be
found in documents [1], [2], and [5].", ``vtg_remarks.is_source_remark``; a completion of nothing else ends the
answer, ``source-remark``, drawn again within ``short_retries``), ``tidy_citations`` removes a sentence's lists of
markers with their separators (``vtg_remarks.without_citations``; both likewise), and ``strip_list_markers`` reads a
completion written as a list as its items, its markers cut, a bare "2." and a lead-in ("The types include:")
skipped (``vtg_lists.py``; likewise), and ``question_quotes`` reads a sentence that quotes the question as a
prompt echo (``vtg_steps.quotes_question``: 'The answer to the question "Why ...?" is that', which Punkt cuts after
the quoted question mark; likewise).

The answer's ``[n]`` refer to one final list, every document that entered the memory in the order it entered
(the record's ``passages``), so the record is an ALCE item and ``vericite evaluate --task alce`` scores it as it
scores ALCE's baselines. Without ``--index``, the evidence finder searches the question's own documents (all
of them, not only the first k; TF-IDF, ``vtg_steps.PoolSearch``). Ablations (the paper's Table 3):
``query_generation: false`` retrieves with the sentence itself, ``verifier: false`` keeps every sentence with the
citations it was given (no verifier, no evidence finder, no simplifier), ``simplifier: false`` keeps the
verified citations as they are (at most ``at_most_citations``: the memory verifier's whole memory is cut to its
first three). ``simplifier_batch`` (default false) has the simplifier judge every check it could make next in one
judge call (``vtg_steps.Verifier.simplify``: the same removals as one call per check, more pairs judged when a
round's first check removes; docs/benchmarks.md). ``simplifier_strategy`` (default greedy, the paper's; a resumed
run keeps its own, greedy before the option) set to halving drops chunks of citations at once, halved while they
cannot be dropped (``vtg_simplify.py``: the greedy result under a monotone judge in fewer judge calls; for a
memory of many triples). Each step is traced in the record's ``vtg`` (``vtg_trace.py``).
The options and the registry factory are ``vtg_build.py``'s (re-exported here); the verifier's judge, metered and
never a crash, ``vtg_judge.py``'s.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping, Sequence

from ..attribution.kg import PARSER_ID as KG_PARSER_ID
from ..errors import VericiteError
from ..models.usage import metered
from ..totals import status_totals
from ..types import GenParams, Passage, Sample
from . import vtg_kg as K
from . import vtg_steps as S
from .prompts import vtg as P
from .vtg_build import BEFORE_OPTIONS, DEFAULT_MODEL, INDEX_DEPTH, VtgOptions, build, from_spec  # noqa: F401  (re-exported: the registry names vtg:from_spec)
from .vtg_judge import MeteredJudge
from .vtg_memory import MEMORY_RULE, Memory
from .vtg_simplify import SIMPLIFIER_STRATEGY
from .vtg_trace import COMPONENTS, LIST_MARKERS, NEAR_REPEATS, PREAMBLES, REMARKS, SHORT_RETRY_COUNTS, SentenceTrace, Tracer, Trial, summarise_traces

VERSION = 1
CITATION_FORMAT = "alce"
#: each option of vtg_build.BEFORE_OPTIONS (added after vtg@1's first runs) as a new run takes it when not given
NEW_RUN: dict[str, Any] = {
    "repeat_overlap": S.REPEAT_OVERLAP, "repeat_retries": S.REPEAT_RETRIES, "short_retries": S.SHORT_RETRIES, "strip_preamble": S.STRIP_PREAMBLE,
    "strip_source_leads": S.STRIP_SOURCE_LEADS, "drop_source_remarks": S.DROP_SOURCE_REMARKS, "tidy_citations": S.TIDY_CITATIONS,
    "simplifier_strategy": SIMPLIFIER_STRATEGY, "strip_list_markers": S.STRIP_LIST_MARKERS, "question_quotes": S.QUESTION_QUOTES,
}  # fmt: skip
assert set(NEW_RUN) == set(BEFORE_OPTIONS)
#: what the progress line calls a completion drawn again, by why it would have ended the answer
REDRAWN = {"repeated": "repeat", "prompt-echo": "prompt echo", "end-marker": "early End.", "empty": "empty completion", S.SOURCE_REMARK: "source remark"}


def with_citations(sentence: str, numbers: Sequence[int]) -> str:
    """``sentence`` with ``[n][m]`` put before its final punctuation, as ALCE's answers cite."""
    marks = "".join(f"[{n}]" for n in numbers)
    if not marks:
        return sentence
    s = sentence.rstrip()
    if s and s[-1] in ".!?":
        return f"{s[:-1].rstrip()} {marks}{s[-1]}"
    return f"{s} {marks}"


class VtgMethod:
    """VTG over documents (module docstring); built by :func:`from_spec`."""

    def __init__(self, backend: Any, opts: VtgOptions, *, judge: Any, seed: int = 0, retriever: Any = None, kg_retriever: Any = None, store: Any = None) -> None:
        from ..registry import create
        from .vtg_trace import COMPONENTS

        self.id = f"vtg@{VERSION}"
        self.backend = backend
        self.opts = opts
        self.judge = judge
        self.seed = seed
        self.retriever = retriever
        self.kg_retriever = kg_retriever  # KaLMA's retrieval over a graph store: a memory of triples
        self.store = store  # a store this method opened, closed by close()
        self.format = create("formats", CITATION_FORMAT)
        self.params = GenParams(max_tokens=opts.max_tokens, temperature=opts.temperature, top_p=opts.top_p, seed=seed)
        self.cite_params = GenParams(max_tokens=opts.cite_max_tokens, temperature=0.0, seed=seed)
        self.query_params = GenParams(max_tokens=opts.queries_max_tokens, temperature=0.0, seed=seed)
        # each option added after vtg@1's first runs (NEW_RUN): as given (a resumed run is given what its folder
        # recorded: VtgOptions.resumed_options), else a new run's default; read as self.<option>
        for name, default in NEW_RUN.items():
            setattr(self, name, default if getattr(opts, name) is None else getattr(opts, name))
        self.report_step: Any = None  # the run's progress: "sentence 2, trial 1" (protocols.StepShowing)
        assert set(COMPONENTS) >= {"sentence", "cite", "queries", "verify"}

    # ------------------------------------------------------------------ documents

    def documents_for(self, sample: Sample) -> tuple[list[Passage], dict[str, Any] | None]:
        mode = self.opts.documents
        if self.retriever is None or mode == "given" or (mode == "auto" and sample.passages):
            return list(sample.passages), None
        t0 = time.perf_counter()
        found = self.search_index(sample.question, self.opts.k)
        return found, {"retriever": getattr(self.retriever, "id", type(self.retriever).__name__), "found": len(found), "seconds": round(time.perf_counter() - t0, 4)}

    def search_index(self, query: str, depth: int) -> list[Passage]:
        return [e for e in self.retriever.retrieve(query).evidence if isinstance(e, Passage)][:depth]

    def show_steps(self, report: Any) -> None:
        """The run's progress names the sentence and trial being written (``protocols.StepShowing``)."""
        self.report_step = report

    def _step(self, text: str) -> None:
        if self.report_step is not None:
            self.report_step(text)

    # ------------------------------------------------------------------ Algorithm 1

    def is_kg(self, sample: Sample) -> bool:
        """A memory of triples: a graph store to retrieve from, or a question that carries triples, no documents."""
        return self.kg_retriever is not None or (not sample.passages and bool(sample.knowledge))

    def answer(self, sample: Sample) -> dict[str, Any]:
        t0 = time.perf_counter()
        o = self.opts
        kg = self.is_kg(sample)
        search: S.Search
        if kg:
            docs, retrieval = K.triples_for(sample, self.kg_retriever)
            search = K.KgSearch(self.kg_retriever) if self.kg_retriever is not None else S.PoolSearch(docs)
            if o.kg_k is None:
                memory = Memory(docs)  # KaLMA's whole (re-ranked) set, as KaLMA's prompt gets it
            else:  # the top kg_k; the rest stays the evidence finder's (searched before the store)
                memory = Memory(docs[: o.kg_k])
                if self.kg_retriever is not None and docs[o.kg_k :]:
                    search = K.RestFirst(S.PoolSearch(docs[o.kg_k :]), search)
        else:
            docs, retrieval = self.documents_for(sample)
            search = self.search_index if (self.retriever is not None and o.documents != "given") else S.PoolSearch(docs)
            memory = Memory(docs[: o.k])
        tracer = Tracer(near_repeats=self.repeat_overlap < 1.0, retries=self.repeat_retries > 0, short_retries=self.short_retries > 0, preamble=self.strip_preamble or self.strip_source_leads, remarks=self.drop_source_remarks,
                        lists=self.strip_list_markers)
        gen = metered(self.backend, tracer.meters["sentence"])
        cite = metered(self.backend, tracer.meters["cite"])
        ask = metered(self.backend, tracer.meters["queries"])
        verifier = S.Verifier(MeteredJudge(self.judge, tracer), tracer, sample.question, o.memory_words)
        written: list[str] = []
        parts: list[str] = []
        for index in range(o.max_sentences):
            st = SentenceTrace(index)
            tracer.sentences.append(st)
            kept = self.one_sentence(sample, memory, written, st, tracer, verifier, search, gen, cite, ask)
            if kept is None:
                break
            sentence, numbers, verified = kept
            written.append(sentence)
            if kg:
                st.kept = K.with_triple_citations(sentence, [memory.doc(n - 1) for n in numbers], verified or not o.verifier)
            else:
                st.kept = with_citations(sentence, numbers)
            st.verified = verified
            parts.append(st.kept)
        else:
            tracer.end = "sentence-cap"
            tracer.count("sentence_cap")
        if not parts:
            tracer.count("empty_answer")
        output = " ".join(parts)
        if kg:
            record = K.kg_record(sample, output, memory.catalogue())
        else:
            passages = memory.catalogue()
            parsed = self.format.parse(output, passages)
            record = dataclasses.replace(sample, passages=passages).to_dict()
            record.setdefault("passages", [])
            record.update(answer=parsed.to_dict(), citation_status=parsed.status_counts(), subtask=self.subtask_for(sample))
        record.update(
            method=self.id,
            prompt=o.sentence_prompt,
            prompts=self.prompt_ids(),
            output=output,
            seconds=round(time.perf_counter() - t0, 3),
            vtg=tracer.to_dict(),
        )
        if retrieval is not None:
            record["retrieval"] = retrieval
        return record

    def one_sentence(self, sample: Sample, memory: Memory, written: list[str], st: SentenceTrace, tracer: Tracer, verifier: S.Verifier, search: Any, gen: Any, cite: Any, ask: Any) -> tuple[str, list[int], bool] | None:
        """Algorithm 1's loop for one sentence: (sentence, 1-based citations, verified), or None at the end."""
        o = self.opts
        t = 0
        while True:
            tracer.mark()
            self._step(f"sentence {st.index + 1}, trial {t + 1}")
            trial = Trial(trial=t, memory=memory.sizes())
            st.trials.append(trial)
            sentence, why = self.draw_sentence(sample, memory, written, trial, tracer, gen)
            if sentence is None:
                trial.outcome, tracer.end = "end", why
                if why == "repeated":
                    tracer.count("repeated_sentence")
                if (tracer.retries or tracer.short_retries) and len(written) < o.min_sentences:
                    tracer.count("short_answer")
                trial.tokens = tracer.since_mark()
                return None
            trial.sentence = sentence
            with tracer.timed("cite"):
                cited, bad, trial.cite_raw = S.generate_citations(cite, sentence, memory, self.cite_params, o.at_most_citations)
            trial.citations, trial.generated_citations = [c + 1 for c in cited], [c + 1 for c in cited]
            if bad:
                tracer.count("citations_out_of_range", bad)
            if not cited:
                tracer.count("no_citation")
            verified = False
            final = list(cited)
            if not o.verifier:
                trial.outcome = "accepted"
            else:
                trial.generation_verifier = verifier.generation(memory, cited, sentence)
                if trial.generation_verifier["entailed"]:
                    trial.outcome, verified = "verified-citations", True
                else:
                    trial.memory_verifier, final = verifier.memory(memory, sentence)
                    if trial.memory_verifier["entailed"]:
                        trial.outcome, verified = "verified-memory", True
                    elif t >= o.trials:
                        trial.outcome, final = "unverified", list(cited)
                        tracer.count("unverified_sentences")
                    else:
                        self.find_evidence(sample, written, sentence, memory, trial, tracer, search, ask)
                        trial.outcome = "retry"
                        trial.tokens = tracer.since_mark()
                        t += 1
                        continue
            if verified and o.simplifier:
                final, trial.simplifier = verifier.simplify(memory, final, sentence, batch=o.simplifier_batch, strategy=self.simplifier_strategy)
            if len(final) > o.at_most_citations:
                trial.simplifier = {**(trial.simplifier or {}), "cut": [c + 1 for c in final[o.at_most_citations :]]}
                final = final[: o.at_most_citations]
            if verified:
                memory.remember(final)
            trial.citations = [c + 1 for c in final]
            trial.tokens = tracer.since_mark()
            return sentence, [c + 1 for c in final], verified

    def draw_sentence(self, sample: Sample, memory: Memory, written: list[str], trial: Trial, tracer: Tracer, gen: Any) -> tuple[str | None, str]:
        """The sentence generator's sentence for ``trial`` (seed: the method's + the trial's number), or None and
        why the answer ends. Short of ``min_sentences`` (``End.`` not offered), a completion that held only
        repeats is drawn again, at most ``repeat_retries`` times, and one that would end the answer otherwise (a
        prompt echo, ``End.``, an empty completion, only remarks on the sources) at most ``short_retries`` times in
        all; the r-th draw again, of either kind, with seed + trial + r * (trials + 1) (no seed another trial of the
        sentence uses); none at temperature 0, which would write it again. Each retry is counted
        (``repeat_retries``; the others by reason, :data:`SHORT_RETRY_COUNTS`, ``source_remark_retries``) and traced
        (``trial.retries``, ``trial.short_retries``), each near repeat and each remark on the sources skipped too
        (``near_repeated_sentence``, ``trial.near_repeats``; ``source_remark_dropped``, ``trial.source_remarks``)."""
        o = self.opts
        offer_end = len(written) >= o.min_sentences
        asked = not offer_end and self.params.temperature > 0
        budget = {"repeat": self.repeat_retries if asked else 0, "short": self.short_retries if asked else 0}
        used = {"repeat": 0, "short": 0}
        r = 0
        while True:
            seed = self.seed + trial.trial + r * (o.trials + 1)
            skipped: list[tuple[str, int, float]] = []
            cut: list[tuple[str, str]] | None = [] if self.strip_preamble else None
            remarks: list[str] | None = [] if self.drop_source_remarks else None
            leads: list[tuple[str, str]] | None = [] if self.strip_source_leads else None
            listed: list[dict[str, str]] | None = [] if self.strip_list_markers else None
            with tracer.timed("sentence"):
                sentence, why, trial.raw = S.generate_sentence(
                    gen, sample.question, memory, written, dataclasses.replace(self.params, seed=seed), prompt=o.sentence_prompt, offer_end=offer_end,
                    overlap=self.repeat_overlap, skipped=skipped, preambles=cut, remarks=remarks, tidy=self.tidy_citations, leads=leads, lists=listed,
                    question_quotes=self.question_quotes,
                )
            if skipped:
                tracer.count(NEAR_REPEATS, len(skipped))
                trial.near_repeats += [{"sentence": s, "repeats": i, "overlap": round(c, 4), "draw": r} for s, i, c in skipped]
            led = cut or leads  # a lead cut is traced and counted as a preamble is
            if led:
                tracer.count(PREAMBLES)
                trial.preamble = {"original": led[0][0], "stripped": led[0][1]}
            if listed:
                tracer.count(LIST_MARKERS, len(listed))
                trial.list_markers += [{**x, "draw": r} for x in listed]
            if remarks:
                tracer.count(REMARKS[0], len(remarks))
                trial.source_remarks += [{"sentence": x, "draw": r} for x in remarks]
            kind = "repeat" if why == "repeated" else "short"
            if sentence is not None or used[kind] == budget[kind]:
                return sentence, why
            used[kind] += 1
            if kind == "repeat":
                tracer.count("repeat_retries")
                trial.retries.append({"seed": seed, "raw": trial.raw})
            else:
                tracer.count(REMARKS[1] if why == S.SOURCE_REMARK else SHORT_RETRY_COUNTS[why])
                trial.short_retries.append({"why": why, "seed": seed, "raw": trial.raw})
            r += 1
            self._step(f"sentence {len(written) + 1}, trial {trial.trial + 1}, {REDRAWN[why]} drawn again ({used[kind]} of {budget[kind]})")

    def find_evidence(self, sample: Sample, written: Sequence[str], sentence: str, memory: Memory, trial: Trial, tracer: Tracer, search: Any, ask: Any) -> None:
        o = self.opts
        previous = written[-1] if written else ""
        if o.query_generation:
            with tracer.timed("queries"):
                queries, _raw = S.generate_queries(ask, sample.question, previous, sentence, o.queries, self.query_params)
            if not queries:
                tracer.count("queries_unreadable")
                queries = [sentence]
        else:
            queries = [sentence]
        self._step(f"sentence {len(written) + 1}, evidence finder")
        with tracer.timed("retrieval"):
            found, by_query = S.find_evidence(search, queries, o.docs_per_query, memory)
        if not found:
            tracer.count("retrieval_empty")
        memory.replace_short(found)
        trial.queries = list(queries)
        trial.retrieved = {q: [memory.add(d) + 1 for d in ds] for q, ds in by_query.items()}

    # ------------------------------------------------------------------ the run

    def subtask_for(self, sample: Sample) -> str:
        from ..datasets.alce import subtask_of

        return subtask_of(sample) if self.opts.subtask == "auto" else self.opts.subtask

    def check_samples(self, samples: Sequence[Sample], dataset: str) -> None:
        """Questions must carry documents (or triples) unless an index (or a graph store) is given."""
        if self.kg_retriever is None and (self.retriever is None or self.opts.documents == "given"):
            bare = [s.id for s in samples if not s.passages and not s.knowledge]
            if bare:
                how = "none of them" if len(bare) == len(samples) else f"{len(bare)} of {len(samples)} (first: {bare[0]})"
                raise VericiteError(f"the questions of {dataset!r} must carry documents for method vtg, and {how} do: pass --index DIR to retrieve documents (see `vericite docs index`), or --store DIR to retrieve triples")

    def manifest(self) -> dict[str, Any]:
        o = self.opts
        from ..knowledge.docs.retrievers import corpus_identity

        corpus = corpus_identity(self.retriever) if self.retriever is not None else None
        return {
            "method": self.id,
            "model": self.backend.identity().to_dict(),
            "prompt": o.sentence_prompt,
            "prompts": self.prompt_ids(),
            "parser": self.parser_id(),
            "seed": self.seed,
            "judge": getattr(self.judge, "id", None),
            "k": o.k, **({"kg_k": o.kg_k} if o.kg_k is not None else {}), "queries": o.queries, "docs_per_query": o.docs_per_query, "trials": o.trials,
            "max_sentences": o.max_sentences, "min_sentences": o.min_sentences, **{name: getattr(self, name) for name in NEW_RUN},
            "ablation": {"query_generation": o.query_generation, "verifier": o.verifier, "simplifier": o.simplifier},
            "simplifier_batch": o.simplifier_batch,
            "memory_rule": MEMORY_RULE.format(words=o.memory_words),
            "at_most_citations": o.at_most_citations,
            "documents": o.documents,
            "retriever": getattr(self.retriever, "id", None) if self.retriever is not None else None,
            "memory": ("triples (KaLMA's retrieval over the store)" if o.kg_k is None else f"triples (the top {o.kg_k} of KaLMA's retrieval over the store, the rest the evidence finder's)") if self.kg_retriever is not None else "documents (triples for questions that carry only triples)",
            "evidence_search": "index" if self.retriever is not None else "the question's own documents (tfidf@1)",
            "params": {"sentence": self.params.to_dict(), "cite": self.cite_params.to_dict(), "queries": self.query_params.to_dict()},
            **({"index_corpus": corpus} if corpus is not None else {}),  # an index rebuilt in place is another retrieval
        }  # fmt: skip

    def upgrade_manifest(self, old: Mapping[str, Any]) -> dict[str, Any]:
        """A ``vtg@1`` manifest written before the near-repeat rule (``protocols.ManifestUpgrading``): it skipped
        exact repeats only, ``repeat_overlap`` 1.0; one written before ``repeat_retries`` (or ``short_retries``):
        never drew a completion again, 0; before ``strip_preamble`` (``strip_source_leads``): cut no preamble (lead), False; before
        ``drop_source_remarks`` / ``tidy_citations``: kept remarks, removed markers ALCE's way, False; before
        ``strip_list_markers``: read a list as prose, False; before
        ``simplifier_strategy``: the paper's greedy simplifier. ``generate --resume``
        / ``run --resume`` build the method with those values when the options are not given
        (``VtgOptions.resumed_options``), so the run goes on as it began; a method built otherwise (another value
        given) is told apart here, in one line, not mixed into the run."""
        if old.get("method") != self.id:
            return dict(old)
        if str(old.get("memory", "")).startswith("triples") and old.get("parser") == self.format_id():
            old = {**old, "parser": KG_PARSER_ID}  # written before the parser of a memory of triples was recorded as such
        return {**BEFORE_OPTIONS, **old}

    def format_id(self) -> str:
        return str(getattr(self.format, "id", CITATION_FORMAT))

    def parser_id(self) -> str:
        """The parser of the run's answers: KaLMA's for a memory of triples from a store (each record's ``answer``
        names its own: a question that carries only triples is parsed as KaLMA's in a run without a store)."""
        return KG_PARSER_ID if self.kg_retriever is not None else self.format_id()

    def prompt_ids(self) -> dict[str, str]:
        return {**P.PROMPT_IDS, "sentence": self.opts.sentence_prompt}

    def close(self) -> None:
        """Close the graph store this method opened (not the model)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def summarise(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """Citation-status totals; VTG's problems, trials, evidence rounds, judge calls and usage by component
        (``verify``: the judge's model calls) summed over the answers."""
        traces = [r["vtg"] for r in records if isinstance(r.get("vtg"), dict)]
        return {
            "citation_status": status_totals(r.get("citation_status", {}) for r in records),
            "na_count": sum(r.get("na_count", 0) for r in records),
            "vtg": summarise_traces(traces),
            **_retrieved(records),
        }


def _retrieved(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """With documents retrieved (``--index``): for how many questions, and for how many the retriever found none
    (the long-term memory started empty)."""
    found = [r["retrieval"].get("found") for r in records if isinstance(r.get("retrieval"), dict) and "found" in r["retrieval"]]
    return {"retrieved": {"questions": len(found), "none_found": sum(1 for n in found if not n)}} if found else {}
