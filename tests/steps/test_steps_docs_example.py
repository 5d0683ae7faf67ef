"""The steps example of docs/how-to/run.md ("From Python") runs as written: each step called
with its config record, so a step whose record changes cannot leave the page behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "run.md"


def steps_example(text: str) -> str:
    """The first Python block after the page's "From Python" heading."""
    section = text.split("## From Python", 1)[1]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)[0]


def test_the_steps_example_of_the_run_page_runs_and_writes_a_report(tmp_path, monkeypatch, capsys):
    block = steps_example(PAGE.read_text(encoding="utf-8"))
    assert "ExpandConfig(" in block and "write_run_report(" in block
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(PAGE), "exec"), {"__name__": "docs_example"})
    run = tmp_path / "runs" / "from-python"
    assert "'vader':" in capsys.readouterr().out
    assert json.loads((run / "diversity.json").read_text(encoding="utf-8"))
    assert (run / "report.html").is_file() and (run / "report.md").is_file()
