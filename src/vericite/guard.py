"""Guarding a plugin's calls (split out of registry.py, which had grown past what a reader holds): a plugin's
method that raises something other than a vericite error fails with a :class:`PluginError` naming the plugin, its
kind, the exception's class and message (``GuardedCall``), and so does a model backend's ``generate``, next-token or
text scoring that returns other than one well-shaped result per input, or ``tokenize`` other than token ids
(``RESULT_CHECKS``, in ``guard_results.py``: checked before the call cache stores it, so a plugin's word on an
item answered during a call, ``progress.answered``, goes nowhere; numbers of other types,
numpy's float32 or int64, are taken as Python's, and then arrays, a 1-d ``ndarray`` row, as lists: ``python_numbers``); objects that take no attribute
(``__slots__``, classes) are wrapped in a ``GuardedProxy`` instead of patched, and so are objects whose class
computes an attribute when it is read (a property): the proxy guards those reads too (``"<label> failed reading
'id': <class>: <message>"``). ``registry.Registry`` applies these to every plugin it builds; vericite's own
entries are never guarded (``registry.mark_builtins``)."""

from __future__ import annotations

import threading
import types
from typing import Any, Callable, Iterator

from .errors import BackendError, PluginAttributeError, PluginError
from .guard_results import RESULT_CHECKS, made_plain, python_numbers  # noqa: F401  (re-exported: guard.RESULT_CHECKS, guard.python_numbers)
from .progress import answers_to

#: guards the making of proxy classes (the registries' own lock is registry._lock; this one is never held while taking it)
_lock = threading.RLock()


def describe(e: BaseException) -> str:
    """An exception as one line: ``"<class>: <message>"`` (the message's whitespace folded, at most 300 characters)."""
    message = " ".join(str(e).split())
    message = message if len(message) <= 300 else message[:299] + "…"
    return type(e).__name__ + (f": {message}" if message else "")


class GuardedCall:
    """A method of an object built from a plugin, with an exception other than a ``BackendError`` raised in it
    turned into a :class:`PluginError`: ``"<label> failed: <class>: <message>"``, on one line, of ``kind``.
    ``KeyboardInterrupt`` and ``SystemExit`` (which are no ``Exception``) go through as they are."""

    def __init__(self, method: Callable[..., Any], label: str, kind: str | None = None, name: str = "") -> None:
        self.method = method
        self.label = label
        self.kind = kind
        self.name = name  # the method's name: a model backend's generate and next_token_logprobs have their results checked

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            with answers_to(None):  # unchecked answers are not stored while the call runs: its result is checked below
                result = self.method(*args, **kwargs)
        except BackendError:
            raise
        except Exception as e:  # noqa: BLE001 - a plugin's failure is the plugin's: one line, handled as a failed call
            raise PluginError(f"{self.label} failed: {describe(e)}", kind=self.kind) from e
        check = RESULT_CHECKS.get((self.kind, self.name))
        if check is not None:
            try:
                check(self, args, kwargs, result)
            except PluginError as refused:  # numpy's scalars (float32, int64...) as Python's numbers, then its arrays as lists
                result = made_plain(check, self, args, kwargs, result, refused)
        return self._iterated(result) if isinstance(result, types.GeneratorType) else result

    def _iterated(self, gen: Iterator[Any]) -> Iterator[Any]:
        """A generator the plugin returned (a lazy ``load``): what it raises while it is read is guarded too."""
        try:
            yield from gen
        except BackendError:
            raise
        except Exception as e:  # noqa: BLE001 - as in __call__
            raise PluginError(f"{self.label} failed: {describe(e)}", kind=self.kind) from e

    def __repr__(self) -> str:
        return f"GuardedCall({self.method!r})"


def guard_calls(obj: Any, methods: tuple[str, ...], label: str, *, kind: str | None = None) -> Any:
    """``obj`` with each of ``methods`` that it has wrapped in a :class:`GuardedCall`; returns the object to use.

    An object with a ``__dict__`` is guarded in place (the wrappers are set on it), so its class, capabilities and
    attributes are unchanged and it pickles as before; a method already guarded is left as it is. An object that
    takes no attribute (``__slots__`` without ``__dict__``), or whose class has an attribute computed when read (a
    property, see :func:`computed_attributes`, or its own ``__getattr__``), is wrapped in a :class:`GuardedProxy` instead: the same attributes
    and capabilities (and ``isinstance`` of its class), its calls and attribute reads guarded."""
    if isinstance(obj, GuardedProxy):
        return obj
    todo = [n for n in methods if callable(getattr(obj, n, None)) and not isinstance(getattr(obj, n), GuardedCall)]
    if computed_attributes(obj) or _dynamic(obj):
        return _guarded_proxy(obj, tuple(todo), label, kind)
    if not todo:
        return obj
    try:
        for name in todo:
            object.__setattr__(obj, name, GuardedCall(getattr(obj, name), label, kind, name))
    except (AttributeError, TypeError):
        for name in todo:  # some were set before the object refused one: take them back, the proxy guards them
            if isinstance(vars(obj).get(name) if hasattr(obj, "__dict__") else None, GuardedCall):
                object.__delattr__(obj, name)
        return _guarded_proxy(obj, tuple(todo), label, kind)
    return obj


def rebind_guards(obj: Any) -> Any:
    """After ``copy.copy`` of an object guarded in place, the copy's wrappers still call the original's methods:
    bind them to the copy (a metric family's judged part, ``evaluate/answer_scoring.py``). Returns ``obj``."""
    if isinstance(obj, GuardedProxy) or not hasattr(obj, "__dict__"):
        return obj
    for name, call in list(vars(obj).items()):
        if isinstance(call, GuardedCall) and getattr(call.method, "__self__", obj) is not obj:
            function = getattr(type(obj), name, None)
            if callable(function):
                object.__setattr__(obj, name, GuardedCall(function.__get__(obj, type(obj)), call.label, call.kind, name))
    return obj


def computed_attributes(obj: Any) -> frozenset[str]:
    """The public attributes of ``obj``'s class computed when they are read, which may raise: properties,
    ``cached_property`` and other descriptors that are not methods. A plain value (a class attribute, one the
    object sets) cannot raise when read and is not among them; a class a plugin returns has none."""
    if isinstance(obj, type):
        return frozenset()
    cls = type(obj)
    found = set()
    for name in dir(cls):
        if name.startswith("_"):
            continue
        value = next((vars(k)[name] for k in cls.__mro__ if name in vars(k)), None)
        if hasattr(type(value), "__get__") and not isinstance(value, _NOT_COMPUTED):
            found.add(name)
    return frozenset(found)


def _dynamic(obj: Any) -> bool:
    """Whether ``obj``'s class makes attributes up when read (its own ``__getattr__`` or ``__getattribute__``):
    reading one may raise, so the object is proxied and its reads guarded (an ``AttributeError`` stays one)."""
    cls = type(obj)
    return not isinstance(obj, type) and (hasattr(cls, "__getattr__") or cls.__getattribute__ is not object.__getattribute__)


#: descriptors that are methods (reading them binds a function; calling it is what :class:`GuardedCall` guards)
_NOT_COMPUTED = (types.FunctionType, staticmethod, classmethod, types.BuiltinFunctionType, types.MethodDescriptorType,
                 types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.MemberDescriptorType, GuardedCall)  # fmt: skip


def _read(proxy: Any, name: str) -> Any:
    """``name`` of the proxy's object: what reading it raises becomes a :class:`PluginError` naming the attribute
    (``"<label> failed reading 'id': <class>: <message>"``), a ``BackendError`` goes through as a call's does, and
    an ``AttributeError`` stays one unless the attribute is computed (then a :class:`PluginAttributeError`, still
    an ``AttributeError`` for ``hasattr``), so a missing attribute reads as missing."""
    try:
        return getattr(object.__getattribute__(proxy, "_vericite_target"), name)
    except BackendError:
        raise
    except AttributeError as e:
        if name not in type(proxy)._vericite_computed:
            raise
        _, label, kind = object.__getattribute__(proxy, "_vericite_guard")
        raise PluginAttributeError(f"{label} failed reading {name!r}: {describe(e)}", kind=kind) from e
    except Exception as e:  # noqa: BLE001 - as in GuardedCall.__call__
        _, label, kind = object.__getattribute__(proxy, "_vericite_guard")
        raise PluginError(f"{label} failed reading {name!r}: {describe(e)}", kind=kind) from e


class GuardedProxy:
    """A plugin's object that takes no attribute or computes one when read, with its guarded calls and reads:
    every other attribute is the object's own (read and written through; a read that raises is the plugin's
    failure, :func:`_read`), ``isinstance(proxy, TheClass)`` holds, and it copies and pickles as a proxy of a copy
    of the object. Built by :func:`guard_calls`, one subclass per class (each public attribute of the class a
    descriptor, so Protocol checks that look attributes up statically find them)."""

    _vericite_computed: frozenset[str] = frozenset()  # the object's computed attributes (each proxy class its own)

    __slots__ = ("_vericite_target", "_vericite_calls", "_vericite_guard")

    def __init__(self, target: Any, methods: tuple[str, ...], label: str, kind: str | None) -> None:
        object.__setattr__(self, "_vericite_target", target)
        object.__setattr__(self, "_vericite_guard", (methods, label, kind))
        object.__setattr__(self, "_vericite_calls", {n: GuardedCall(getattr(target, n), label, kind, n) for n in methods})

    def __getattr__(self, name: str) -> Any:  # only names the proxy's class does not have
        if name.startswith("_vericite_"):
            raise AttributeError(name)
        calls = object.__getattribute__(self, "_vericite_calls")
        return calls[name] if name in calls else _read(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_vericite_target"), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "_vericite_target"), name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(proxy, TheClass) holds; type(proxy) is the proxy's
        return type(object.__getattribute__(self, "_vericite_target"))

    def __dir__(self) -> list[str]:
        return dir(object.__getattribute__(self, "_vericite_target"))

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "_vericite_target"))

    def __reduce__(self) -> Any:
        return (_guarded_proxy, (object.__getattribute__(self, "_vericite_target"), *object.__getattribute__(self, "_vericite_guard")))

    def __copy__(self) -> Any:
        import copy

        return _guarded_proxy(copy.copy(object.__getattribute__(self, "_vericite_target")), *object.__getattribute__(self, "_vericite_guard"))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        import copy

        target = copy.deepcopy(object.__getattribute__(self, "_vericite_target"), memo)
        return _guarded_proxy(target, *object.__getattribute__(self, "_vericite_guard"))


class _Delegated:
    """An attribute of a :class:`GuardedProxy`'s class: the guarded call, else the object's own attribute."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, proxy: Any, owner: type | None = None) -> Any:
        if proxy is None:
            return self
        calls = object.__getattribute__(proxy, "_vericite_calls")
        if self.name in calls:
            return calls[self.name]
        return _read(proxy, self.name)

    def __set__(self, proxy: Any, value: Any) -> None:
        setattr(object.__getattribute__(proxy, "_vericite_target"), self.name, value)

    def __delete__(self, proxy: Any) -> None:
        delattr(object.__getattribute__(proxy, "_vericite_target"), self.name)


_proxy_classes: dict[tuple[type, tuple[str, ...]], type] = {}


def _guarded_proxy(target: Any, methods: tuple[str, ...], label: str, kind: str | None) -> GuardedProxy:
    cls = type(target)
    # the object's attributes (its class's, its slots'; a class's own when the object is a class), each a descriptor
    names = tuple(sorted(n for n in {*dir(cls), *dir(target)} if not n.startswith("__") and not n.startswith("_vericite_")))
    with _lock:
        if (cls, names) not in _proxy_classes:
            namespace: dict[str, Any] = {n: _Delegated(n) for n in names}
            namespace["__slots__"] = ()
            namespace["_vericite_computed"] = computed_attributes(target)
            for dunder in ("__len__", "__iter__", "__contains__", "__getitem__", "__enter__", "__exit__", "__call__"):
                if hasattr(cls, dunder):
                    namespace[dunder] = _dunder(dunder)
            _proxy_classes[cls, names] = type(f"Guarded{cls.__name__}", (GuardedProxy,), namespace)
    return _proxy_classes[cls, names](target, methods, label, kind)  # type: ignore[no-any-return]


def _dunder(name: str) -> Callable[..., Any]:
    def call(proxy: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(object.__getattribute__(proxy, "_vericite_target"), name)(*args, **kwargs)

    call.__name__ = name
    return call


def protocol_members(protocol: type) -> list[str]:
    """The public members a Protocol asks for: its attributes, then its methods."""
    names = list(vars(protocol).get("__annotations__", {})) + list(vars(protocol))
    return list(dict.fromkeys(n for n in names if not n.startswith("_")))
