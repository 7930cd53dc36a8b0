"""``vericite models list`` and ``vericite models verify`` (``vericite models list | vericite models verify``)."""

from __future__ import annotations

import sys

import click

from ..errors import ModelUnavailableError, VericiteError

HEADER = ("NAME", "BACKEND", "INSTALLED", "SIZE", "PATH")


def _embedded_specs() -> list:
    from .. import registry
    from ..models.provision import ModelSpec

    out = []
    for name in registry.models.names():
        spec = registry.models.get(name)
        if isinstance(spec, ModelSpec):
            out.append(spec)
    return out


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


@click.group("models")
def models() -> None:
    """The embedded language models: what is installed, and is it intact."""


@models.command("list")
def list_models() -> None:
    """Registered embedded models, their backend, whether installed, size and path."""
    rows = [HEADER]
    for spec in _embedded_specs():
        p = spec.path()
        installed = "yes" if spec.is_installed() else "no"
        rows.append((spec.name, spec.backend, installed, _size(spec.size), str(p) if p else f"({spec.package} not installed)"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
    for r in rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    click.echo("# other models: llamacpp:<file.gguf>, openai:<model> (OpenAI-compatible server), fake", err=True)


def _names_from_stdin() -> list[str]:
    names = []
    for line in sys.stdin:
        first = line.strip().split()[:1]
        if not first or first[0].startswith("#") or first[0] == HEADER[0] or set(first[0]) <= set("-=─"):
            continue
        names.append(first[0])
    return names


@models.command("verify")
@click.argument("names", nargs=-1)
@click.option("--rehash", is_flag=True, help="hash the files again instead of trusting a remembered verified hash")
def verify(names: tuple[str, ...], rehash: bool) -> None:
    """Check the sha256 of embedded models (default: all; or names read from the first column of stdin,
    so `vericite models list | vericite models verify` works). Exits non-zero when any fails."""
    from ..models.provision import get_spec, model_path

    wanted = list(names)
    if not wanted and not sys.stdin.isatty():
        wanted = _names_from_stdin()
    if not wanted:
        wanted = [s.name for s in _embedded_specs()]
    failed = 0
    for name in wanted:
        try:
            spec = get_spec(name)
            path = model_path(spec, assemble=False, rehash=rehash)
        except (ModelUnavailableError, VericiteError) as e:
            failed += 1
            click.echo(f"✗ {name}  {e}")
            continue
        click.echo(f"✓ {name}  {path}  sha256 {spec.sha256[:16]}…")
    if failed:
        raise click.exceptions.Exit(1)
