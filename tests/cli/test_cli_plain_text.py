"""What the command prints from data, paths and messages is printed as it is: a `[...]` is
never read as console markup (issue 44, finding 1)."""

from __future__ import annotations

import io

import pytest

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
