"""What a Ray actor is given of the driver's registry: the names registered at run time (a user's script's
``register``), never vericite's own or a plugin's; each installed as the driver has it, and one that cannot be
pickled, or unpickled on the actor's machine, a factory that says so in one line when it is built. (Ray itself:
tests/e2e/test_ray_evaluate.py.)"""

from __future__ import annotations

import pickle
import threading

import pytest

from vericite import registry
from vericite.distributed.pool import install_entries, shipped_entries
from vericite.errors import VericiteError


def plain(arg, *, ctx, **options):
    """A factory of a module the actor imports too: pickled by reference."""
    return registry.create("judges", "fake", ctx)


@pytest.fixture
def runtime_judges():
    lock = threading.Lock()

    def local(arg, *, ctx, **options):  # pickle cannot send a local function (Ray's cloudpickle sends it by value,
        with lock:  # but not the lock it holds)
            return registry.create("judges", "fake", ctx)

    registry.judges.register("rt-plain", plain)
    registry.judges.register("rt-local", local)
    yield
    for name in ("rt-plain", "rt-local", "rt-gone"):
        registry.judges.unregister(name)


def test_only_run_time_registrations_are_shipped(runtime_judges):
    got = registry.runtime_entries()
    assert set(got["judges"]) >= {"rt-plain", "rt-local"}
    assert not {"fake", "triple", "llm"} & set(got["judges"]) and "ms-marco" not in got.get("scorers", {})


def test_installed_as_the_driver_has_them_and_the_unpicklable_said_when_built(runtime_judges):
    shipped = shipped_entries(pickle.dumps)["judges"]
    assert shipped["rt-plain"][0] is not None and shipped["rt-local"][0] is None and "Can't" in shipped["rt-local"][1]
    shipped["rt-gone"] = (pickle.dumps(plain).replace(b"test_shipped_entries", b"zz_no_such_module_zz"), None)  # not importable there
    for name in shipped:  # as in an actor, which has none of them
        registry.judges.unregister(name)
    install_entries({"judges": shipped})
    assert registry.create("judges", "rt-plain").id.startswith("fake")  # built from the factory it was given
    with pytest.raises(VericiteError, match=r"judge 'rt-local' was registered in the driver process only .*Can't.*vericite.plugins"):
        registry.create("judges", "rt-local")
    with pytest.raises(VericiteError, match=r"judge 'rt-gone' was registered in the driver process only .*ModuleNotFoundError"):
        registry.create("judges", "rt-gone")
