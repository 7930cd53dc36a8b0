"""Options shared by every command that talks to a model: where the server is, how long a request may take,
how often it is tried again. Each command passes them to every model it builds (answers, judges, G-Eval,
builders) through ``vericite.models.model_options``."""

from __future__ import annotations

from typing import Any, Callable

import click

SERVER_OPTIONS = [
    click.option(
        "--base-url",
        help="OpenAI-compatible server for every openai:<model> of the command (answers, judge, G-Eval); key from $OPENAI_API_KEY, sent to this URL only, never over plain http to another host than this machine (use https://, or env -u OPENAI_API_KEY when the server needs no key); sent to a server not OpenAI's, said once on stderr",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help="total time limit of one request to a model server in seconds, retries included [default: 300]",
    ),
    click.option(
        "--retries",
        "request_retries",
        type=click.IntRange(min=0),
        metavar="N",
        help="how often a failed request to a model server is tried again, with growing waits [default: 3]",
    ),
]


def server_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--base-url``, ``--timeout``, ``--retries`` (keyword arguments ``base_url``, ``timeout``, ``request_retries``)."""
    for opt in reversed(SERVER_OPTIONS):
        f = opt(f)
    return f


RAY_OPTIONS = [
    click.option(
        "--ray",
        "ray_address",
        metavar="auto|ADDRESS",
        help="run the work on Ray actors: auto starts Ray in this process; ADDRESS is a running cluster's (what `ray start --head` prints) [default: no Ray]; needs pip install 'vericite[ray]'",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        metavar="N",
        help="with --ray: how many actors, each holding one CPU and loading the model or judge once (fewer, with a warning, when the cluster has fewer CPUs free) [default: 2]",
    ),
]

DEFAULT_WORKERS = 2


def ray_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--ray``, ``--workers`` (keyword arguments ``ray_address``, ``workers``)."""
    for opt in reversed(RAY_OPTIONS):
        f = opt(f)
    return f


def ray_settings(opts: dict[str, Any]) -> tuple[str | None, int]:
    """``--ray`` and ``--workers`` taken out of ``opts``: (address or None, workers); --workers alone is refused."""
    from ..errors import VericiteError

    address, workers = opts.pop("ray_address", None), opts.pop("workers", None)
    if workers is not None and not address:
        raise VericiteError("--workers needs --ray (auto, or the address of a Ray cluster)")
    return (address or None), int(workers or DEFAULT_WORKERS)


def on_ray(judge: Any, spec: str, opts: dict[str, Any], out: Any, resume: bool = False) -> Any:
    """``judge`` as is without ``--ray``; with it, a judge whose judging runs on ``--workers`` Ray actors, each
    holding the judge ``spec`` built with ``opts``' model options (checkpointed in OUT/.ray-calls.jsonl; with
    ``resume`` the parts already there are read back, not sent again). The actors go when the command ends."""
    address, workers = ray_settings(dict(opts))
    if address is None or judge is None:
        return judge
    from types import SimpleNamespace

    from ..models import model_options
    from ..runs.distributed import pool_judge

    pooled = pool_judge(judge, spec, model_options(SimpleNamespace(**opts)), ray=address, workers=workers, out=out, resume=resume)
    click.get_current_context().call_on_close(pooled.close)
    return pooled


def check_judge_fits(judge: Any, pairs: Any, path: Any) -> None:
    """judge-eval's check of its data against the judge (``judges.meta_figures.data_fit``): refused in one line
    when the judge can judge none of ``pairs`` (its (evidence, claim, label) triples), warned about up front when
    it cannot judge some (they count as unparseable)."""
    from ..errors import VericiteError
    from ..judges.meta_figures import data_fit

    fit = data_fit(judge, pairs)
    if fit and fit["unfit"] == fit["pairs"]:
        example = f" (first claim: {fit['example_claim']!r})" if fit.get("example_claim") is not None else ""
        raise VericiteError(f"{judge.id} cannot judge any of the {fit['pairs']} pairs in {path}: {fit['reason']}{example}")
    if fit and fit["unfit"]:
        click.secho(
            f"warning: {fit['unfit']} of {fit['pairs']} pairs ({fit['unfit'] / fit['pairs']:.1%}) cannot be judged by "
            f"{judge.id}: {fit['reason']}; they will count as unparseable",
            fg="yellow",
            err=True,
        )
