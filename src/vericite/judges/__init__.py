"""Judges: does this evidence support this claim?

Kinds (registered in ``vericite.registry.judges``; a plugin registers more the same way):

* ``triple``: the deterministic triple-support check for knowledge-graph citations (``judges/triple.py``);
* ``nli:<local folder or hub id>``: an NLI cross-encoder or TRUE-style seq2seq model (``judges/nli.py``);
* ``llm:<model name>``: a prompted language model, P(yes) from next-token log-probs (``judges/llm.py``);
  the model is loaded with ``vericite.models.load_model``.

How far a judge can be trusted is measured by ``judges/meta.py`` (``vericite judge-eval``).
"""

from __future__ import annotations

from typing import Any

from .. import registry as r
from ..errors import VericiteError


def parse_judge_spec(spec: str) -> tuple[str, str]:
    """``"kind:argument"`` -> (kind, argument); the argument may itself hold ":" (a Windows path)."""
    kind, _, arg = str(spec).strip().partition(":")
    return kind.strip(), arg.strip()


def load_judge(spec: str, *, threads: int | None = None, cache: bool = True, **options: Any) -> Any:
    """Build a judge from a spec: ``triple``, ``nli:<model dir or hub id>``, ``llm:<model name>``, or any
    registered kind (``kind`` or ``kind:argument``). ``threads`` goes to the model (llama.cpp threads, torch
    intra-op threads); ``cache`` turns the model call cache on or off; other options go to the judge."""
    kind, arg = parse_judge_spec(spec)
    if not kind:
        raise VericiteError(f"empty judge spec {spec!r}: want triple, nli:<model>, or llm:<model name>")
    factory = r.judges.get(kind)  # an unknown kind gets the registry's did-you-mean error
    if kind == "nli":
        if not arg:
            raise VericiteError("the nli judge needs a model: nli:<local folder or hub id>")
        return factory(arg, threads=threads, **options)
    if kind == "llm":
        if not arg:
            raise VericiteError("the llm judge needs a model: llm:<model name> (see `vericite models`)")
        from ..models import load_model  # lazy: importing vericite.judges loads no model code

        backend = load_model(arg, threads=threads, cache=cache)
        return factory(backend, **options)
    return factory(arg, **options) if arg else factory(**options)


__all__ = ["load_judge", "parse_judge_spec"]
