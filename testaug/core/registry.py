"""Registries of pluggable kinds: a name mapped to what builds that kind.

A registry maps names (an LLM backend's kind, a model spec's prefix, a ranker
member's kind) to a factory. The module that defines a kind registers it when
imported, so adding a kind edits no dispatch code:

    BACKEND_KINDS = Registry[BackendFactory]("backend", error=BackendError)

    @BACKEND_KINDS.register("echo")
    def echo_backend(options: BackendOptions) -> Backend: ...

An installed package can add kinds too: an entry point in the registry's group
(e.g. `testaug.backends`), named by the kind and pointing at the factory, is
loaded the first time its kind is asked for. Registered names win over entry
points of the same name. Registries keep the order names were registered in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from testaug.core.errors import TestAugError

T = TypeVar("T")


class RegistryError(TestAugError):
    """A name registered twice, or a name a registry does not know."""


class Registry(Generic[T]):
    """Names of one kind of thing (`kind`, used in messages) and what each name builds.

    `error` is the error raised for an unknown name (a subclass of `TestAugError`,
    so callers catch the error of their own domain); `entry_points` is the group
    of installed plugins, or None for none.
    """

    def __init__(
        self,
        kind: str,
        *,
        error: type[TestAugError] = RegistryError,
        entry_points: str | None = None,
    ) -> None:
        self.kind = kind
        self.error = error
        self.group = entry_points
        self._items: dict[str, T] = {}
        self._plugins: dict[str, EntryPoint] | None = None
        self._lock = threading.Lock()

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator that registers what it decorates under `name` and returns it unchanged."""

        def decorate(item: T) -> T:
            return self.add(name, item)

        return decorate

    def add(self, name: str, item: T) -> T:
        """Registers `item` under `name`; raises `RegistryError` when the name is taken."""
        if not name:
            raise RegistryError(f"a {self.kind} needs a non-empty name")
        with self._lock:
            if name in self._items:
                raise RegistryError(f"{self.kind} {name!r} is already registered")
            self._items[name] = item
        return item

    def remove(self, name: str) -> None:
        """Forgets a registered name; raises the registry's error when it is not registered."""
        with self._lock:
            if self._items.pop(name, None) is None:
                raise self.error(self._unknown(name))

    @contextmanager
    def registered(self, name: str, item: T) -> Iterator[T]:
        """Registers `item` under `name` for the duration of a `with` block (tests, scripts)."""
        self.add(name, item)
        try:
            yield item
        finally:
            with self._lock:
                self._items.pop(name, None)

    def get(self, name: str) -> T:
        """What `name` builds; raises the registry's error, listing the known names, if none."""
        item = self._items.get(name)
        if item is not None:
            return item
        plugin = self._entry_points().get(name)
        if plugin is None:
            raise self.error(self._unknown(name))
        try:
            loaded = plugin.load()
        except Exception as exc:  # a broken plugin is reported, never a crash
            raise self.error(
                f"cannot load {self.kind} {name!r} from {plugin.value}: {exc}"
            ) from exc
        with self._lock:
            return self._items.setdefault(name, loaded)

    def names(self) -> tuple[str, ...]:
        """Every known name: registered ones in registration order, then installed plugins."""
        registered = tuple(self._items)
        return registered + tuple(n for n in self._entry_points() if n not in registered)

    def __contains__(self, name: object) -> bool:
        return name in self._items or name in self._entry_points()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _unknown(self, name: str) -> str:
        known = ", ".join(self.names()) or "none registered"
        return f"unknown {self.kind} {name!r} (expected one of {known})"

    def _entry_points(self) -> dict[str, EntryPoint]:
        """The installed plugins of the registry's group, read once."""
        if self.group is None:
            return {}
        if self._plugins is None:
            found = {ep.name: ep for ep in entry_points(group=self.group)}
            self._plugins = dict(sorted(found.items()))
        return self._plugins
