"""The report reads triage.json, diversity.json and evaluation.json as records: files of
the current format and of older ones render, and a file that is not one is an input error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testaug.core.errors import InputError
from testaug.core.triage import TriageSummary
from testaug.reports.run_report import write_report

DATA = Path(__file__).parent / "data"


def triage_rows(markdown: str) -> dict[str, str]:
    """The triage table's rows by ranking name."""
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    return {row.split(" | ")[0][2:]: row for row in rows}


def test_a_triage_json_of_the_current_format_renders_its_gap_closed(tmp_path):
    shutil.copy(DATA / "triage.json", tmp_path / "triage.json")
    triage = TriageSummary.model_validate_json((DATA / "triage.json").read_text())
    assert triage.calibration is not None and [r.source for r in triage.by_source] == ["m"]

    rows = triage_rows(write_report(tmp_path).markdown.read_text())
    assert rows["triage"] == "| triage | 24.1% | 65.0% | 100% |"
    assert rows["oracle order"] == "| oracle order | 24.1% | 65.0% | 100% |"
    assert (tmp_path / "report_files" / "acc_curve.png").exists()


def test_a_triage_json_of_the_borda_format_renders_its_borda_count_as_the_triage(tmp_path):
    # Before the triage order was evaluated: `ensemble` (the Borda count) and `members`.
    shutil.copy(DATA / "triage_borda.json", tmp_path / "triage.json")
    triage = TriageSummary.model_validate_json((tmp_path / "triage.json").read_text())
    assert triage.triage.effort_at_target == pytest.approx(0.2413793)
    assert set(triage.parts) == {"tfidf", "tfidf2"} and triage.calibration is not None

    rows = triage_rows(write_report(tmp_path).markdown.read_text())
    assert rows["triage"] == "| triage | 24.1% | 65.0% | 100% |"
    assert rows["tfidf2"] == "| tfidf2 | 24.1% | 65.0% | 100% |"


def test_a_triage_json_written_before_gap_closed_renders_with_those_cells_blank(tmp_path):
    # The first format: no calibration, no per-source rows, no oracle reduction, no gap closed.
    shutil.copy(DATA / "triage_before_gap_closed.json", tmp_path / "triage.json")
    triage = TriageSummary.model_validate_json((tmp_path / "triage.json").read_text())
    assert triage.calibration is None and triage.by_source == ()
    assert triage.triage.gap_closed is None  # its Borda count reads as its triage

    rows = triage_rows(write_report(tmp_path).markdown.read_text())
    assert rows["triage"] == "| triage | 24.1% | 65.0% |  |"
    assert rows["tfidf"] == "| tfidf | 24.1% | 65.0% |  |"
    assert rows["oracle order"] == "| oracle order | 24.1% |  | 100% |"


def test_a_triage_json_that_is_not_a_triage_summary_names_the_file_and_the_field(tmp_path):
    (tmp_path / "triage.json").write_text('{"n": 3, "n_invalid": 1}')
    with pytest.raises(InputError) as raised:
        write_report(tmp_path)
    problems = {(p.file, p.field, p.message) for p in raised.value.problems}
    assert (tmp_path / "triage.json", "triage", "Field required") in problems
    (tmp_path / "triage.json").write_text('{"n": 3,\n')
    with pytest.raises(InputError, match=r"triage\.json:2: not valid JSON"):
        write_report(tmp_path)
