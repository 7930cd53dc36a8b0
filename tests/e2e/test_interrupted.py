"""Ctrl-C: every command says what it leaves behind, and promises --resume only where the command has one."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from vericite.cli import main as cli_main


@pytest.mark.parametrize(
    "name, says, not_says",
    [
        ("generate", "rerun with --resume", None),
        ("evaluate", "rerun with --resume", None),
        ("judge-eval", "alce-human or caqa", None),
        ("report", None, "--resume"),
    ],
)
def test_interrupted_message_fits_the_command(monkeypatch, name, says, not_says):
    @click.command(name)
    def cut() -> None:
        raise KeyboardInterrupt

    group = cli_main.VericiteGroup(commands={name: cut})
    r = CliRunner().invoke(group, [name])
    assert r.exit_code == 130
    assert r.output.startswith("interrupted"), r.output
    if says:
        assert says in r.output
    if not_says:
        assert not_says not in r.output
    assert set(cli_main.INTERRUPTED) <= set(cli_main.cli.commands)  # no hint for a command that does not exist


def test_every_command_with_resume_has_a_hint():
    for name, cmd in cli_main.cli.commands.items():
        subs = getattr(cmd, "commands", {}).values() or [cmd]
        if any(any(p.name == "resume" for p in c.params) for c in subs):
            assert name in cli_main.INTERRUPTED, name
