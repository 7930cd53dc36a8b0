"""Progress on long work: a rich progress bar on a terminal; on anything else (a CI log, ``nohup``, a pipe) a
plain line at most every ``interval`` seconds, so long unattended runs still say how far they are and short ones
stay quiet. Nothing at all when disabled.

``progress_bar`` yields an ``Advance``: call it with the number of items finished, and (optionally) name the item
now being worked on with ``advance.running(label)``. When one item takes longer than the interval, the plain
lines say so while it runs (``generating: 3/20, sample q17 running for 65 s``), so a slow or hung model is
visible rather than silent.

One model call that scores many items (CONNER's LM measures send their texts in one call) moves a bar while it
runs: within ``items_of_call(advance, n)``, a backend that works through the items one by one says each one done
with ``item_done()`` (llama.cpp's scorer; the call cache says its hits at once, and a plain line's time left
is computed from the items worked on, not from them); whatever no one said is counted
when the call returns, so the bar moves by ``n``, never more. The calls themselves are the same with or without.
A backend that has each item's answer as it finishes it says ``answered(kind, item, value)`` instead: the call
cache stores it at once (``answers_to``), so an interrupted call keeps what it answered, and the item is done.

``warn`` says one warning line on stderr as the commands say theirs (yellow on a terminal, plain text otherwise):
the floors below the commands (an evaluation's preload, the runner) say their warnings through it."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from typing import Any, Callable, Iterator

from .printable import printable

#: seconds between two plain progress lines when stderr is not a terminal
LOG_INTERVAL_S = 30.0


def warn(text: str) -> None:
    """One warning line on stderr, styled as the commands' own (``click.secho(..., fg="yellow", err=True)``: coloured
    on a terminal, plain in a log or a pipe), so a warning said below the CLI reads as one said by it."""
    import click

    click.secho(text, fg="yellow", err=True)


#: within :func:`items_of_call`: how a backend says it finished items of the call under way
_item_done: contextvars.ContextVar[Callable[[int, bool], None] | None] = contextvars.ContextVar("vericite_item_done", default=None)


@contextlib.contextmanager
def items_of_call(advance: Callable[[int], None] | None, n: int) -> Iterator[None]:
    """Around one model call of ``n`` items: what :func:`item_done` says within it advances ``advance`` (at most
    ``n`` in all), and when the call returns the rest of ``n`` is advanced at once (a backend that says nothing,
    the duplicates of a call asked once). Nothing when ``advance`` is None, or when the call raises."""
    if advance is None:
        yield
        return
    left = [max(0, int(n))]

    def done(k: int = 1, at_once: bool = False) -> None:
        k = min(int(k), left[0])
        if k > 0:
            left[0] -= k
            skip = getattr(advance, "skip", None) if at_once else None  # a bar's Advance: not counted in its rate
            (skip or advance)(k)

    token = _item_done.set(done)
    try:
        yield
    finally:
        _item_done.reset(token)
    done(left[0])


def item_done(n: int = 1, *, at_once: bool = False) -> None:
    """``n`` more items of the call under way are finished (a backend's or the call cache's word; ``at_once``: without
    work, the cache's hits, so a bar's time left is not computed from them: ``Advance.skip``); nothing outside
    :func:`items_of_call`. Said on the thread that made the call."""
    say = _item_done.get()
    if say is not None and n > 0:
        say(n, at_once)


#: within :func:`answers_to`: where a backend's word about one answered item of the call under way goes
_answer_sink: contextvars.ContextVar[Callable[[str, Any, Any], None] | None] = contextvars.ContextVar("vericite_answer_sink", default=None)


@contextlib.contextmanager
def answers_to(sink: Callable[[str, Any, Any], None] | None) -> Iterator[None]:
    """Around one model call: what :func:`answered` says within it goes to ``sink(kind, item, value)`` (the call
    cache stores it at once, ``models.cache``); None: it goes nowhere (a plugin's call, whose answers are checked
    when it returns, ``guard``)."""
    token = _answer_sink.set(sink)
    try:
        yield
    finally:
        _answer_sink.reset(token)


def answered(kind: str, item: Any, value: Any) -> None:
    """A backend's word, within a call of ``kind`` (``"logprobs"``, ``"continuation_logprobs"``,
    ``"continuation_token_spans"``), that the call's input ``item`` (a text; a ``(prefix, continuation)`` pair) is
    answered with ``value``, what the call will return for it, so that a call interrupted keeps what it answered:
    the call cache stores it now, when it asked for that item (not for another kind, a method that calls another).
    Then the item is done (:func:`item_done`): a bar around the call moves. Said on the thread that made the call."""
    sink = _answer_sink.get()
    if sink is not None:
        sink(kind, item, value)
    item_done()  # after the store: a Ctrl-C that the bar's step meets finds the item kept


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Advance:
    """What ``progress_bar`` yields. ``advance(n=1)``: n more items are finished. ``advance.skip(n)``: n items
    finished without work (answered by the call cache): the bar moves, but the time left is computed from the
    items worked on only, so a resumed call's hits do not make it look short. ``advance.running(label)``: the
    item now being worked on (e.g. ``"sample q17"``); without it, a running item is named by number."""

    def __init__(
        self, step: Callable[[int], None] | None = None, running: Callable[[str], None] | None = None, skip: Callable[[int], None] | None = None
    ) -> None:
        self._step = step or (lambda n: None)
        self._running = running or (lambda label: None)
        self._skip = skip or self._step

    def skip(self, n: int) -> None:
        self._skip(n)

    def __call__(self, n: int = 1) -> None:
        self._step(n)

    def running(self, label: str) -> None:
        self._running(label)


@contextlib.contextmanager
def _plain_lines(total: int, description: str, completed: int, interval: float) -> Iterator[Advance]:
    lock = threading.Lock()
    start = time.monotonic()
    state = {"done": completed, "new": 0, "printed": False, "done_shown": None, "last": start, "item_since": start, "label": None}

    def say(text: str, now: float) -> None:
        print(text, file=sys.stderr, flush=True)
        state["printed"], state["last"] = True, now

    def line(now: float) -> None:
        done, new = state["done"], state["new"]
        rate = new / (now - start) if now > start and new else 0.0
        eta = f", about {_clock((total - done) / rate)} left" if rate and done < total else ""
        say(f"{description}: {done}/{total} after {_clock(now - start)}{eta}", now)
        state["done_shown"] = done

    def step(n: int = 1, worked: bool = True) -> None:
        with lock:
            state["done"] += n
            state["new"] += n if worked else 0  # the rate of the time left counts the items worked on only
            now = time.monotonic()
            state["item_since"], state["label"] = now, None
            if now - state["last"] >= interval:
                line(now)

    def running(label: str) -> None:
        with lock:
            state["label"] = str(label)

    def still_running(now: float) -> None:
        # a line while one item takes long: at most one per interval, only when nothing else was said
        if state["done"] >= total or now - state["item_since"] < interval or now - state["last"] < interval:
            return
        label = printable(state["label"]) if state["label"] else f"item {state['done'] + 1}"
        say(f"{description}: {state['done']}/{total}, {label} running for {int(now - state['item_since'])} s", now)

    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(min(interval, 1.0)):
            with lock:
                still_running(time.monotonic())

    ticker = threading.Thread(target=tick, name="vericite-progress", daemon=True) if interval > 0 else None
    if ticker is not None:
        ticker.start()
    try:
        yield Advance(step, running, lambda n: step(n, worked=False))
    finally:
        stop.set()
        if ticker is not None:
            ticker.join()
        with lock:
            # a closing line only for work long enough to have reported before, and only when it says something new
            if state["printed"] and state["done"] != state["done_shown"]:
                line(time.monotonic())


@contextlib.contextmanager
def progress_bar(
    total: int, description: str, *, enabled: bool = True, completed: int = 0, interval: float | None = None
) -> Iterator[Advance]:
    """Progress of ``total`` items (``completed`` of them done before); yields an ``Advance``. ``interval``:
    seconds between plain lines [``LOG_INTERVAL_S``]."""
    if not enabled:
        yield Advance()
        return
    if not sys.stderr.isatty():
        with _plain_lines(total, description, completed, LOG_INTERVAL_S if interval is None else interval) as advance:
            yield advance
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
        # the bar's clock shows a long item running; its description names it (and its step) while it runs
        yield Advance(lambda n=1: (p.advance(task, n), p.update(task, description=description)) and None, lambda label: p.update(task, description=f"{description}: {printable(label)}"))
