"""The doors of `testaug`: a dozen commands grouped by workflow, the old names hidden but
working (with a note on stderr that says what to type instead), `testaug evaluate CASES`
forwarded to `evaluate models`, one error line that names the flag when a config record
refuses a value, and help texts in plain words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
import typer

from testaug.cli import app
from testaug.cli.aliases import RENAMED
from testaug.cli.options import build_config, choice
from testaug.core.errors import InputError
from testaug.core.records import Record
from tests.cli_runner import run_testaug

DOORS = [
    "run", "suite", "templates", "generate", "rank", "rankers", "review", "evaluate", "tree",
    "lexicon", "report", "flows",
]  # fmt: skip
JARGON = re.compile(r"Eq\.|\bBL-\d|\bAT-|\bCL-\d|T_val|SPEC|issue [0-9]")


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group under `group` (hidden ones too), with its path."""
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, typer.core.TyperGroup):
            yield from commands(command, (*path, name))


def listed(help_text: str) -> list[str]:
    """The command names under "Commands:" in a help page."""
    section = help_text.split("Commands:", 1)[1]
    return [line.split()[0] for line in section.splitlines() if line.startswith("  ")]


@pytest.fixture(scope="module")
def root() -> Any:
    return typer.main.get_command(app)


def test_help_lists_the_doors_and_no_old_name():
    result = run_testaug(None, "--help")
    assert result.returncode == 0
    names = listed(result.stdout)
    assert names == DOORS and len(names) <= 12
    old = {path[0] for path in RENAMED} - set(DOORS)
    assert old and not old & set(names)


@pytest.mark.parametrize(
    ("group", "expected"),
    [
        ("suite", ["validate", "stats", "lexicons", "import", "export", "diversity"]),
        ("templates", ["expand", "induce"]),
        ("review", ["candidates", "tests", "words", "server", "install-server"]),
        ("review candidates", ["terminal", "push", "pull", "apply", "retrain"]),
        ("review tests", ["terminal", "push", "pull", "apply"]),
        ("review words", ["terminal", "push", "pull", "apply"]),
        ("evaluate", ["models", "patching", "generalization"]),
        ("tree", ["from-suite", "import", "export", "score", "retest", "adapt", "fix"]),
        ("lexicon", ["suggest", "install-wordnet"]),
    ],
)
def test_each_door_lists_its_commands(group, expected):
    result = run_testaug(None, *group.split(), "--help")
    assert result.returncode == 0 and listed(result.stdout) == expected


@pytest.mark.parametrize("old", sorted(RENAMED), ids=" ".join)
def test_every_old_name_works_hidden_and_says_what_to_type_instead(root, old):
    result = run_testaug(None, *old, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout
    note = f"`testaug {' '.join(old)}` is now `testaug {RENAMED[old]}`"
    assert result.stderr.strip() == f"note: {note}"
    hidden, command = [], root
    for name in old:
        command = command.commands[name]
        hidden.append(command.hidden)
    assert any(hidden)  # the old name itself, or the old group it is in
    new = root
    for name in RENAMED[old].split():
        new = new.commands[name]  # the new name exists
    assert not new.hidden


def test_an_old_name_prints_what_the_new_one_prints(tmp_path, tiny_suite_path):
    new = run_testaug(tmp_path, "templates", "expand", str(tiny_suite_path), "-o", "new.jsonl")
    old = run_testaug(tmp_path, "expand", str(tiny_suite_path), "-o", "old.jsonl")
    assert new.returncode == old.returncode == 0
    assert old.stdout == new.stdout.replace("new.jsonl", "old.jsonl")
    assert (tmp_path / "old.jsonl").read_text() == (tmp_path / "new.jsonl").read_text()
    assert "note:" not in new.stderr
    assert "`testaug expand` is now `testaug templates expand`" in old.stderr


def test_an_old_name_keeps_its_exit_code(tmp_path):
    old = run_testaug(tmp_path, "expand", "no-such-suite", "-o", "x.jsonl")
    new = run_testaug(tmp_path, "templates", "expand", "no-such-suite", "-o", "x.jsonl")
    assert old.returncode == new.returncode == 1
    assert old.stderr.splitlines()[1:] == new.stderr.splitlines()


def test_evaluate_with_cases_first_runs_evaluate_models(tmp_path, tiny_suite_path):
    expanded = run_testaug(tmp_path, "templates", "expand", str(tiny_suite_path), "-o", "c.jsonl")
    assert expanded.returncode == 0
    args = ("c.jsonl", "--model", "vader", "--perturb", "0")
    new = run_testaug(tmp_path, "evaluate", "models", *args)
    old = run_testaug(tmp_path, "evaluate", *args)
    assert new.returncode == old.returncode == 0, old.stderr
    assert old.stdout == new.stdout and "error rate" in old.stdout
    assert "`testaug evaluate CASES` is now `testaug evaluate models CASES`" in old.stderr
    options_first = run_testaug(
        tmp_path, "evaluate", "--model", "vader", "c.jsonl", "--perturb", "0"
    )
    assert options_first.returncode == 0 and options_first.stdout == new.stdout


def test_a_mistyped_evaluate_subcommand_is_still_an_unknown_command():
    result = run_testaug(None, "evaluate", "modls")
    assert result.returncode == 2
    assert "No such command 'modls'" in result.stderr and "models" in result.stderr


def test_a_bad_choice_is_one_line_naming_the_flag(tmp_path, tiny_suite_path):
    run_testaug(tmp_path, "templates", "expand", str(tiny_suite_path), "-o", "c.jsonl")
    result = run_testaug(
        tmp_path, "evaluate", "models", "c.jsonl", "--model", "vader", "--evidence", "some"
    )
    assert result.returncode == 1
    assert result.stderr.strip() == ("error: --evidence: expected one of verified, all, got 'some'")


class Ordering(Record):
    order: Literal["selected", "ranked", "random"] = "selected"
    top_k: int = 3
    rate: float = 0.5


def test_build_config_names_the_flag_of_each_refused_value():
    assert build_config(Ordering, order="ranked").order == "ranked"
    with pytest.raises(InputError) as caught:
        build_config(Ordering, order="best")
    assert str(caught.value) == "--order: expected one of selected, ranked, random, got 'best'"
    with pytest.raises(InputError) as caught:
        build_config(Ordering, flags={"top_k": "-k"}, top_k="many", rate="x")
    lines = [str(problem) for problem in caught.value.problems]
    assert lines[0].startswith("-k: ") and "'many'" in lines[0]
    assert lines[1].startswith("--rate: ")


def test_choice_checks_a_value_against_a_literal():
    assert choice(Literal["label", "type"], "type", "--format") == "type"
    with pytest.raises(InputError, match="--format: expected one of label, type, got 'csv'"):
        choice(Literal["label", "type"], "csv", "--format")


def test_renamed_options_work_hidden_and_say_the_new_name(tmp_path, tiny_suite_path):
    result = run_testaug(
        tmp_path, "generate", str(tiny_suite_path), "-o", "c.jsonl", "--dry-run",
        "--model", "some-llm", "-k", "2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "`--model` is now `--llm` in `testaug generate`" in result.stderr
    assert "`-k` is now `--seeds-per-prompt` in `testaug generate`" in result.stderr
    both = run_testaug(
        tmp_path, "generate", str(tiny_suite_path), "-o", "c.jsonl", "--dry-run",
        "--model", "a", "--llm", "b",
    )  # fmt: skip
    assert both.returncode == 1 and "error: --model: give --llm only" in both.stderr


def test_option_names_keep_one_meaning(root):
    """`--model` is the model under test wherever it shows; `-k` shows nowhere."""
    for path, command in commands(root):
        if command.hidden or isinstance(command, typer.core.TyperGroup):
            continue
        for param in command.params:
            names = getattr(param, "opts", [])
            if getattr(param, "hidden", False):
                continue
            assert "-k" not in names, path
            if "--model" in names:
                assert "LLM" not in (param.help or ""), path


def test_no_help_text_cites_papers_by_section_or_equation(root):
    texts = [(("testaug",), root.help or "")]
    for path, command in commands(root):
        texts.append((path, command.help or ""))
        texts += [(path, getattr(p, "help", None) or "") for p in command.params]
    cited = [(path, text) for path, text in texts if JARGON.search(text)]
    assert not cited


def test_the_commands_build_their_configs_without_type_ignores():
    folder = Path(__file__).resolve().parents[2] / "testaug" / "cli"
    ignored = [
        f"{path.name}:{number}"
        for path in sorted(folder.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "type: ignore[arg-type]" in line
    ]
    assert not ignored
