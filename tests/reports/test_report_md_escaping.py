"""report.md escapes what it copies from data, as report.html does: no tag from a case text,
a capability or a description reaches a Markdown renderer that allows HTML, and no pipe or
line break in a cell breaks a table."""

from __future__ import annotations

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from testaug.reports.blocks import Heading, Report, Table, Text, render_markdown
from testaug.reports.run_report import write_report
from tests.cli_runner import run_testaug

SCRIPT = "<script>alert(1)</script>"
SVG = "<svg onload=alert(2)>"


def test_markdown_blocks_escape_tags_pipes_and_line_breaks(tmp_path):
    report = Report(
        title=f"Run {SCRIPT}",
        blocks=[
            Heading(f"Capability {SVG}"),
            Text(f"a note about {SCRIPT} & more", notice=True),
            Text(f"plain {SVG}"),
            Table(
                [f"col {SVG}", "b"],
                [[f"x | y\n{SCRIPT}", "1"]],
                caption=f"cap {SVG}",
                marks=[f"mark {SCRIPT}"],
            ),
        ],
    )
    path = tmp_path / "report.md"
    render_markdown(report, path, tmp_path / "files")
    text = path.read_text()
    assert "<script" not in text and "<svg" not in text
    assert "&lt;script>alert(1)&lt;/script>" in text and "&lt;svg onload=alert(2)>" in text
    assert "&amp; more" in text
    row = next(line for line in text.splitlines() if line.startswith("| x"))
    assert row.startswith("| x \\| y &lt;script>") and row.count(" | ") == 1


def case(text: str, label: str, capability: str, description: str) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=capability[:3] + description[:3],
        description=description,
        text=text,
        label=label,
        source="template",
    )


def test_a_report_of_hostile_case_texts_and_names_has_no_raw_tag(tmp_path):
    cases = [
        case(f"The crew was not great {SCRIPT}.", "negative", f"Negation {SVG}", f"d {SCRIPT}"),
        case(f"I love {SVG} this.", "positive", "Vocabulary|x", f"d {SVG}\nline"),
        case("The food was great.", "positive", "Vocabulary|x", "plain"),
    ]
    write_jsonl(tmp_path / "cases.jsonl", cases)
    done = run_testaug(
        tmp_path, "evaluate", "cases.jsonl", "--model", "py:tests.models_fixture:predict",
        "--perturb", "0", "-o", "evaluation.json", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = write_report(tmp_path)
    markdown = written.markdown.read_text()
    assert "Negation &lt;svg onload=alert(2)>" in markdown  # the data is there, escaped
    assert "<script" not in markdown and "<svg" not in markdown
    page = written.html.read_text()
    assert SCRIPT not in page and SVG not in page
    for line in markdown.splitlines():
        if line.startswith("| ") and "Vocabulary" in line:
            assert "Vocabulary\\|x" in line
