"""Backend wrappers that have exactly the capabilities of the backend they wrap.

The call cache (``CachedBackend``) and the usage meter (``MeteredBackend``) each wrap any backend, and each must
stay truthful to ``isinstance(wrapper, Capability)`` (``vericite.protocols``): a wrapper of a backend without
``next_token_logprobs`` must not have one either, or a judge would pick a scoring path the model cannot serve.

So a family of wrappers is a root class (a :class:`CapabilityWrapper`) and one subclass per capability, its *mixin*,
listed on the root as ``capabilities = ((Protocol, Mixin), ...)``. Constructing the root builds the class of the
mixins of the capabilities the backend has (one class per combination, made once). Attributes the wrapper does not define (``stats``, ``n_ctx`` ...) are read from the
wrapped backend, except the capability methods: those the backend lacks stay missing.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from ..types import ModelIdentity

__all__ = ["CapabilityWrapper"]


class CapabilityWrapper:
    """The root of a family of capability-preserving wrappers (module docstring). A root sets ``capabilities``
    (after its mixins are defined) and may name ``own_attributes``, its own attributes that must never be read
    from the wrapped backend (read before they are set, they are missing, not the backend's)."""

    capabilities: ClassVar[tuple[tuple[type, type], ...]] = ()
    own_attributes: ClassVar[frozenset[str]] = frozenset()
    backend: Any

    def __new__(cls, backend: Any, *args: Any, **kwargs: Any) -> Any:
        if "capabilities" in cls.__dict__:  # the family's root: the class of the backend's capabilities
            cls = _compose(cls, tuple(mixin for protocol, mixin in cls.capabilities if isinstance(backend, protocol)))
        return super().__new__(cls)

    def __getattr__(self, name: str) -> Any:  # stats, n_ctx ... of the wrapped backend
        if name == "backend" or name in self.own_attributes or name in _capability_methods(type(self).capabilities):
            raise AttributeError(name)  # capabilities the wrapped backend lacks are not faked
        return getattr(self.backend, name)

    def identity(self) -> ModelIdentity:
        return self.backend.identity()

    def wrapped_backend(self) -> Any:
        """The backend wrapped (``protocols.BackendWrapper``)."""
        return self.backend


@functools.lru_cache(maxsize=None)
def _capability_methods(capabilities: tuple[tuple[type, type], ...]) -> frozenset[str]:
    """The public methods the mixins add: the names a wrapper has only when its backend has the capability."""
    return frozenset(name for _, mixin in capabilities for name in vars(mixin) if not name.startswith("_"))


@functools.lru_cache(maxsize=None)
def _compose(root: type, chosen: tuple[type, ...]) -> type:
    """The class of ``root``'s family with the mixins ``chosen`` (one class per combination)."""
    if not chosen:
        return root
    if len(chosen) == 1:
        return chosen[0]
    return type(root.__name__, chosen, {"__module__": root.__module__, "__qualname__": root.__qualname__})
