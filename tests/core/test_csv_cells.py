"""CSV cells a spreadsheet would evaluate get a leading `'` (OWASP), plain numbers stay
numbers, and reading takes the `'` away again: every cell reads back as it was written."""

from __future__ import annotations

import pytest

from testaug.core.csv_cells import escape_cell, unescape_cell

FORMULAS = [
    "=1+1",
    "+1 great",
    "-bad service",
    "@user",
    "\tindented",
    "\rreturn",
    '=HYPERLINK("x")',
]
PLAIN = ["fine", "", "a=b", "1-2", "-0.75", "+3", "1e-5", "-.5", "'quoted", "' = spaced"]
QUOTED = ["'=1+1", "''-x", "'@y"]  # texts of their own that start with quotes before one


@pytest.mark.parametrize("cell", FORMULAS)
def test_a_cell_a_spreadsheet_would_evaluate_is_written_with_a_leading_quote(cell):
    assert escape_cell(cell) == "'" + cell


@pytest.mark.parametrize("cell", PLAIN)
def test_plain_text_and_numbers_are_written_as_they_are(cell):
    assert escape_cell(cell) == cell


@pytest.mark.parametrize("cell", FORMULAS + PLAIN + QUOTED)
def test_every_cell_reads_back_as_it_was(cell):
    assert unescape_cell(escape_cell(cell)) == cell
