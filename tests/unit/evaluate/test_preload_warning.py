"""A family's ``preload()`` line (ALCE's QA model not had: its metrics not computed) is said as the commands say
their warnings (``progress.warn``: yellow on a terminal, plain otherwise), not with a bare ``print`` to stderr;
the runner's warnings (a setting the task ignores, vtg's k with a store) are said the same way."""

from __future__ import annotations

from click.testing import CliRunner

from vericite.evaluate.pipeline import preload
from vericite.progress import warn


class Says:
    def preload(self):
        return "warning: the QA model is not here: qa_em will not be computed"


def test_warn_is_yellow_on_a_terminal_and_plain_otherwise():
    with CliRunner().isolation(color=True) as (_, _, err):
        warn("warning: x")
    assert err.getvalue().decode() == "\x1b[33mwarning: x\x1b[0m\n"
    with CliRunner().isolation(color=False) as (_, _, err):
        warn("warning: x")
    assert err.getvalue().decode() == "warning: x\n"


def test_a_preload_line_is_said_as_the_commands_warnings_are():
    with CliRunner().isolation(color=True) as (out, _, err):
        preload([Says(), object()])
    assert err.getvalue().decode() == "\x1b[33mwarning: the QA model is not here: qa_em will not be computed\x1b[0m\n"
    assert out.getvalue() == b""


def test_the_runners_warnings_go_through_warn():
    import ast
    from pathlib import Path

    import vericite.runs as runs

    for name in ("runner.py", "loop.py"):
        text = (Path(runs.__file__).parent / name).read_text(encoding="utf-8")
        prints = [n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "print"]
        assert not [ast.unparse(n) for n in prints if "stderr" in ast.unparse(n)], name
