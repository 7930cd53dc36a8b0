"""What a Ray driver ships to its actors besides the worker's factory: the names registered at run time
(:func:`shipped_entries`), installed in each actor before its worker is built (:func:`install_entries`,
:func:`installed_then`); one that cannot be pickled is said when the actor would build it. Split from
``distributed/pool.py``; moved verbatim, the private helpers made public (``error_line``, ``installed_then``)."""

from __future__ import annotations

from typing import Any, Callable

from ..errors import VericiteError


#: how a name registered at run time that an actor cannot be given is said (when the actor would build it)
UNSHIPPABLE = (
    "{kind} {name!r} was registered in the driver process only (at run time), and the Ray workers cannot be given it "
    "({why}): register it from a plugin module the workers import too (an entry point of the group vericite.plugins, "
    "docs/extending.md), or run without --ray"
)


def shipped_entries(dumps: Callable[[Any], bytes]) -> dict[str, dict[str, tuple[bytes | None, str | None]]]:
    """``registry.runtime_entries()`` as an actor is given them: by kind and name, ``(the entry pickled by dumps,
    None)`` (Ray's cloudpickle: a factory defined in a script goes by value), or ``(None, why)`` for one that cannot
    be pickled (a factory holding a lock, an open file ...)."""
    from ..registry import runtime_entries

    out: dict[str, dict[str, tuple[bytes | None, str | None]]] = {}
    for kind, entries in runtime_entries().items():
        for name, entry in entries.items():
            try:
                got: tuple[bytes | None, str | None] = (dumps(entry), None)
            except Exception as e:  # noqa: BLE001 - whatever pickling raises: said when an actor would build it
                got = (None, error_line(e))
            out.setdefault(kind, {})[name] = got
    return out


def install_entries(shipped: dict[str, dict[str, tuple[bytes | None, str | None]]]) -> None:
    """In an actor: each entry of :func:`shipped_entries` registered as the driver has it (replacing the actor's
    own of that name, as the driver's replaced it); one that could not be pickled, or cannot be unpickled here (its
    module not importable on this machine), is a factory that raises one line naming it (:data:`UNSHIPPABLE`) when
    it is built, so a name the workers never build costs nothing."""
    import pickle

    from ..registry import registry_for

    for kind, entries in shipped.items():
        reg = registry_for(kind)
        for name, (blob, why) in entries.items():
            entry: Any = None
            if blob is not None:
                try:
                    entry = pickle.loads(blob)
                except Exception as e:  # noqa: BLE001 - a module the driver had that this machine has not
                    why = error_line(e)
            reg.register(name, entry if entry is not None else _unshippable(reg.kind, name, why or "unknown"), replace=True)


def error_line(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}".splitlines()[0][:200]


def _unshippable(kind: str, name: str, why: str) -> Callable[..., Any]:
    def factory(arg: str, *, ctx: Any = None, **options: Any) -> Any:
        raise VericiteError(UNSHIPPABLE.format(kind=kind, name=name, why=why))

    return factory


def installed_then(shipped: dict[str, dict[str, tuple[bytes | None, str | None]]], factory: Callable[[], Any]) -> Any:
    """An actor's worker, built once the driver's run-time registrations are installed (:func:`install_entries`)."""
    install_entries(shipped)
    return factory()
