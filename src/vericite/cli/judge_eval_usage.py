"""What a ``vericite judge-eval`` judge's model calls cost: results.json's ``judge_usage`` (per model name, as
``vericite evaluate`` writes it) and ``judge_usage_note`` (what the counts leave out).

The judge is built with a BuildContext whose ``load_model`` puts every model it loads behind a ``UsageMeter``
(``models/usage.py``), so any judge that loads its model through the context (``llm:``, ``llm4:``, ``autois:``
over one of them) is counted, whatever holds the model. Counted: this process's calls, the ones the call cache
answers included (with the tokens first reported). Not counted: the judgements ``--resume`` keeps from an
earlier run (``judgements.jsonl`` holds judgements, not what they cost) -- the note says how many.
With ``--ray`` the workers' usage (``PoolJudge.worker_usage``) is reported instead, the parts ``--resume`` reads back
from ``.ray-calls.jsonl`` with the usage they had; unknown when the Ray checkpoint was written before usage was kept."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

__all__ = ["UsageCounter", "add_to_results", "usage_fields", "usage_line"]


class UsageCounter:
    """Meters the models a judge-eval's judge loads; ``fields(judge, resumed)`` is what results.json gets."""

    def __init__(self, model_opts: Mapping[str, Any]) -> None:
        from ..models import load_model
        from ..models.usage import UsageMeter, metered
        from ..registry import BuildContext

        self.meters: dict[str, Any] = {}
        base = BuildContext(**dict(model_opts))
        served: dict[str, Any] = {}

        def load(name: str) -> Any:
            if name not in served:
                served[name] = metered(load_model(name, ctx=base), self.meters.setdefault(name, UsageMeter()))
            return served[name]

        self.ctx = dataclasses.replace(base, load_model=load)

    def fields(self, judge: Any, resumed: int = 0) -> dict[str, Any]:
        """``{"judge_usage": {model: usage dict}, "judge_usage_note": str}`` for ``judge`` (as built, or ``--ray``'s
        pool) after its judging; ``resumed``: judgements kept from an earlier run."""
        notes = []
        report = getattr(judge, "worker_usage", None)
        if callable(report):  # --ray: the workers made the calls; the local judge's model judged nothing
            remote = report()
            usage = {name: u.to_dict() for name, u in sorted((remote or {}).items())}
            if remote is None:
                notes.append("--ray: the workers' usage is unknown (a .ray-calls.jsonl written before usage was kept); not counted")
        else:
            usage = {name: m.usage.to_dict() for name, m in sorted(self.meters.items())}
        unknown = sum(u.get("uncounted_calls", 0) for u in usage.values())
        if unknown:
            notes.append(f"{unknown} calls of unknown tokens (uncounted_calls: a model or cache entry that did not report them): the token counts are a lower bound")
        if resumed and callable(report):  # --ray --resume: the actors' parts read back keep their usage
            notes.append(f"the {resumed} judgements kept by --resume from judgements.jsonl are not counted (the actors' parts read back from .ray-calls.jsonl are, with the usage they had)")
        elif resumed:
            notes.append(f"this process's calls only: the {resumed} judgements kept by --resume from an earlier run are not counted")
        return {"judge_usage": usage, "judge_usage_note": "; ".join(notes)}


def usage_fields(results: Mapping[str, Any]) -> dict[str, Any]:
    """The usage keys of a judge-eval's results (``judge_usage``, ``judge_usage_note``) that it has, for ``--json``."""
    return {k: results[k] for k in ("judge_usage", "judge_usage_note") if k in results}


def add_to_results(out_dir: Path, fields: Mapping[str, Any]) -> None:
    """Add ``fields`` to ``out_dir/results.json`` (written by the task's own code), atomically."""
    import json

    from .. import jsonl

    path = Path(out_dir) / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results.update(fields)
    jsonl.write_json_atomic(path, results)


def usage_line(fields: Mapping[str, Any]) -> str:
    """One line for the terminal: the judge's tokens per model, and the note."""
    usage = fields.get("judge_usage") or {}
    parts = [f"{name}: {u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion tokens in {u.get('calls', 0)} calls"
             + (f" ({u['uncounted_calls']} of unknown tokens)" if u.get("uncounted_calls") else "") for name, u in usage.items()]
    text = "judge tokens: " + ("; ".join(parts) if parts else "none (no language model called)")
    return text + (f" [{fields['judge_usage_note']}]" if fields.get("judge_usage_note") else "")
