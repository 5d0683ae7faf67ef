"""The old command names: each one still works, hidden from `--help`, and says on stderr
what to type instead (`testaug annotate terminal` is now `testaug review candidates
terminal`). Their stdout and exit codes are those of the command they name.

`RENAMED` maps an old command path to the new one; the root group announces the old path
when it resolves a hidden command (`announce_renamed`). `testaug/cli/groups.py` registers
the hidden commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from testaug.cli.console import err_console, styled

RENAMED: dict[tuple[str, ...], str] = {
    ("expand",): "templates expand",
    ("diversity",): "suite diversity",
    ("patch-eval",): "evaluate patching",
    ("generalize",): "evaluate generalization",
    ("suggest",): "lexicon suggest",
    ("adapt",): "tree adapt",
    ("fix",): "tree fix",
    ("annotate",): "review candidates",
    ("annotate", "terminal"): "review candidates terminal",
    ("annotate", "push"): "review candidates push",
    ("annotate", "pull"): "review candidates pull",
    ("annotate", "merge"): "review candidates apply",
    ("annotate", "retrain"): "review candidates retrain",
    ("annotate", "server"): "review server",
    ("annotate", "install-server"): "review install-server",
    ("suggestions",): "review tests",
    ("suggestions", "review"): "review tests terminal",
    ("suggestions", "push"): "review tests push",
    ("suggestions", "pull"): "review tests pull",
    ("lexicon", "review"): "review words terminal",
    ("lexicon", "push"): "review words push",
    ("lexicon", "pull"): "review words pull",
    ("lexicon", "apply"): "review words apply",
    ("editor",): "lexicon",
    ("editor", "install-wordnet"): "lexicon install-wordnet",
}


def notice(text: str) -> None:
    """One line on stderr about a renamed command or option (never on stdout)."""
    err_console.print(styled("[yellow]note:[/] {}", text))


def renamed_message(old: Sequence[str], new: str) -> str:
    return f"`testaug {' '.join(old)}` is now `testaug {new}`"


def announce_renamed(name: str | None, command: Any, rest: Sequence[str]) -> None:
    """Say what to type instead when the root group resolved a hidden old name: `name`
    itself (`testaug expand`), or the subcommand that `rest` starts with (`testaug annotate
    terminal`, `testaug lexicon review`)."""
    if name is None or command is None:
        return
    paths: list[tuple[str, ...]] = []
    subcommands = getattr(command, "commands", None)
    named = rest and isinstance(subcommands, dict) and rest[0] in subcommands
    if named and (command.hidden or subcommands[rest[0]].hidden):
        paths.append((name, rest[0]))
    if command.hidden:
        paths.append((name,))
    for path in paths:
        if path in RENAMED:
            notice(renamed_message(path, RENAMED[path]))
            return
