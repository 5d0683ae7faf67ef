"""The committed CLI reference (docs/reference/cli.md) is what docs/cli_reference.py renders
from the commands now: a changed command fails here until the page is regenerated."""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.docs.page_generators import ROOT, page_generator


def generator() -> ModuleType:
    return page_generator("cli_reference")


def test_the_committed_cli_reference_is_a_fresh_render():
    committed = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    assert committed == generator().render(), (
        "docs/reference/cli.md is out of date: run `python docs/cli_reference.py`"
    )


@pytest.mark.parametrize("columns", ["40", "250"])
def test_the_render_does_not_depend_on_the_terminal_width(monkeypatch, columns):
    first = generator().render()
    monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.setenv("TERMINAL_WIDTH", columns)
    assert generator().render() == first


def test_every_visible_command_has_a_section_and_hidden_ones_none():
    import typer

    from testaug.cli import app

    page = generator().render()
    root = typer.main.get_command(app)

    def walk(command, path):
        ctx = command.context_class(command, info_name=path[-1])
        for name in getattr(command, "list_commands", lambda _ctx: [])(ctx):
            child = command.get_command(ctx, name)
            if child is None:
                continue
            heading = " ".join([*path, name])
            if child.hidden:
                assert f" {heading}\n" not in page, heading
            else:
                assert f" {heading}\n" in page, f"no section for {heading}"
                walk(child, [*path, name])

    walk(root, ["testaug"])
