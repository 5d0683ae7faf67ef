"""What the command prints from data, paths and messages is printed as it is: a `[...]` is
never read as console markup (issue 44, finding 1), and a log line written to a file or a
CI log is one line, however long (finding 15)."""

from __future__ import annotations

import io
import logging

import pytest
from rich.console import Console

from testaug.cli import LOGGED_PACKAGES, _configure_logging
from testaug.cli.console import cli_console, styled
from testaug.core.errors import TestAugError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from tests.cli_runner import run_testaug

BRACKETED = "runs[b]/cases[bold].jsonl"


def case(text: str, **fields) -> TestCase:
    base = {
        "task": "sentiment",
        "capability": "Vocabulary",
        "description_id": "d",
        "description": "A positive sentence.",
        "label": "positive",
        "source": "template",
    }
    return TestCase(**{**base, **fields, "text": text})


def test_an_error_names_a_bracketed_path_as_it_is(tmp_path):
    done = run_testaug(tmp_path, "suite", "stats", BRACKETED)
    assert done.returncode == 1
    assert f"error: {BRACKETED}" in done.stderr, done.stderr


def test_an_install_hint_keeps_its_extra(tmp_path, monkeypatch):
    import testaug.diversity.measures as measures

    def needs_spacy(*args, **kwargs):
        raise TestAugError(
            "this needs spaCy: pip install 'testaug[nlp]' or pip install -e \".[rank]\""
        )

    monkeypatch.setattr(measures, "diversity_report", needs_spacy)
    cases = tmp_path / "cases.jsonl"
    write_jsonl(cases, [case("Great.")])
    done = run_testaug(tmp_path, "suite", "diversity", str(cases))
    assert done.returncode == 1
    assert "pip install 'testaug[nlp]' or pip install -e \".[rank]\"" in done.stderr, done.stderr


def test_the_line_saying_what_was_written_keeps_a_bracketed_output_path(tmp_path):
    table = tmp_path / "table.csv"
    table.write_text("capability,description,text,label\nVocabulary,d,Great.,positive\n")
    done = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", BRACKETED, "--task", "sentiment"
    )
    assert done.returncode == 0, done.stderr
    assert f"imported 1 cases to {BRACKETED}" in done.stdout
    assert (tmp_path / BRACKETED).exists()


def test_a_table_shows_bracketed_names_and_emoji_codes_as_they_are(tmp_path):
    cases = tmp_path / "cases.jsonl"
    named = "Negation [bold]"
    described = "A [red]negated[/] :smile: sentence."
    write_jsonl(cases, [case("Great.", capability=named, description=described)])
    done = run_testaug(tmp_path, "suite", "stats", str(cases), env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert named in done.stdout and described in done.stdout, done.stdout


def test_styled_reads_markup_in_the_template_and_fills_fields_as_plain_text():
    text = styled("[green]wrote[/] {:,} cases to {}", 12345, BRACKETED)
    assert text.plain == f"wrote 12,345 cases to {BRACKETED}"
    assert [(span.start, span.end, str(span.style)) for span in text.spans] == [(0, 5, "green")]


@pytest.mark.parametrize(
    "value", ["a\\", "\\[b]", "[/]", "[bold]x", ":smile:", "{}", "a [b] \\\\[c] d\\"]
)
def test_styled_fills_a_field_with_exactly_its_value(value):
    # rich's own escape() changes a value ending in a backslash, or holding "\[".
    assert styled("[bold]x {} y[/] {}", value, value).plain == f"x {value} y {value}"


def test_a_field_takes_the_style_around_it():
    text = styled("[yellow]{} rows rejected[/]", "[b]")
    assert text.plain == "[b] rows rejected"
    assert {str(span.style) for span in text.spans} == {"yellow"}
    assert all(span.end <= len(text.plain) for span in text.spans)


def test_a_status_prints_its_text_and_updates_as_they_are():
    console = cli_console(file=io.StringIO())
    with console.status("loading [b]x[/b]") as status:
        assert status.renderable.text.plain == "loading [b]x[/b]"
        status.update("[bold]round 2[/]: :smile:")
        assert status.renderable.text.plain == "[bold]round 2[/]: :smile:"


@pytest.fixture
def logged_lines():
    """Log lines of testaug's loggers as the command configures them, on a captured
    (non-terminal) stderr; the loggers' handlers are put back afterwards."""
    loggers = [logging.getLogger(name) for name in LOGGED_PACKAGES]
    saved = [(logger.handlers[:], logger.level, logger.propagate) for logger in loggers]
    _configure_logging(logging.INFO)
    yield logging.getLogger("testaug.test_cli_plain_text")
    for logger, (handlers, level, propagate) in zip(loggers, saved, strict=True):
        logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


def test_a_log_line_on_a_non_terminal_is_one_line_however_long(logged_lines, capsys):
    path = "/".join(["a-rather-long-folder-name"] * 12) + "/" + BRACKETED
    logged_lines.info("wrote %s", path)
    logged_lines.warning("a [bold]bracketed[/] :smile: warning")
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"INFO     wrote {path}", "WARNING  a [bold]bracketed[/] :smile: warning"]


def test_a_log_line_on_a_terminal_still_wraps_to_its_width():
    from testaug.cli.console import LogLines

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=60, color_system=None)
    handler = LogLines(console=console, show_path=False, show_time=False)
    record = logging.LogRecord("testaug.x", logging.INFO, "", 0, "word " * 40, None, None)
    handler.emit(record)
    lines = out.getvalue().splitlines()
    assert len(lines) > 1 and all(len(line) <= 60 for line in lines)
