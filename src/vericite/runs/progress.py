"""Progress on long work: a rich progress bar on a terminal, nothing when disabled or not a TTY."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def progress_bar(total: int, description: str, *, enabled: bool = True, completed: int = 0) -> Iterator[Callable[[int], None]]:
    if not enabled or not sys.stderr.isatty():
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),  # stdout stays clean for the command's own output
        transient=False,
    ) as p:
        task = p.add_task(description, total=total, completed=completed)
        yield lambda n=1: p.advance(task, n)
