"""Errors a user can cause. The CLI prints these as one line and exits non-zero; anything else is a bug."""

from __future__ import annotations

import difflib
from typing import Any, Iterable


class VericiteError(Exception):
    """A problem with the user's input or environment, reported as one clear line."""

    exit_code = 2


class UnknownNameError(VericiteError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ModelUnavailableError(VericiteError):
    """An embedded model is not installed, or its file fails verification."""


def load_failure(what: str, error: BaseException) -> ModelUnavailableError:
    """One line for a model that could not be built or loaded (a missing or corrupt file, a bad spec): ``what``
    (``relevance model ms-marco``) and the error's message, its class named when it is not a VericiteError (an
    ONNX runtime's or a hub library's own); raised ``from None`` by the caller, so never a traceback."""
    detail = str(error) if isinstance(error, VericiteError) else f"{type(error).__name__}: {error}"
    detail = (detail.strip().splitlines() or [type(error).__name__])[0]
    return ModelUnavailableError(f"{what} cannot be loaded: {detail}")


class BackendError(VericiteError):
    """A model backend could not answer (server unreachable, bad response)."""


class PromptTooLongError(BackendError):
    """A prompt longer than the model's context window: a property of that prompt, not a failure of the backend,
    so asking again cannot help. A prompted judge records such a pair as a failed judgement and judges the others
    (``judges.prompted``)."""


class PluginError(BackendError):
    """A plugin's object (of any kind) raised something other than a ``BackendError`` in one of its calls, or its
    factory raised something other than a ``VericiteError`` (a bug or an unexpected failure of the plugin): the
    message names the plugin and gives the exception's class and message; ``kind`` is the registry's word for
    what failed (``"backend"``, ``"metric"``, ``"retriever"`` ...). It is a ``BackendError``, so it is handled as a
    model that could not answer (``vericite.registry``: plugin calls are guarded); ``KeyboardInterrupt`` and
    ``SystemExit`` are never turned into one."""

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind

    def __reduce__(self):  # type: ignore[no-untyped-def]  # kind survives pickling (Ray workers)
        return (type(self), (str(self), self.kind))


class PluginAttributeError(PluginError, AttributeError):
    """A plugin's attribute (a property) raised ``AttributeError`` when read: one line naming the plugin and the
    attribute, as any :class:`PluginError`, and still an ``AttributeError``, so ``hasattr`` and ``getattr`` with a
    default treat the attribute as missing, as they did before it was guarded."""


class DataError(VericiteError):
    """A data file is missing or malformed."""


class InvalidOptionsError(VericiteError):
    """The options a registered factory was given fail its validation (``owner: option x: why``). ``error`` is
    the pydantic ValidationError, so a command can name the bad option by its flag instead."""

    def __init__(self, owner: str, error: Exception) -> None:
        super().__init__(f"{owner}: {validation_message(error)}")
        self.error = error


def checked_batch_size(batch_size: Any) -> int:
    """``batch_size`` when it is a whole number of at least 1 (a judge's or scorer's), else one line saying so."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise VericiteError(f"batch_size must be a whole number of at least 1, not {batch_size!r}")
    return batch_size


def validation_message(error: Exception, *, as_flag: bool = False) -> str:
    """One line for a pydantic ValidationError: the first bad option and what is wrong with it. ``as_flag``
    names the option as its command-line flag (``--min-gold``) rather than its field (``min_gold``)."""
    first = error.errors()[0]  # type: ignore[attr-defined]
    where = ".".join(str(x) for x in first["loc"]) or "config"
    if as_flag:
        where = "--" + where.replace("_", "-")
    return f"option {where}: {first['msg']}"


def did_you_mean(name: str, known: Iterable[str], *, n: int = 1, cutoff: float = 0.6) -> str:
    """``"did you mean 'x'?"`` (or ``'x' or 'y'``, up to ``n``) for the names of ``known`` closest to ``name``;
    ``""`` when none is close enough. Every unknown-name message words its hint with this."""
    close = difflib.get_close_matches(name, sorted(known), n=n, cutoff=cutoff)
    return f"did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
