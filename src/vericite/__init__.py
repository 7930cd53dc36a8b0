"""vericite: answers that cite their sources, and numbers that say how well they do."""

__version__ = "0.1.0"

from . import _builtins  # noqa: E402,F401  (lazy registrations only: imports nothing heavy)
