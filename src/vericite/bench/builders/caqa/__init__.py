"""The CAQA benchmark builder (CAQA §4, Table 3, App. A): four-class attribution items (supportive,
insufficient, contradictory, irrelevant) of four complexity levels, from logical queries over any graph in
vericite's store.

Modules: ``graph`` (the graph's facts in memory; SPARQL grounding with bound parameters), ``queries`` (sampling,
extension, grounding, the edits into the four classes), ``verbalise`` (templates, or an LLM with the paper's
prompts; the answer checks), ``build`` (the resumable build loop and its files), ``card`` (Table 4, checks, card).
"""

from .build import CaqaConfig, build_caqa

__all__ = ["CaqaConfig", "build_caqa"]
