"""Output at 80 columns and piped (as every test's is): tables and `--help` wrap at spaces
instead of cutting names, and other libraries' known noise stays out of the output."""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

from rich.table import Table

from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import write_tree
from tests.cli_runner import run_testaug, spawn_testaug

REPO = Path(__file__).resolve().parents[2]
THREE = "py:tests.adaptive.fixed_models:three"
# A topic path with no space to wrap at, and one that wraps at its spaces.
LONG_TOPIC = "/Negation/Short_negated_verbs"
SPACED_TOPIC = "/Negation/A negative sentence with a negated positive verb."
W095 = (
    "[W095] Model 'eng_spacysentiment' (1.0.0) was trained with spaCy v3.4.0 and may not be "
    "100% compatible with the current version (3.8.18)."
)
TIGHT_LAYOUT = "Tight layout not applied. tight_layout cannot make Axes height small enough"


def noisy_three(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """The fixed model `three`, warning as spaCy and matplotlib do on every run."""
    from tests.adaptive.fixed_models import three

    warnings.warn(W095, UserWarning, stacklevel=1)
    warnings.warn(TIGHT_LAYOUT, UserWarning, stacklevel=1)
    return three(inputs)


def long_topic_tree(path: Path) -> Path:
    rows = (
        TreeTest(topic=LONG_TOPIC, input="clear win", output="positive"),
        TreeTest(topic=SPACED_TOPIC, input="negative one", output="negative"),
    )
    write_tree(path, TestTree(rows=rows))
    return path


def test_help_at_80_columns_shows_long_option_names_whole():
    result = run_testaug(None, "run", "--help", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    assert "--prompts-per-description" in result.stdout
    assert "spacy:eng_spacysentiment" in result.stdout
    assert "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_a_topic_table_at_80_columns_keeps_long_topic_names_whole(tmp_path):
    tree = long_topic_tree(tmp_path / "tree.jsonl")
    result = run_testaug(
        tmp_path, "tree", "retest", str(tree), "--model", THREE,
        "--labels", "negative,neutral,positive", "-o", str(tmp_path / "report.json"),
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert LONG_TOPIC in result.stdout
    assert "/Negation/A negative" in result.stdout  # wrapped at its spaces, not cut
    assert "…" not in result.stdout
    table = [line for line in result.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 80  # the title names a long path


def test_a_table_whose_words_cannot_fit_runs_wider_rather_than_cutting_a_name():
    from testaug.cli.console import cli_console

    out = io.StringIO()
    console = cli_console(file=out, width=40)
    table = Table()
    table.add_column("description")
    table.add_column("cases", justify="right")
    name = "Negated_positive_adjectives_in_short_sentences"
    table.add_row(name, "12")
    table.add_row("short one with several words to wrap", "3")
    console.print(table)
    assert name in out.getvalue() and "…" not in out.getvalue()


def test_quiet_libraries_filters_spacy_w095_and_matplotlib_layout_warnings():
    from testaug.core.heavy_imports import quiet_libraries

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        quiet_libraries()
        warnings.warn(W095, UserWarning, stacklevel=1)
        warnings.warn(TIGHT_LAYOUT, UserWarning, stacklevel=1)
        warnings.warn("a warning of our own", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["a warning of our own"]


def test_quiet_libraries_turns_hugging_face_progress_bars_off():
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars

    from testaug.core.heavy_imports import quiet_libraries

    try:
        quiet_libraries()
        assert are_progress_bars_disabled()
    finally:
        enable_progress_bars()


def test_a_command_prints_no_spacy_or_matplotlib_warnings(tmp_path):
    tree = long_topic_tree(tmp_path / "tree.jsonl")
    result = spawn_testaug(
        tmp_path, "tree", "retest", str(tree), "--model", "py:tests.cli.test_cli_narrow_output:noisy_three",
        "--labels", "negative,neutral,positive", "-o", str(tmp_path / "report.json"),
        env={"PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    output = result.stdout + result.stderr
    assert "W095" not in output and "Tight layout" not in output
    assert LONG_TOPIC in result.stdout
