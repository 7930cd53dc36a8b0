"""What a plugin model backend's guarded calls must return (split out of guard.py, which had grown past ~450 lines):
``RESULT_CHECKS`` maps (kind, method) to the check of a result, one well-shaped item per input (``generate``'s
completions, next-token rows, log-probability lists, continuation spans) or token ids (``tokenize``), run by
``guard.GuardedCall`` before the call cache stores anything; a refused result is retried with its numbers, then its
arrays, made Python's (:func:`python_numbers`, :func:`made_plain`) before the refusal stands. A refusal is a
:class:`PluginError` naming the plugin, the method and what came back."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Callable

from .errors import PluginError
from .types import Completion, Usage

#: the guarded call whose result is checked (``guard.GuardedCall``: its ``label``, ``kind`` and method ``name``); not
#: imported, as guard.py imports this module
GuardedCall = Any


def _one_per_prompt(ok: Callable[[Any], bool], unit: str, units: str, arg: str = "prompts", inner: Callable[[Any], str | None] | None = None) -> Callable[[GuardedCall, tuple[Any, ...], dict[str, Any], Any], None]:
    """A check that a batched model call's result is a list of one item per input (its first argument, ``arg``:
    ``prompts``, ``texts``, ``pairs``), each ``ok``; else a :class:`PluginError` as a raising plugin's, saying
    what came back: ``"backend 'x' (plugin) returned None from generate, expected 2 completions"``. ``inner``:
    what is wrong inside an item that is not ``ok`` (``"a list holding a str (3)"``), or None to name its type."""

    def check(call: GuardedCall, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
        try:
            n = len(args[0] if args else kwargs[arg])
        except (KeyError, TypeError):
            return  # called in a way the Protocol does not: nothing to count against
        if result is None or not isinstance(result, (list, tuple)):
            got = _a(result)
        elif len(result) != n:
            got = f"a {type(result).__name__} of {len(result)}"
        else:
            wrong = next((i for i, x in enumerate(result) if not ok(x)), None)
            if wrong is None:
                return
            item = result[wrong]
            said = inner(item) if inner is not None else None
            got = f"a {type(result).__name__} with {said or _a(item)} (item {wrong})"
        raise PluginError(f"{call.label} returned {got} from {call.name}, expected {n} {unit if n == 1 else units}", kind=call.kind)

    return check


def made_plain(check: Callable[..., None], call: GuardedCall, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any, refused: PluginError) -> Any:
    """``result``, refused by ``check``, with its numbers made Python's (:func:`python_numbers`), else with its
    arrays made lists too (``arrays=True``: a numpy array, a tensor, anything with a ``tolist``), whichever first
    passes ``check``; else the refusal of the numbers made Python's (or ``refused`` when there were none), so a
    truly wrong shape (a 2-d array where a row is expected) is named as it was before arrays were read."""
    for arrays in (False, True):
        plain = python_numbers(result, arrays=arrays)
        if plain is result:
            continue
        try:
            check(call, args, kwargs, plain)
        except PluginError as e:
            refused = refused if arrays else e
            continue
        return plain
    raise refused


def python_numbers(x: Any, *, arrays: bool = False) -> Any:
    """``x`` with every number that is not a Python ``int`` or ``float`` made one: a ``numbers.Integral`` (numpy's
    int64, ...) an ``int``, any other ``numbers.Real`` (numpy's float32, ...) a ``float``; ``bool`` (and numpy's
    bool, no number) left as it is. Lists, tuples, dicts' values and a ``Completion``'s or ``Usage``'s fields are
    walked (copied: what the plugin returned is not changed); ``x`` itself when nothing in it changed. A plugin backed by numpy,
    torch or ONNX that returns such scalars is then read, and cached (as JSON), exactly as one that returned
    Python numbers; what is still wrong after it (a 0-d tensor, an array) is refused as before. ``arrays``: an
    object with a callable ``tolist`` (a numpy array, a torch tensor: a log-probabilities row returned as an
    ``ndarray``) is read as what ``tolist()`` gives, walked the same (:func:`made_plain` asks for it only when the
    numbers alone did not make the result pass). Only the ``numbers`` ABCs and ``tolist``: no numpy import here."""
    if type(x) in (int, float, str, bool) or x is None:
        return x
    if isinstance(x, numbers.Number) and not isinstance(x, bool):
        if isinstance(x, numbers.Integral):
            return int(x)
        if isinstance(x, numbers.Real):
            return float(x)
        return x
    if type(x) in (list, tuple):
        items = [python_numbers(v, arrays=arrays) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else type(x)(items)
    if type(x) is dict:
        values = {k: python_numbers(v, arrays=arrays) for k, v in x.items()}
        return x if all(values[k] is v for k, v in x.items()) else values
    if isinstance(x, (Completion, Usage)):
        fields = {f.name: getattr(x, f.name) for f in dataclasses.fields(x) if f.init}
        changed = {f: new for f, v in fields.items() if (new := python_numbers(v, arrays=arrays)) is not v}
        return dataclasses.replace(x, **changed) if changed else x
    if not arrays or isinstance(x, type):
        return x
    try:
        tolist = getattr(x, "tolist", None)
        listed = tolist() if callable(tolist) else x
    except Exception:  # noqa: BLE001 - not an array after all: left as it is, and refused as it was
        return x
    if listed is not x:
        return python_numbers(listed, arrays=True)
    return x


def _a(x: Any) -> str:
    """What a value is, in a message: ``None``, ``a str``."""
    return "None" if x is None else f"a {type(x).__name__}"


def _row(x: Any) -> bool:
    """A next-token row: None (no log-probabilities for that prompt), or a dict of candidate -> log-probability
    (None for a candidate without one: the judges and G-Eval read it as absent)."""
    return x is None or (isinstance(x, dict) and all(isinstance(k, str) and (v is None or _number(v)) for k, v in x.items()))


def _row_holding(x: Any) -> str | None:
    """For a dict row with a key that is no string or a value that is no number: ``"a dict holding a str ('Yes')"``."""
    if not isinstance(x, dict):
        return None
    k, v = next(((k, v) for k, v in x.items() if not (isinstance(k, str) and (v is None or _number(v)))), (None, None))
    return f"a dict with the key {k!r}" if not isinstance(k, str) else f"a dict holding {_a(v)} ({k!r})"


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _token_id(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _usage(x: Any) -> bool:
    """A ``Usage`` whose counts are ints (what the call cache stores as JSON and the totals add)."""
    return isinstance(x, Usage) and all(_token_id(getattr(x, f.name)) for f in dataclasses.fields(x))


def _span(x: Any) -> bool:
    """A token's ``(start, end, log-probability)``."""
    return isinstance(x, (list, tuple)) and len(x) == 3 and _token_id(x[0]) and _token_id(x[1]) and _number(x[2])


def _all(ok: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """A list (or tuple) whose every element is ``ok``."""
    return lambda x: isinstance(x, (list, tuple)) and all(ok(v) for v in x)


def _holding(ok: Callable[[Any], bool]) -> Callable[[Any], str | None]:
    """For a list with an element not ``ok``: ``"a list holding a str (3)"`` (the element's index)."""

    def said(x: Any) -> str | None:
        if not isinstance(x, (list, tuple)):
            return None
        wrong = next((i for i, v in enumerate(x) if not ok(v)), None)
        return None if wrong is None else f"a {type(x).__name__} holding {_a(x[wrong])} ({wrong})"

    return said


def _completion_fault(x: Any) -> str | None:
    """What is wrong with a ``Completion`` a plugin returned (``"a Completion whose text is None"``), None when
    nothing is: its text a string, its token counts ints, its ``top_logprobs`` None or a list of next-token rows,
    its ``finish_reason`` a string, its ``seconds`` a number or None (the call cache stores it)."""
    if not isinstance(x, Completion):
        return _a(x)
    for name, ok in (("text", lambda v: isinstance(v, str)), ("prompt_tokens", _token_id), ("completion_tokens", _token_id),
                     ("top_logprobs", lambda v: v is None or (isinstance(v, list) and all(_row(r) for r in v))),
                     ("finish_reason", lambda v: isinstance(v, str)),
                     ("seconds", lambda v: v is None or _number(v))):  # fmt: skip
        value = getattr(x, name, None)
        if not ok(value):
            if name == "top_logprobs" and isinstance(value, list):
                wrong = next(i for i, r in enumerate(value) if not _row(r))
                return f"a Completion whose top_logprobs hold {_row_holding(value[wrong]) or _a(value[wrong])} ({wrong})"
            return f"a Completion whose {name} is {_a(value)}"
    return None


def _token_ids(call: GuardedCall, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> None:
    """``tokenize(text)``: a list of token ids (ints)."""
    if isinstance(result, (list, tuple)):
        wrong = next((i for i, v in enumerate(result) if not _token_id(v)), None)
        if wrong is None:
            return
        got = f"a {type(result).__name__} with {_a(result[wrong])} (item {wrong})"
    else:
        got = _a(result)
    raise PluginError(f"{call.label} returned {got} from {call.name}, expected a list of token ids", kind=call.kind)


#: (kind, method) -> the check of what a plugin's guarded call returned. Only model backends' calls whose callers
#: read one result per input (and ``tokenize``), each checked before the call cache (``models/cache.py``, which
#: wraps the guarded backend) stores it: a judge's or a scorer's wrong-length result is handled where it is used
#: (CONNER's "gave 0 scores for 1 pairs", VTG's judge errors), so it is not checked here.
RESULT_CHECKS = {(kind, method): check for kind in ("backend", "model") for method, check in (
    ("generate", _one_per_prompt(lambda x: _completion_fault(x) is None, "completion", "completions", inner=_completion_fault)),
    # a None row is read as no log-probabilities by the judges (``dict(r or {})``) and G-Eval: an unparseable judgement
    ("next_token_logprobs", _one_per_prompt(_row, "dict of log-probabilities", "dicts of log-probabilities", inner=_row_holding)),
    ("next_token_logprobs_usage", _one_per_prompt(
        lambda x: isinstance(x, (tuple, list)) and len(x) == 2 and _row(x[0]) and (x[1] is None or _usage(x[1])),
        "(log-probabilities, usage) pair", "(log-probabilities, usage) pairs")),
    ("logprobs", _one_per_prompt(_all(_number), "list of log-probabilities", "lists of log-probabilities", "texts", _holding(_number))),
    ("continuation_logprobs", _one_per_prompt(_all(_number), "list of log-probabilities", "lists of log-probabilities", "pairs", _holding(_number))),
    ("continuation_token_spans", _one_per_prompt(_all(_span), "list of (start, end, log-probability) triples",
                                                 "lists of (start, end, log-probability) triples", "pairs", _holding(_span))),
    ("tokenize", _token_ids),
)}  # fmt: skip
