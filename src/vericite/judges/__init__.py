"""Judges: does this evidence support this claim?

Kinds (registered in ``vericite.registry.judges``; a plugin registers more the same way):

* ``triple``: the deterministic triple-support check for knowledge-graph citations (``judges/triple.py``);
* ``nli:<local folder or hub id>``: an NLI cross-encoder or TRUE-style seq2seq model (``judges/nli.py``);
* ``llm:<model name>``: a prompted language model, P(yes) from next-token log-probs (``judges/llm.py``);
  the model is loaded with ``vericite.models.load_model`` and the same build context (threads, cache, server);
* ``llm3:<model name>``, ``nli3:<model>``: three-way judges, supports / refutes / not_enough_info (``judges/three_way.py``);
  ``llm3c:<model name>``: ``llm3`` with contextual calibration on content-free inputs (``judges/calibrated.py``);
  ``llm3f:<fit file>``: ``llm3`` with class biases fitted on labelled pairs (``judges/fitted.py``, ``vericite train llm3f``);
* ``fake``, ``fake-3way`` and ``fake-4class``: deterministic keyword judges for tests (``vericite/fakes/judges.py``);
* ``none``: no judge (``load_judge`` returns None).

Each kind's factory (``from_spec`` in its module) checks its own argument; ``load_judge`` is a thin wrapper
over ``registry.create("judges", spec, ctx)``.

How far a judge can be trusted is measured by ``judges/meta.py`` (``vericite judge-eval``); ``judges/trust.py``
reads the shipped measurements.
"""

from __future__ import annotations

from typing import Any

from .. import registry as r
from ..errors import VericiteError
from ..registry import BuildContext


def parse_judge_spec(spec: str) -> tuple[str, str]:
    """``"kind:argument"`` -> (kind, argument); the argument may itself hold ":" (a Windows path)."""
    kind, _, arg = str(spec).strip().partition(":")
    return kind.strip(), arg.strip()


def load_judge(
    spec: str,
    *,
    threads: int | None = None,
    cache: Any = True,
    base_url: str | None = None,
    api_key: str | None = None,
    timeout: float | None = None,
    retries: int | None = None,
    ctx: BuildContext | None = None,
    **options: Any,
) -> Any:
    """Build a judge from a spec: ``triple``, ``nli:<model dir or hub id>``, ``llm:<model name>``, or any
    registered kind (``kind`` or ``kind:argument``); ``llm:<model name>@<n>`` picks judge prompt n; ``none``: no
    judge (None), for commands whose judge is optional (metrics that need one are then not computed).
    ``threads`` goes to the model (llama.cpp threads, torch intra-op threads); ``cache`` turns the call cache
    (model calls and NLI judgements) on or off; ``base_url``, ``api_key``, ``timeout``, ``retries`` reach the
    judge's model (an ``llm:openai:<model>`` judge asks that server). ``ctx``: a BuildContext to use instead
    of these settings. Other options go to the judge. Built by ``registry.create("judges", spec, ctx)``."""
    kind, arg = parse_judge_spec(spec)
    if kind == "none" and not arg:
        return None
    if not kind:
        raise VericiteError(f"empty judge spec {spec!r}: want triple, nli:<model>, or llm:<model name>")
    if ctx is None:
        ctx = BuildContext(threads=threads, cache=cache, base_url=base_url, api_key=api_key, timeout=timeout, retries=retries)
    return r.create("judges", spec, ctx, **options)


__all__ = ["load_judge", "parse_judge_spec"]
