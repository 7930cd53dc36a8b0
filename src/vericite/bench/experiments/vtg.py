"""VTG's experiments (seed §3.5–3.7): levels that change the generation, not the samples
(:class:`~vericite.protocols.GenerationVarying`; ``Experiment.generation``):

* ``vtg-docs-per-query`` (N = 1, 2, 3, 4), ``vtg-queries`` (M = 1, 2, 3), ``vtg-trials`` (T = 0, 1, 2, 3):
  Figure 3, one hyper-parameter at a time, the others as the config sets them;
* ``vtg-ablation``: Table 3, level 0 the whole method, 1 without query generation, 2 without the verifiers,
  3 without the simplifier;
* ``vtg-methods``: Tables 1–2 and Figure 4 (tokens) on the same questions, level 0 vanilla, 1 summ, 2 snippet,
  3 rerank (ALCE's baselines with ``ndoc`` = the config's ``k``, 2 shots), 4 VTG with the config's options.

Every level answers the same questions. The report of each draws Figure 4 (§3.7): each level's tokens per question
against its citation F1 (``token_figure``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ...errors import VericiteError
from .base import Experiment, Transformed, factory

VTG_CURVES = (
    ("Citation quality", ("alce_citation_recall", "alce_citation_precision", "alce_citation_f1")),
    ("Correctness", ("str_em", "claims_nli", "rouge_lsum")),
)
ABLATIONS = {0: {}, 1: {"query_generation": False}, 2: {"verifier": False}, 3: {"simplifier": False}}
#: what Figure 4's tokens per question are drawn against in the report of every VTG experiment (§3.7: citation quality)
TOKEN_FIGURE = "alce_citation_f1"
METHODS = {0: "vanilla", 1: "summ", 2: "snippet", 3: "rerank", 4: "vtg"}
#: the options of VTG's a baseline takes too, under its own name
SHARED = {"index": "index", "retriever": "retriever", "documents": "documents", "subtask": "subtask"}


def _same(samples: Any, level: Any, seed: int) -> Transformed:
    """Every level answers the same questions (copies: a level never shares a sample object with another)."""
    return Transformed([dataclasses.replace(s) for s in samples])


def _sweep(option: str) -> Any:
    def generation(level: Any, args: dict[str, Any]) -> dict[str, Any]:
        return {"method": "vtg", "method_args": {**args, option: int(level)}}

    return generation


def _ablation(level: Any, args: dict[str, Any]) -> dict[str, Any]:
    if int(level) not in ABLATIONS:
        raise VericiteError(f"experiment vtg-ablation: levels are 0 (all), 1 (no query generation), 2 (no verifier), 3 (no simplifier), not {level}")
    return {"method": "vtg", "method_args": {**args, **ABLATIONS[int(level)]}}


def _methods(level: Any, args: dict[str, Any]) -> dict[str, Any]:
    name = METHODS.get(int(level))
    if name is None:
        raise VericiteError(f"experiment vtg-methods: levels are 0 vanilla, 1 summ, 2 snippet, 3 rerank, 4 vtg, not {level}")
    if name == "vtg":
        return {"method": "vtg", "method_args": args}
    base = {"ndoc": int(args.get("k", 5)), "shot": 2, **{b: args[v] for v, b in SHARED.items() if v in args}}
    if name == "rerank" and args.get("verifier_judge"):
        base["rerank_judge"] = args["verifier_judge"]
    return {"method": name, "method_args": base}


def _experiment(name: str, x: str, levels: tuple[int, ...], generation: Any, description: str, section: str) -> Experiment:
    return Experiment(name=name, x_label=x, levels=levels, apply=_same, description=description, section=section, curves=VTG_CURVES,
                      generation=generation, token_figure=TOKEN_FIGURE)


VTG_DOCS_PER_QUERY = _experiment("vtg-docs-per-query", "documents per query (N)", (1, 2, 3, 4), _sweep("docs_per_query"), "VTG with N = 1, 2, 3, 4 documents retrieved per query", "VTG §3.6, Figure 3")
VTG_QUERIES = _experiment("vtg-queries", "queries (M)", (1, 2, 3), _sweep("queries"), "VTG with M = 1, 2, 3 generated queries", "VTG §3.6, Figure 3")
VTG_TRIALS = _experiment("vtg-trials", "maximum trials (T)", (0, 1, 2, 3), _sweep("trials"), "VTG with T = 0, 1, 2, 3 evidence-finder rounds per sentence", "VTG §3.6, Figure 3")
VTG_ABLATION = _experiment("vtg-ablation", "ablation (0 all, 1 w/o QG, 2 w/o verifier, 3 w/o simplifier)", (0, 1, 2, 3), _ablation, "VTG without query generation, without the verifiers, without the simplifier", "VTG §3.5, Table 3")
VTG_METHODS = _experiment("vtg-methods", "method (0 vanilla, 1 summ, 2 snippet, 3 rerank, 4 vtg)", (0, 1, 2, 3, 4), _methods, "ALCE's four baselines and VTG on the same questions", "VTG §3.4, §3.7, Tables 1-2, Figure 4")

EXPERIMENTS = {e.name: e for e in (VTG_DOCS_PER_QUERY, VTG_QUERIES, VTG_TRIALS, VTG_ABLATION, VTG_METHODS)}


docs_per_query_from_spec = factory(VTG_DOCS_PER_QUERY)
queries_from_spec = factory(VTG_QUERIES)
trials_from_spec = factory(VTG_TRIALS)
ablation_from_spec = factory(VTG_ABLATION)
methods_from_spec = factory(VTG_METHODS)
