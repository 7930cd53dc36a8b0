"""Citation formats: parse model output into sentences and citations, and render them back.

* ``kg``: knowledge-graph triple citations ``[Q1, property: value]`` and ``[NA]`` (KaLMA, metrics.md §1);
* ``passages``: ALCE passage citations ``[1][2]``;
* ``sentences``: the one bracket finder and sentence splitter both share;
* ``render``: citations back to text, and answers coloured by citation status for the terminal (rich markup).
"""

from __future__ import annotations

from .kg import graph_from_triples, parse_kg_answer
from .passages import parse_passage_answer
from .sentences import clean_text, find_brackets, split_sentences

__all__ = ["clean_text", "find_brackets", "graph_from_triples", "parse_kg_answer", "parse_passage_answer", "split_sentences"]
