"""The Python example of docs/how-to/run.md ("From Python") runs as written: the steps as
the API calls them, so a step or an argument that changes cannot leave the page behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "run.md"


def steps_example(text: str) -> str:
    """The first Python block after the page's "From Python" heading."""
    section = text.split("## From Python", 1)[1]
    return re.findall(r"^```python\n(.*?)^```", section, flags=re.MULTILINE | re.DOTALL)[0]


def test_the_python_example_of_the_run_page_runs_and_writes_a_report(tmp_path, monkeypatch, capsys):
    block = steps_example(PAGE.read_text(encoding="utf-8"))
    assert "testaug.expand(" in block and "testaug.report(" in block
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(PAGE), "exec"), {"__name__": "docs_example"})
    run = tmp_path / "runs" / "from-python"
    error_rate = float(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0.0 <= error_rate <= 100.0
    assert json.loads((run / "diversity.json").read_text(encoding="utf-8"))
    assert (run / "report.html").is_file() and (run / "report.md").is_file()
