"""``llm3f:<fit file>``: the three-way LLM judge (``llm3:``, ``judges/three_way.py``) with per-label biases fitted
on labelled pairs (``vericite train llm3f``, ``judges/fit_bias.py``).

``llm3c:`` (``judges/calibrated.py``) divides out a prior asked on content-free inputs, where "Neutral" is the right
answer, so it stops saying Neutral at all (docs/judges.md). ``llm3f:`` takes the bias from pairs with gold labels
instead: a pair's probabilities are ``p(label) * exp(b(label))`` renormalised, ``b`` read from the fit file, which
also names the model it was fitted with. The spec is the file (as ``table:<file>`` and ``caqa:<folder>``); the
model is the one the file names, loaded as ``llm3:`` loads it (so through the call cache).

The id is ``llm3f:<model>:<first 12 hex of the fit file's sha256>@1`` (``@1``: the prompt, ``judge-3way@1``), so
checkpoints and judgement files key on the file's content: another fit is another judge. ``options()`` records the
file, its whole sha256 and the fit's id (``class-bias@1``); ``calibration()`` the biases and where they were fitted
(what ``judge-eval`` and ``evaluate`` write to results.json). Every judgement's ``raw`` keeps the label log-masses,
the ``uncalibrated`` probabilities (what ``llm3:`` says) and the ``bias``.

A missing or unreadable file, one that is not a fit file, of another format or prompt, with a bias that is not a
number, or fitted with another model file (its sha256, or backend and model, differ from the model loaded now) is
one line naming the file, before any pair is judged. :meth:`FittedLLM3Judge.overlap` tells judge-eval whether the
pairs it is asked to judge are pairs the biases were fitted on (a fit on a CAQA dataset counts items of the split it
was fitted on; judge-eval --task caqa takes four-class judges only, so it never measures this one). A fit file from
before ``data.kind`` was recorded (a fit on labelled pairs) reads as before: the format did not change.

Its measured accuracy is the fit file's: judges/measured.json registers a fit under the judge's id with the file's
whole sha256 (``fit_sha256``), and ``vericite evaluate`` attaches it only to a judge whose ``calibration()`` gives
that sha256 (``judges/trust.py``). The fit file itself records no measurement: that would change its sha256, so
the judge's id.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Mapping

from ..errors import ModelUnavailableError, VericiteError
from ..types import JudgePair, Judgement
from .fit_bias import FIT_FORMAT, FIT_ID, FIT_KIND, OBJECTIVE
from .three_way import LABELS, PROMPT_ID, LLM3Judge, three_way

MAKE = "make one with `vericite train llm3f --model <model name> --data <labelled pairs or a CAQA dataset> --out {path}`"


def read_fit(path: str | Path) -> tuple[dict[str, Any], str]:
    """The fit file's content, checked, and its sha256; one-line errors (module doc)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ModelUnavailableError(f"llm3f: fit file {p} not found: {MAKE.format(path=p)}") from None
    except OSError as e:
        raise VericiteError(f"llm3f: fit file {p} cannot be read ({e.strerror or e})") from None
    try:
        fit = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise VericiteError(f"llm3f: {p} is not a fit file (not JSON: {e}): {MAKE.format(path=p)}") from None
    if not isinstance(fit, dict) or fit.get("kind") != FIT_KIND:
        raise VericiteError(f"llm3f: {p} is not a fit file (kind is not {FIT_KIND!r}): {MAKE.format(path=p)}")
    if fit.get("format") != FIT_FORMAT or fit.get("fit") != FIT_ID:
        raise VericiteError(f"llm3f: {p} is a fit of another format ({fit.get('format')!r}, {fit.get('fit')!r}; this vericite reads {FIT_FORMAT}, {FIT_ID}): fit again")
    if fit.get("prompt") != PROMPT_ID:
        raise VericiteError(f"llm3f: {p} was fitted on the prompt {fit.get('prompt')!r}, this judge asks {PROMPT_ID}: fit again")
    bias, model = fit.get("bias"), fit.get("model")
    if not isinstance(bias, dict) or not all(isinstance(bias.get(k), (int, float)) and not isinstance(bias.get(k), bool) and math.isfinite(bias[k]) for k in LABELS):
        raise VericiteError(f"llm3f: {p} has no finite bias for each of {', '.join(LABELS)}: fit again")
    if not isinstance(model, dict) or not str(model.get("name") or "").strip():
        raise VericiteError(f"llm3f: {p} does not name its model (model.name): fit again")
    return fit, hashlib.sha256(data).hexdigest()


def same_model(fitted: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """Why the model loaded now is not the one the biases were fitted with (None when it is): its file's sha256
    where both are known, else its backend and model."""
    if fitted.get("sha256") and now.get("sha256"):
        return None if fitted["sha256"] == now["sha256"] else f"its sha256 {str(now['sha256'])[:12]} is not the fitted {str(fitted['sha256'])[:12]}"
    for key in ("backend", "model"):
        if fitted.get(key) != now.get(key):
            return f"its {key} {now.get(key)!r} is not the fitted {fitted.get(key)!r}"
    return None


class FittedLLM3Judge(LLM3Judge):
    """``llm3f:<fit file>`` (module docstring)."""

    def __init__(self, backend: Any, fit: Mapping[str, Any], sha256: str, *, path: str | Path = "", batch_size: int = 8) -> None:
        super().__init__(backend, batch_size=batch_size)
        ident = backend.identity()
        now = ident.to_dict() if hasattr(ident, "to_dict") else {"name": str(ident)}
        why = same_model(fit["model"], now)
        if why:
            raise VericiteError(f"llm3f: {path} was fitted with another model than {self.model_name!r} loaded now ({why}): fit again with this model")
        self.fit = dict(fit)
        self.bias = {k: float(fit["bias"][k]) for k in LABELS}
        self.path = Path(path)
        self.sha256 = sha256
        self.id = f"llm3f:{self.model_name}:{sha256[:12]}@1"

    def options(self) -> dict[str, Any]:
        """The settings that change its verdicts besides the id: the fit file, its sha256 and the fit's rule."""
        return {"fit_file": str(self.path), "fit_sha256": self.sha256, "fit": FIT_ID}

    def calibration(self) -> dict[str, Any]:
        """What results record of the fit: its rule, objective, biases, data and fitted figures."""
        keep = ("data", "pairs", "before", "after")
        return {"id": FIT_ID, "method": f"p(label) * exp(bias(label)), renormalised; bias fitted by {OBJECTIVE}",
                "bias": dict(self.bias), "fit_sha256": self.sha256, **{k: self.fit.get(k) for k in keep}}

    def overlap(self, data_sha256: str, first: int, count: int, split: str | None = None) -> str | None:
        """When pairs ``first`` .. ``first + count - 1`` (0-based: readable pairs, or the items of a CAQA dataset's
        ``split``) of the file with ``data_sha256`` include pairs the biases were fitted on, a sentence saying so;
        else None. A fit on labelled pairs records no split; one on a CAQA dataset its split (``fit_bias``)."""
        data = self.fit.get("data") or {}
        if data.get("sha256") != data_sha256 or not isinstance(data.get("skip"), int) or not isinstance(data.get("n"), int):
            return None
        if data.get("split") != split:
            return None
        lo, hi = max(first, data["skip"]), min(first + count, data["skip"] + data["n"])
        if lo >= hi:
            return None
        what, of = ("items", f" of split {split!r}") if split is not None else ("pairs", "")
        return (f"{self.id} was fitted on {what} {data['skip'] + 1}-{data['skip'] + data['n']}{of} of {data.get('path')}, "
                f"and this run judges {what} {first + 1}-{first + count}{of} of it ({hi - lo} in both)")

    def judgement(self, pair: JudgePair, scores: dict[str, float] | None, mass: Mapping[str, float]) -> Judgement:
        raw: dict[str, Any] = {"label_logmass": {k: round(v, 6) for k, v in mass.items()}}
        if scores is not None:
            raw["uncalibrated"] = {k: round(float(v), 6) for k, v in scores.items()}
        raw["bias"] = dict(self.bias)
        return three_way(self.id, pair, None if scores is None else apply_bias(scores, self.bias), raw)


def apply_bias(scores: Mapping[str, float], bias: Mapping[str, float]) -> dict[str, float]:
    """``p(label) * exp(bias(label))``, renormalised to sum to 1 (the largest bias taken out first, so no overflow)."""
    top = max(bias[k] for k in LABELS)
    weighted = {k: float(scores[k]) * math.exp(bias[k] - top) for k in LABELS}
    total = sum(weighted.values())
    return {k: v / total for k, v in weighted.items()}


def llm3f_from_spec(arg: str, *, ctx: Any, **options: Any) -> FittedLLM3Judge:
    """Registry factory: ``llm3f:<fit file made by vericite train llm3f>``."""
    if not arg:
        raise VericiteError("the fitted three-way judge needs its fit file: llm3f:<file> (make one with `vericite train llm3f`)")
    fit, sha = read_fit(arg)  # before the model is loaded: a bad file fails in a second
    from ..models import model_loader

    return FittedLLM3Judge(model_loader(ctx)(str(fit["model"]["name"])), fit, sha, path=arg, **options)
