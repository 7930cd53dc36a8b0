"""``vericite cache stats`` and ``vericite cache clear [--model NAME]``: the call cache of model answers."""

from __future__ import annotations

import json

import click


def _size(n: int) -> str:
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= div:
            return f"{n / div:.1f} {unit}"
    return f"{n} B"


@click.group("cache")
def cache() -> None:
    """The call cache: every model answer, kept so that a call is not paid for twice (file: $VERICITE_CACHE/calls.sqlite)."""


@cache.command("stats")
@click.option("--model", help="show only this model's entries (a name in the MODEL column)")
@click.option("--json", "as_json", is_flag=True, help="print the statistics as JSON")
def stats(model: str | None, as_json: bool) -> None:
    """Where the call cache is, its size, its entries, and how many each model wrote."""
    from ..models.cache_admin import cache_stats
    from ..printable import printable

    s = cache_stats()
    if model is not None:
        s["models"] = [m for m in s["models"] if m["model"] == model]
    if as_json:
        click.echo(json.dumps(s, indent=2, ensure_ascii=False))
        return
    click.echo(f"call cache: {s['path']}")
    if not s["exists"]:
        click.echo("no entries (the file does not exist yet)")
        return
    click.echo(f"entries: {s['entries']:,}   size: {_size(s['bytes'])}")
    if not s["models"]:
        if model is not None:
            click.echo(f"no entries of model {model!r}")
        return
    rows = [("MODEL", "ENTRIES", "KINDS")] + [
        (printable(m["model"]) if m["model"] is not None else "(not recorded)", f"{m['entries']:,}", ", ".join(f"{k} {v:,}" for k, v in sorted(m["kinds"].items())))
        for m in s["models"]
    ]
    w0, w1 = (max(len(r[i]) for r in rows) for i in (0, 1))
    for r in rows:
        click.echo(f"{r[0].ljust(w0)}  {r[1].rjust(w1)}  {r[2]}")
    if any(m["model"] is None for m in s["models"]):
        click.echo("(not recorded: written before vericite recorded the model of an entry)", err=True)


@cache.command("clear")
@click.option("--model", help="delete only this model's entries (a name `vericite cache stats` lists)")
def clear(model: str | None) -> None:
    """Delete the entries of the call cache: all of them, or one model's. Prints how many were deleted."""
    from ..models.cache_admin import clear_cache

    r = clear_cache(model=model)
    if r["deleted"] is None:
        click.echo(f"deleted the corrupt call cache {r['path']}")
        return
    which = f" of model {model!r}" if model is not None else ""
    click.echo(f"deleted {r['deleted']:,} entries{which} from {r['path']}; {r['left']:,} left")
