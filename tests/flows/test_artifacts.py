"""The table a flow run publishes: one row per step, its summary's numbers in the order the
step wrote them (the ranker's acceptance in the annotate summary's place), never its kind."""

from __future__ import annotations

import pytest

from tests.steps.test_step_contract import SUMMARIES, output_of

pytest.importorskip("prefect")


def test_a_row_lists_the_summarys_numbers_and_leaves_out_its_kind_and_what_is_not_a_number(
    tmp_path,
):
    from flows.artifacts import summary_rows

    pushed = output_of(SUMMARIES[6], tmp_path)  # mode label-studio, with a no_rule line
    [row] = summary_rows([None, pushed])
    assert row == {
        "step": "step",
        "file": str(pushed.path),
        "records": "1",
        "summary": "mode: label-studio, project: testaug run, project_id: 3, sent: 3, "
        "imported: 3, already_present: 0, pending: 4, accept_precision: 0.9, "
        "confidence: 0.95, accepted_by_ranker: 3, no_rule: the ranker accepts nothing",
    }


def test_a_mode_leaves_its_missing_fields_out_of_the_row(tmp_path):
    from flows.artifacts import summary_rows

    [row] = summary_rows([output_of(SUMMARIES[5], tmp_path)])  # mode auto
    assert row["summary"] == (
        "mode: auto, pending: 7, accept_precision: 0.9, confidence: 0.95, accepted_by_ranker: 3"
    )
