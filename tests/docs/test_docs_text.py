"""The README stays a short front page, and no page of the documentation cites
specification ids, equation numbers of papers or issue numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Written by hand; docs/reference/cli.md is generated from the commands' own help.
PAGES = sorted(
    [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *(ROOT / "docs").rglob("*.md")]
)
PAGES = [page for page in PAGES if page != ROOT / "docs" / "reference" / "cli.md"]

CITATIONS = re.compile(
    r"\bSPEC\b|\b(?:AT|BL|CL|TA|AD)-(?:E|code-)?\d+\b|\bEq\.\s*\d+|(?i:\bissue[ -]?\d+)"
)


def test_the_readme_has_at_most_300_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move detail into docs/"


def test_the_readme_keeps_the_set_up_block_that_ci_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- setup:start -->", 1)[1].split("<!-- setup:end -->", 1)[0]
    commands = [
        line for line in block.splitlines() if line.strip() and not line.startswith(("#", "```"))
    ]
    assert len(commands) == 2
    assert commands[0].startswith("python3 -m venv .venv && ") and commands[0].endswith(
        "&& testaug run"
    )
    assert commands[1] == ". .venv/bin/activate && python -m pytest"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_page_cites_spec_ids_equations_or_issues(page: Path):
    found = [
        f"{page.relative_to(ROOT)}:{number}: {match.group(0)}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for match in CITATIONS.finditer(line)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_html_comments_are_closed(page: Path):
    text = page.read_text(encoding="utf-8")
    assert text.count("<!--") == text.count("-->"), page
