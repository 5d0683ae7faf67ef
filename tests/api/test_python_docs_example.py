"""The notebook example of docs/how-to/python.md runs as written, so it cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "python.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def test_the_python_page_example_runs_and_writes_a_report(tmp_path, monkeypatch, capsys):
    blocks = python_blocks(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "docs_example"}
    for block in blocks:
        exec(compile(block, str(PAGE), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "python:keyword_model:" in printed and "vader:" in printed
    assert (tmp_path / "run" / "report.html").is_file()
    assert (tmp_path / "run" / "report.md").is_file()
