"""CSV cells that a spreadsheet shows as text rather than evaluates: a cell starting with
`=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, as OWASP recommends
against CSV injection; a plain number (`-0.75`) stays a number. Reading strips that `'`
again, so what testaug writes reads back as it was.

A cell already starting with quotes before such a character gets one more, so a text of
its own that starts `'=` survives the round trip too: `escape` adds a quote exactly where
`unescape` takes one away.
"""

from __future__ import annotations

import re

# OWASP's list: the characters that make a spreadsheet read a cell as a formula.
FORMULA_START = "=+-@\t\r"
_ESCAPED = re.compile(rf"'*[{re.escape(FORMULA_START)}]")
_UNESCAPED = re.compile(rf"'+[{re.escape(FORMULA_START)}]")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def escape_cell(cell: str) -> str:
    """`cell` as written to a CSV file: with a leading `'` where a spreadsheet would read a
    formula (a plain number excepted)."""
    if _ESCAPED.match(cell) and not _NUMBER.fullmatch(cell):
        return "'" + cell
    return cell


def unescape_cell(cell: str) -> str:
    """A cell as read from a CSV file: the `'` that `escape_cell` added taken away."""
    return cell[1:] if _UNESCAPED.match(cell) else cell
