"""Commands imported when they are used: a group's subcommands named in a table
(`Entry`), each one's module imported the first time the group looks it up.

A `LazyCommands` mapping stands in for a group's `commands` dict: its names are known
at once (for `--help`, completion and "did you mean"), a command is built from its
module on first access (`commands["tree"]`, `commands.get("tree")`), and the help page
lists the table's one-line summaries without importing anything. So `testaug --version`
imports no command module, and `testaug tree export` imports the tree door's alone.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

import typer
from typer.core import TyperGroup

# What an entry's target is: a command function, a Typer app, or a function building one.
Kind = Literal["command", "app", "door"]


@dataclass(frozen=True)
class Entry:
    """One subcommand of a lazy group: `target` is `module:attribute`; `short_help` is
    the line the group's `--help` shows for it (a visible entry needs one)."""

    target: str
    kind: Kind = "command"
    short_help: str | None = None
    help: str | None = None
    hidden: bool = False


def _no_callback() -> None:
    """The holder group's callback (never run): it makes Typer build a group."""


def build(name: str, entry: Entry) -> Any:
    """The click command of an entry, built as Typer builds a registered command or group
    (plain click help, no pretty exceptions, as the root is set up)."""
    module, attribute = entry.target.split(":")
    target = getattr(importlib.import_module(module), attribute)
    holder = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False)
    holder.callback()(_no_callback)
    options: dict[str, Any] = {"hidden": entry.hidden}
    if entry.short_help is not None:
        options["short_help"] = entry.short_help
    if entry.help is not None:
        options["help"] = entry.help
    if entry.kind == "command":
        holder.command(name, **options)(target)
    else:
        holder.add_typer(target() if entry.kind == "door" else target, name=name, **options)
    return typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands: those built already, and the table's entries, built on first
    access; iteration gives every name in the table's order without building any."""

    def __init__(self, entries: Mapping[str, Entry], built: Mapping[str, Any] = {}) -> None:
        self.entries = dict(entries)
        self.built: dict[str, Any] = dict(built)

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            if name not in self.entries:
                raise KeyError(name)
            self.built[name] = build(name, self.entries[name])
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        found = self.built.pop(name, None) is not None
        if self.entries.pop(name, None) is None and not found:
            raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        yield from self.entries
        yield from (name for name in self.built if name not in self.entries)

    def __len__(self) -> int:
        return len(self.entries.keys() | self.built.keys())

    def __contains__(self, name: object) -> bool:
        return name in self.entries or name in self.built

    def listed(self, name: str) -> Any:
        """The command as a help page lists it: built if it was, else a stand-in with the
        entry's one-line summary (nothing imported)."""
        if name in self.built or name not in self.entries:
            return self[name]
        entry = self.entries[name]
        return TyperGroup(name=name, short_help=entry.short_help, hidden=entry.hidden)


class LazyGroup(TyperGroup):
    """A Typer group whose subcommands come from a table of `Entry`s (`ENTRIES`), each
    imported when it is run or its own help is shown; the group's help lists them all
    without importing any."""

    ENTRIES: Mapping[str, Entry] = {}

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.commands = LazyCommands(self.ENTRIES, self.commands)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        commands = self.commands
        if not isinstance(commands, LazyCommands):
            return super().format_commands(ctx, formatter)
        rows = [(name, commands.listed(name)) for name in self.list_commands(ctx)]
        rows = [(name, command) for name, command in rows if not command.hidden]
        if not rows:
            return None
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, command.get_short_help_str(limit)) for name, command in rows]
            )
        return None
