"""One meaning per flag: every visible option of every command is walked, and the flags
that once meant different things (`--cases`, `--suite`, `--model`, `--rankers`) each name
one kind of input wherever they show, as their help says. The old spellings still work,
hidden, and say on stderr what to type instead."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from testaug.cli import app
from testaug.core.errors import InputError, Problem
from tests.cli_runner import run_testaug

# Each flag, what its help must say (the one kind of input it names) and what it must not
# (the kinds that now have flags of their own).
MEANINGS: dict[str, tuple[str, tuple[str, ...]]] = {
    "--seed-cases": ("seed cases", ()),
    "--suite-cases": ("suite's cases (JSONL)", ()),
    "--test-cases": ("test cases (JSONL)", ("seed",)),
    "--suite": ("suite", ("JSONL", "cases")),
    "--model": ("model under test", ("start from", "checkpoint")),
    "--start-model": ("checkpoint the first round fine-tunes", ()),
    "--rankers": ("trained ensemble folder", ()),
}
# Names no visible option has any more: each meant different things in different commands.
RETIRED = ("--cases",)


def visible_options(
    group: Any, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(flag, help, command path) of every visible option of every visible command under
    `group`; the root builds its commands when asked (`group.commands[name]`)."""
    for name in list(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        if isinstance(command, typer.core.TyperGroup):
            yield from visible_options(command, (*path, name))
            continue
        for param in command.params:
            if param.param_type_name != "option" or getattr(param, "hidden", False):
                continue
            for flag in param.opts:
                yield flag, param.help or "", (*path, name)


@pytest.fixture(scope="module")
def options() -> dict[str, dict[str, list[tuple[str, ...]]]]:
    """Each visible flag: its help texts, each with the commands that show it."""
    found: dict[str, dict[str, list[tuple[str, ...]]]] = defaultdict(lambda: defaultdict(list))
    for flag, help, path in visible_options(typer.main.get_command(app)):
        found[flag][help].append(path)
    return found


def test_the_walk_finds_the_commands_of_every_door(options):
    shown = {path for helps in options.values() for paths in helps.values() for path in paths}
    for path in [("rank",), ("rankers", "evaluate"), ("review", "candidates", "apply")]:
        assert path in shown
    assert ("tree", "fix") in shown and ("evaluate", "generalization") in shown


@pytest.mark.parametrize("flag", sorted(MEANINGS))
def test_each_flag_names_one_kind_of_input_wherever_it_shows(options, flag):
    says, never = MEANINGS[flag]
    assert flag in options, f"no command shows {flag}"
    wrong = {
        help: paths
        for help, paths in options[flag].items()
        if says not in help or any(word in help for word in never)
    }
    assert not wrong, f"{flag} should say {says!r} (and none of {never}): {wrong}"


def test_no_command_shows_a_flag_that_meant_several_things(options):
    assert not {flag: dict(options[flag]) for flag in RETIRED if flag in options}


def test_the_three_seed_meanings_share_one_flag(options):
    paths = {path for paths in options["--seed-cases"].values() for path in paths}
    assert {("rank",), ("rankers", "evaluate"), ("templates", "induce")} <= paths
    assert {("review", "candidates", "terminal"), ("review", "candidates", "push")} <= paths


def stand_in(monkeypatch, target: str, seen: list[Any]) -> None:
    """Replace the function `module:name` by one that keeps its first argument in `seen`
    and stops the command with one error line."""
    module, name = target.split(":")

    def stopped(config: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(config)
        raise InputError(Problem("stopped before any work"))

    monkeypatch.setattr(f"{module}.{name}", stopped)


# A command with the other inputs it needs, an old spelling and its new one, the function
# the command's work starts with, and where the value shows in that function's first
# argument.
OLD_SPELLINGS = [
    ("rank", ("c.jsonl", "--rankers", "r", "-o", "o.jsonl"), "--cases", "--seed-cases",
     "testaug.steps.rank:rank_candidates", "cases"),
    ("rankers evaluate", ("l.jsonl", "--rankers", "r"), "--cases", "--seed-cases",
     "testaug.steps.rankers:evaluate_rankers", "cases"),
    ("templates induce", ("a.jsonl", "-o", "t.yaml"), "--cases", "--seed-cases",
     "testaug.steps.grow:induce_templates_file", "cases"),
    ("review candidates terminal", ("ranked.jsonl",), "--cases", "--seed-cases",
     "testaug.cli.review.candidates:review_in_terminal", "cases"),
    ("review candidates push", ("ranked.jsonl",), "--cases", "--seed-cases",
     "testaug.cli.review.candidates:push_to_label_studio", "cases"),
    ("review candidates pull", ("--verdicts", "v.jsonl"), "--suite", "--suite-cases",
     "testaug.cli.review.candidates:pull_and_merge", "suite"),
    ("review candidates apply", ("v.jsonl", "--ranked", "r.jsonl"), "--suite", "--suite-cases",
     "testaug.cli.review.candidates:merge_reviewed", "suite"),
    ("evaluate generalization", ("--iid", "i.jsonl", "--model", "hf:m"), "--suite",
     "--suite-cases", "testaug.steps.generalize:generalize_files", "suite"),
    ("tree fix", ("--work", "w", "--iid", "i.jsonl", "--tree", "t.jsonl"), "--model",
     "--start-model", "testaug.steps.fix:fix_files", "model"),
    ("tree fix", ("--work", "w", "--iid", "i.jsonl", "--start-model", "hf:m"), "--cases",
     "--test-cases", "testaug.steps.fix:fix_files", "cases"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("command", "args", "old", "new", "target", "field"),
    OLD_SPELLINGS,
    ids=[f"{command} {old}" for command, _, old, *_ in OLD_SPELLINGS],
)
def test_an_old_spelling_still_works_and_says_the_new_one(
    tmp_path, monkeypatch, command, args, old, new, target, field
):
    monkeypatch.setattr("testaug.cli.review.candidates.connect_label_studio", lambda *a: None)
    seen: list[Any] = []
    stand_in(monkeypatch, target, seen)
    value = "hf:old" if old == "--model" else "old.jsonl"
    result = run_testaug(tmp_path, *command.split(), *args, old, value)
    assert result.returncode == 1, result.stderr
    assert "stopped before any work" in result.stderr and "Traceback" not in result.stderr
    assert f"note: `{old}` is now `{new}` in `testaug {command}`" in result.stderr
    given = getattr(seen[0], field)
    assert given == (value if old == "--model" else Path(value))
    seen.clear()
    again = run_testaug(tmp_path, *command.split(), *args, new, value)
    assert "note:" not in again.stderr and getattr(seen[0], field) == given
