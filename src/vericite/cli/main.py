"""The ``vericite`` command. Commands are thin: they parse options, call library functions, print.

A user mistake (VericiteError, a bad option) is one line on stderr and a non-zero exit, never a traceback.
Each command group lives in its own module and is added here.
"""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import VericiteError
from ..printable import printable
from .build import build
from .train import train
from .cache import cache
from .compare import compare
from .demo import demo
from .docs import docs
from .evaluate import evaluate
from .export import export
from .generate import generate
from .judge_eval import judge_eval
from .kg import kg
from .models import models
from .report import report
from .run import run


#: what Ctrl-C leaves behind, per command; a command not named here keeps nothing worth continuing
INTERRUPTED = {
    "generate": "completed samples are kept; rerun with --resume to continue",
    "run": "completed samples and the answers evaluated are kept; rerun with --resume to continue",
    "build": "completed items are kept; rerun with --resume to continue",
    "evaluate": "the answers scored so far are kept: rerun with --resume to continue",
    "judge-eval": "with --task alce-human or caqa the judgements made so far are kept: rerun with --resume; "
    "other tasks: rerun the same command (the model calls made so far are cached)",
}


class VericiteGroup(click.Group):
    def invoke(self, ctx: click.Context):  # one place that turns user errors into one line
        try:
            return super().invoke(ctx)
        except VericiteError as e:
            click.secho(f"error: {printable(str(e))}", fg="red", err=True)  # messages may quote a server
            ctx.exit(e.exit_code)
        except KeyboardInterrupt:
            hint = INTERRUPTED.get(ctx.invoked_subcommand or "")
            click.secho("interrupted" + (f": {hint}" if hint else ""), fg="yellow", err=True)
            ctx.exit(130)


@click.group(cls=VericiteGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="vericite")
def cli() -> None:
    """vericite: answers that cite their sources, and numbers that say how well they do."""


for _command in (kg, docs, models, generate, demo, evaluate, judge_eval, run, report, compare, build, train, cache, export):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv, prog_name="vericite")


if __name__ == "__main__":  # pragma: no cover
    main(sys.argv[1:])
