"""Errors a user can cause. The CLI prints these as one line and exits non-zero; anything else is a bug."""

from __future__ import annotations


class VericiteError(Exception):
    """A problem with the user's input or environment, reported as one clear line."""

    exit_code = 2


class UnknownNameError(VericiteError, KeyError):
    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class ModelUnavailableError(VericiteError):
    """An embedded model is not installed, or its file fails verification."""


class BackendError(VericiteError):
    """A model backend could not answer (server unreachable, bad response)."""


class DataError(VericiteError):
    """A data file is missing or malformed."""


def validation_message(error: Exception) -> str:
    """One line for a pydantic ValidationError: the first bad option and what is wrong with it."""
    first = error.errors()[0]  # type: ignore[attr-defined]
    where = ".".join(str(x) for x in first["loc"]) or "config"
    return f"option {where}: {first['msg']}"
