"""A plugin's attributes computed when read (properties) are guarded as its calls are (``guard.GuardedProxy``): a
read that raises after the object was built is a ``PluginError`` naming the plugin, the attribute and the
exception; an ``AttributeError`` raised inside one is also an ``AttributeError`` (``hasattr``, ``getattr`` with a
default read it as missing, as before); a ``BackendError`` goes through; plain attributes and objects without a
computed attribute are left as they were (guarded in place, their class unchanged)."""

from __future__ import annotations

import copy
import pickle

import pytest

from vericite import registry as r
from vericite.errors import BackendError, PluginAttributeError, PluginError
from vericite.fakes.judges import KeywordJudge
from vericite.guard import computed_attributes
from vericite.types import JudgePair


class StatefulJudge(KeywordJudge):
    """A judge whose ``id`` and ``version`` are computed from its state: ``raised`` once it is set."""

    raised: BaseException | None = None

    @property  # type: ignore[override]
    def id(self):
        if self.raised is not None:
            raise self.raised
        return "stateful@1"

    @id.setter
    def id(self, value):  # KeywordJudge.__init__ sets one
        pass

    @property
    def version(self):
        if isinstance(self.raised, AttributeError):
            return self.missing_field  # an AttributeError raised inside the property
        return 1


@pytest.fixture
def judge():
    r.judges.register("stateful", lambda arg, *, ctx, **o: StatefulJudge(), replace=True)
    yield r.create("judges", "stateful")
    r.judges.unregister("stateful")


def test_a_property_that_raises_after_the_build_is_a_plugin_error_naming_the_attribute(judge):
    assert isinstance(judge, r.GuardedProxy) and isinstance(judge, StatefulJudge) and judge.id == "stateful@1"
    judge.raised = RuntimeError("model unloaded")  # written through to the plugin's object
    with pytest.raises(PluginError, match=r"^judge 'stateful' \(plugin\) failed reading 'id': RuntimeError: model unloaded$") as e:
        judge.id
    assert e.value.kind == "judge" and not isinstance(e.value, AttributeError)
    with pytest.raises(PluginError, match=r"failed: RuntimeError: model unloaded$"):  # its calls are guarded as before
        judge.judge([JudgePair(evidence="Rome is in Italy.", claim="Rome is in Italy.")])  # the plugin's own read of its id


def test_an_attribute_error_inside_a_property_stays_missing_for_hasattr_and_is_named_when_read(judge):
    judge.raised = AttributeError("gone")
    assert not hasattr(judge, "version") and getattr(judge, "version", 0) == 0
    with pytest.raises(PluginAttributeError, match=r"^judge 'stateful' \(plugin\) failed reading 'version': AttributeError: .*'missing_field'$"):
        judge.version
    with pytest.raises(AttributeError) as e:  # an attribute the object does not have is only missing
        judge.nothing_here
    assert not isinstance(e.value, PluginError)


def test_a_backend_error_from_a_property_goes_through_as_it_is(judge):
    judge.raised = BackendError("the server said 500")
    with pytest.raises(BackendError) as e:
        judge.id
    assert type(e.value) is BackendError and str(e.value) == "the server said 500"


def test_copies_and_pickles_keep_the_reads_guarded(judge):
    judge.raised = KeyError("k")
    for other in (copy.copy(judge), pickle.loads(pickle.dumps(judge))):
        assert isinstance(other, r.GuardedProxy)
        with pytest.raises(PluginError, match=r"failed reading 'id': KeyError: 'k'$"):
            other.id


def test_objects_without_computed_attributes_are_guarded_in_place_as_before():
    assert computed_attributes(KeywordJudge()) == frozenset() and computed_attributes(KeywordJudge) == frozenset()
    assert computed_attributes(StatefulJudge()) == {"id", "version"}
    r.judges.register("plain", lambda arg, *, ctx, **o: KeywordJudge(), replace=True)
    try:
        j = r.create("judges", "plain")
    finally:
        r.judges.unregister("plain")
    assert type(j) is KeywordJudge and isinstance(vars(j)["judge"], r.GuardedCall)


class ConfiguredJudge(KeywordJudge):
    """A plugin whose attributes come from its configuration (its own ``__getattr__``): a name it lacks raises
    KeyError, not AttributeError."""

    def __init__(self) -> None:
        super().__init__()
        self.config = {"threshold": 0.5}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.config[name]


def test_a_plugin_that_makes_attributes_up_has_those_reads_guarded_too():
    r.judges.register("configured", lambda arg, *, ctx, **o: ConfiguredJudge(), replace=True)
    try:
        j = r.create("judges", "configured")
    finally:
        r.judges.unregister("configured")
    assert isinstance(j, r.GuardedProxy) and j.threshold == 0.5 and j.id == "fake@1"
    with pytest.raises(PluginError, match=r"^judge 'configured' \(plugin\) failed reading 'margin': KeyError: 'margin'$"):
        j.margin
