"""The fixtures and helpers tests/e2e/test_ray_*.py share: one in-process Ray per module, a fixed clock, the command
runner, and the answers ``evaluate --ray`` sends to its actors. (Kept apart from ``tests.support.ray_runs``, which unit
tests import without the CLI.)"""

from __future__ import annotations

import time

import pytest
from click.testing import CliRunner

from tests.support.guards import requires
from vericite.cli.main import cli


@pytest.fixture(scope="module")
def ray_local():
    """One in-process Ray for the module (the commands reuse it rather than starting their own)."""
    requires("ray")
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture
def fixed_clock(monkeypatch):
    """results.json's ``created`` from a fixed clock, so two evaluations can be compared byte for byte."""
    import vericite.runs.results as results

    class Clock:
        @staticmethod
        def strftime(fmt, *a):
            return "2026-11-27T00:00:00"

        time = staticmethod(time.time)

    monkeypatch.setattr(results, "time", Clock)


def invoke(args):
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output + repr(r.exception)
    return r


class SentAnswers:
    """The answers ``evaluate --ray`` sends to its actors (their indices), counted from now on; ``cut_after``: the
    driver stops (KeyboardInterrupt, as Ctrl-C) once that many batches have come back."""

    def __init__(self, monkeypatch, cut_after=None):
        from vericite.distributed import RayPool

        self.answers, self.cut_after = [], cut_after
        real = getattr(RayPool.map, "real", RayPool.map)

        def map(pool, method, batches):
            batches = list(batches)
            if method == "score":
                self.answers += [i for _key, batch in batches for i, _s, _a in batch]
            for n, got in enumerate(real(pool, method, batches)):
                if self.cut_after is not None and n == self.cut_after:
                    raise KeyboardInterrupt
                yield got

        map.real = real
        monkeypatch.setattr(RayPool, "map", map)
