"""VTG's options and its registry factory (``vtg@1``; the method itself is ``vtg.py``'s :class:`VtgMethod`):
:class:`VtgOptions`, the ``--method-arg`` model, and :func:`build` / :func:`from_spec`, which read them and open
the model, the index's retriever, the graph store and the verifier's judge. ``vtg.py`` re-exports every name here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import VericiteError, validation_message
from .vtg_judge import verifier_refusal
from .vtg_simplify import STRATEGIES

if TYPE_CHECKING:
    from .vtg import VtgMethod

DEFAULT_MODEL = "qwen2.5-coder-1.5b"
#: how deep the index is searched for the evidence finder (documents already in D_L are skipped)
INDEX_DEPTH = 50


#: said when vtg is given k with a store (``--k`` with ``--store``, or a run's config or experiment level): k is the
#: documents' long-term memory, not the triples'
VTG_K_WITH_STORE = (
    "warning: vtg: --k is not applied to a memory of triples (--store): its long-term memory starts with all of KaLMA's "
    "retrieval; to keep only the top N re-ranked triples there (the rest left to the evidence finder), give --method-arg kg_k=N"
)


def k_with_store_note(method: str | None, method_args: dict[str, Any] | None) -> str | None:
    """:data:`VTG_K_WITH_STORE` when ``k`` is given to vtg with a graph store and no ``kg_k`` (k bounds documents
    only; the run goes on as given, its manifest records k as it always did), else None."""
    args = method_args or {}
    if method == "vtg" and "k" in args and args.get("store") and args.get("kg_k") is None:
        return VTG_K_WITH_STORE
    return None


#: the options added after ``vtg@1``'s first runs, each with what a folder written before it ran with (recorded
#: only when set: ``VtgOptions.recorded_when_set``): ``VtgOptions.resumed_options`` resumes such a folder with these,
#: ``VtgMethod.upgrade_manifest`` reads its manifest with them
BEFORE_OPTIONS: dict[str, Any] = {
    "repeat_overlap": 1.0, "repeat_retries": 0, "short_retries": 0, "strip_preamble": False, "strip_source_leads": False,
    "drop_source_remarks": False, "tidy_citations": False, "simplifier_strategy": "greedy", "strip_list_markers": False,
    "question_quotes": False,
}  # fmt: skip


def _of_kind(value: Any, before: Any) -> bool:
    """Whether a recorded ``value`` can stand for an option whose value before it was ``before``: a bool for a
    bool, a number (not a bool) for a number, a known strategy for the simplifier's."""
    if isinstance(before, bool):
        return isinstance(value, bool)
    if isinstance(before, (int, float)):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return value in STRATEGIES


class VtgOptions(BaseModel):
    """VTG's options (``--method-arg KEY=VALUE``; ``--k``, ``--queries``, ``--docs-per-query``, ``--trials``,
    ``--judge``, ``--no-query-generation``, ``--no-verifier``, ``--no-simplifier``, ``--index``, ``--retriever``,
    ``--max-tokens``, ``--temperature`` as flags)."""

    model_config = ConfigDict(extra="forbid")
    #: recorded only when set (protocols.MethodOptions), so the runs written before it are the same runs
    recorded_when_set: ClassVar[tuple[str, ...]] = ("kg_k", *BEFORE_OPTIONS)

    @classmethod
    def notes(cls, method_args: dict[str, Any]) -> list[str]:
        """What the given options are warned about (``protocols.MethodOptions``): k with a store (k_with_store_note)."""
        said = k_with_store_note("vtg", method_args)
        return [said] if said else []

    @classmethod
    def resumed_options(cls, method_args: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
        """The options a folder being resumed sets where ``method_args`` leave them unset
        (``protocols.MethodOptions``): each of :data:`BEFORE_OPTIONS` as its manifest records it, and the value
        there when a ``vtg@1`` manifest records none (what a folder written before the option ran with: 1.0, 0,
        False, greedy), and ``kg_k`` as its manifest records it (none: all of KaLMA's retrieval, the option left
        unset), so a run goes on as it began. A recorded value of the wrong kind is left out (the option's default)."""
        if manifest.get("method") != "vtg@1":
            return {}
        out: dict[str, Any] = {}
        for key, before in BEFORE_OPTIONS.items():
            recorded = manifest.get(key, before)
            if method_args.get(key) is None and _of_kind(recorded, before):
                out[key] = type(before)(recorded)
        recorded = manifest.get("kg_k")  # recorded only when set: a folder without it kept all of KaLMA's retrieval
        if method_args.get("kg_k") is None and isinstance(recorded, int) and not isinstance(recorded, bool) and recorded >= 1:
            out["kg_k"] = recorded
        return out

    k: int = Field(default=5, ge=1)  # documents in D_L at the start
    kg_k: int | None = Field(default=None, ge=1)  # a memory of triples: D_L = the top kg_k re-ranked triples (None: all), the rest left to the evidence finder
    queries: int = Field(default=2, ge=1)  # M
    docs_per_query: int = Field(default=2, ge=1)  # N
    trials: int = Field(default=3, ge=0)  # T: evidence-finder rounds per sentence
    max_sentences: int = Field(default=6, ge=1)
    min_sentences: int = Field(default=1, ge=1)  # End. is offered from the min_sentences-th sentence on
    sentence_prompt: Literal["vtg-sentence@2", "vtg-sentence@3"] = "vtg-sentence@2"
    # the sentence generator's repeat rule (vtg_steps.repeat_of): a sentence whose content words one written sentence
    # holds at this share or more is skipped as a repeat; 1.0: exact repeats only (the rule before the option).
    # None (not given): a new run takes vtg_steps.REPEAT_OVERLAP (0.8), a resumed one what its folder recorded
    # (1.0 for a folder written before the option: resumed_options); the manifest records the value used
    repeat_overlap: float | None = Field(default=None, gt=0.0, le=1.0)
    # while the answer holds fewer than min_sentences sentences, a completion that held only repeats is drawn again
    # (another seed) at most this many times before the answer ends there (counted short_answer); 0: it ends at
    # once (the rule before the option). None: a new run takes vtg_steps.REPEAT_RETRIES (2), a resumed one what its
    # folder recorded (0 for a folder written before the option: resumed_options); the manifest records the value
    repeat_retries: int | None = Field(default=None, ge=0)
    # likewise for the other completions that would end the answer short of min_sentences: a prompt echo, End.
    # written before it is offered, an empty completion; each drawn again (another seed) at most this many times in
    # all, apart from repeat_retries. None: a new run takes vtg_steps.SHORT_RETRIES (2), a resumed one what its
    # folder recorded (0 for a folder written before the option: resumed_options); the manifest records the value
    short_retries: int | None = Field(default=None, ge=0)
    # cut a leading phrase that names the sources ("Based on the provided search results,", vtg_steps.PREAMBLE) from
    # each sentence written, its first letter capitalised; the trace keeps the sentence as written. None: a new run
    # takes vtg_steps.STRIP_PREAMBLE (True), a resumed one what its folder recorded (False before the option)
    strip_preamble: bool | None = None
    # cut a sentence's lead phrase that names its source by its markers ("Document [2] mentions that", "As stated in
    # [1],", vtg_remarks.SOURCE_LEAD), read on the sentence as written, its first letter capitalised; traced and
    # counted as a preamble (its lead and the sentence as written, markers and all). None: a new run takes
    # vtg_steps.STRIP_SOURCE_LEADS (True), a resumed one what its folder recorded (False before the option)
    strip_source_leads: bool | None = None
    # skip a sentence that only remarks on the sources ("This information can be found in documents [1], [2], and
    # [5].", vtg_remarks.is_source_remark) as a repeat is skipped; a completion of nothing else ends the answer
    # (source-remark), drawn again short of min_sentences within short_retries; each traced as written. None: a new
    # run takes vtg_steps.DROP_SOURCE_REMARKS (True), a resumed one what its folder recorded (False before the option)
    drop_source_remarks: bool | None = None
    # remove a sentence's lists of citation markers with the separators between them ("in documents [1], [2], and
    # [5]." -> "in documents.", vtg_remarks.without_citations), not ALCE's way ("in documents,, and."). None: a new run
    # takes vtg_steps.TIDY_CITATIONS (True), a resumed one what its folder recorded (False before the option)
    tidy_citations: bool | None = None
    # read a completion written as a list as its items (vtg_lists.list_sentences): markers and emphasis cut, a bare
    # "2." and a lead-in ("The types include:") skipped, each traced. None: a new run takes
    # vtg_steps.STRIP_LIST_MARKERS (True), a resumed one what its folder recorded (False before the option)
    strip_list_markers: bool | None = None
    # read a sentence that quotes the question ('The answer to the question "Why ...?" is that', which Punkt cuts
    # after the quoted question mark, as ALCE's evaluation does) as a prompt echo (vtg_steps.quotes_question): drawn
    # again short of min_sentences within short_retries, else the answer ends. None: a new run takes
    # vtg_steps.QUESTION_QUOTES (True), a resumed one what its folder recorded (False before the option)
    question_quotes: bool | None = None
    query_generation: bool = True
    verifier: bool = True
    simplifier: bool = True
    simplifier_batch: bool = False  # one judge call per round of the simplifier's checks (same removals as one per check)
    # how the simplifier drops citations (vtg_simplify.py): greedy, the paper's one judge call per citation; halving,
    # chunks dropped at once and halved while they cannot be (the greedy result under a monotone judge, fewer
    # calls). None: a new run takes vtg_simplify.SIMPLIFIER_STRATEGY (greedy), a resumed one what its folder
    # recorded (greedy before the option: resumed_options); the manifest records the strategy used
    simplifier_strategy: Literal["greedy", "halving"] | None = None
    # default: llm:<the method's model>; any judge of the method's model (llm3:<model>...) runs on the method's own
    # backend; a three-way judge verifies at P(supports) >= 0.5, a four-class one is refused (vtg_judge.VERIFIER_RULE)
    verifier_judge: str | None = None
    memory_words: int = Field(default=1500, ge=1)
    at_most_citations: int = Field(default=3, ge=1)
    documents: Literal["auto", "given", "retrieve"] = "auto"
    index: str | None = None
    store: str | None = None  # a graph store: memory of triples, D_L and the evidence finder by KaLMA's retrieval
    knowledge: Literal["auto", "given", "retrieve"] = "auto"  # triples: the question's own, or retrieved from store
    retriever: str = "bm25"
    subtask: Literal["auto", "asqa", "qampari", "eli5"] = "auto"
    max_tokens: int = Field(default=100, ge=1)  # the sentence generator's
    cite_max_tokens: int = Field(default=150, ge=1)
    queries_max_tokens: int = Field(default=120, ge=1)
    temperature: float = Field(default=0.5, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)

    @field_validator("simplifier", mode="before")
    @classmethod
    def _simplifier_is_a_switch(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().lower() in ("greedy", "halving"):
            raise ValueError(f"simplifier is the ablation switch (true or false); the strategy is simplifier_strategy={v.strip().lower()}")
        return v


def build(arg: str, *, ctx: Any, backend: Any = None, seed: int = 0, judge: Any = None, **method_args: Any) -> VtgMethod:
    """Registry factory: ``vtg:<model>`` (default qwen2.5-coder-1.5b), or ``backend=`` a ready one; ``judge`` and
    ``retriever`` (when not a string) ready objects instead of those the options name."""
    from ..models import model_loader
    from ..registry import create
    from .vtg import VtgMethod  # vtg.py imports this module

    retriever = None
    if not isinstance(method_args.get("retriever", ""), str):
        retriever = method_args.pop("retriever")
    try:
        opts = VtgOptions(**method_args)
    except ValidationError as e:
        raise VericiteError(f"method vtg: invalid {validation_message(e)}") from None
    if opts.min_sentences > opts.max_sentences:
        raise VericiteError(f"method vtg: min_sentences ({opts.min_sentences}) is more than max_sentences ({opts.max_sentences}): End. would never be offered")
    if opts.simplifier_batch and opts.simplifier_strategy == "halving":
        raise VericiteError("method vtg: simplifier_batch batches the greedy simplifier's checks; it does not apply to simplifier_strategy=halving (give one of them)")
    if opts.documents == "retrieve" and retriever is None and not opts.index:
        raise VericiteError("method vtg: documents=retrieve needs an index: pass --index DIR (see `vericite docs index`)")
    if opts.knowledge == "retrieve" and not opts.store:
        raise VericiteError("method vtg: knowledge=retrieve needs a graph: pass --store DIR (see `vericite kg load`)")
    model = arg or DEFAULT_MODEL
    if backend is None:
        backend = model_loader(ctx)(model)
    built, judge = judge is None, verifier_judge(opts.verifier_judge, model, backend, ctx) if judge is None else judge
    refused = verifier_refusal(judge)
    if refused:
        from ..protocols import Closeable

        if built and isinstance(judge, Closeable):
            judge.close()  # what it opened (a model of its own stays the loader's, as any other load)
        raise VericiteError(refused)
    if retriever is None and opts.index and opts.documents != "given":
        spec = opts.retriever if ":" in opts.retriever else f"{opts.retriever}:{opts.index}"
        retriever = create("retrievers", spec, ctx, k=max(INDEX_DEPTH, opts.k))
    kg_retriever = store = None
    if opts.store and opts.knowledge != "given":
        from ..knowledge.retrieval import KalmaRetriever
        from ..knowledge.store import open_store

        store = open_store(opts.store)  # read-only, as KaLMA's
        kg_retriever = KalmaRetriever(store)
    return VtgMethod(backend, opts, judge=judge, seed=seed, retriever=retriever, kg_retriever=kg_retriever, store=store)


def verifier_judge(spec: str | None, model: str, backend: Any, ctx: Any) -> Any:
    """The verifiers' judge ``spec`` names (None: ``llm:<model>``). Any judge that loads ``model``, the method's own
    (``llm:<model>@<n>``, ``llm3:<model>``, ``llm3c:<model>``, ``llm3f:<a fit of it>``), gets ``backend``: one model
    loaded, its calls through the same call cache; other models load as ``ctx`` loads them."""
    import dataclasses

    from ..models import model_loader
    from ..registry import create

    if spec is None or spec == f"llm:{model}":
        from ..judges.llm import LLMJudge

        return LLMJudge(backend)
    load = model_loader(ctx)
    own = model.strip()
    return create("judges", spec, dataclasses.replace(ctx, load_model=lambda name: backend if name.strip() == own else load(name)))


def from_spec(arg: str, *, ctx: Any, **kwargs: Any) -> VtgMethod:
    """Registry factory: ``vtg:<model>`` (see :func:`build`)."""
    return build(arg, ctx=ctx, **kwargs)


from_spec.options_model = VtgOptions  # type: ignore[attr-defined]  # (protocols.MethodOptions)
