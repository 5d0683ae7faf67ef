"""Triage per source: each generator's (and the hard cases') candidates ranked among themselves."""

from __future__ import annotations

import numpy as np

from rankers.evaluation import evaluate_by_source
from testaug.core.records import LabelledCandidate
from tests.tiny_models import make_candidate


def labelled(text: str, model: str, valid: bool, backend: str = "local") -> LabelledCandidate:
    candidate = make_candidate(text).model_copy(update={"model": model, "backend": backend})
    return LabelledCandidate(candidate=candidate, valid=valid, reason=None if valid else "label")


def test_each_source_gets_its_own_report_and_rule_cases_count_as_one_source():
    items = [
        labelled("a", "gen-a", True),
        labelled("b", "gen-a", False),
        labelled("c", "gen-b", True),
        labelled("d", "gen-b", False),
        labelled("e", "hard-cases:sibling", False, backend="rule"),
        labelled("f", "hard-cases:other_template", True, backend="rule"),
    ]
    perfect = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0])  # right on gen-a and rule, wrong on gen-b
    rows = {row.source: row for row in evaluate_by_source(items, {"m": perfect}, target=1.0)}
    assert set(rows) == {"gen-a", "gen-b", "rule"}
    assert rows["gen-a"].gap_closed == 1.0 and rows["rule"].gap_closed == 1.0
    assert rows["gen-b"].gap_closed < 1.0
    assert rows["gen-a"].n == 2 and rows["gen-a"].n_invalid == 1


def test_the_triage_summary_keeps_the_json_the_cli_always_printed_and_reads_back():
    import json

    from rankers.evaluation import evaluate_scores, triage_summary
    from testaug.core.triage import CalibrationCheck, TriageSummary

    items = [labelled(t, "gen-a", valid) for t, valid in (("a", True), ("b", False), ("c", True))]
    scores = {"m": np.array([0.1, 0.9, 0.2]), "n": np.array([0.3, 0.2, 0.1])}
    evaluation = evaluate_scores(items, scores, 0.9)
    sources = evaluate_by_source(items, scores, 0.9)
    calibration = CalibrationCheck(ece=0.1, target=0.9, accepted=0, precision=None)
    summary = triage_summary(
        evaluation, calibration=calibration, by_source=sources, plot="p.png", version="v1"
    )
    first = evaluation.ensemble
    printed_before = {  # the dict `testaug rankers evaluate --json` built before the record
        "calibration": {"ece": 0.1, "target": 0.9, "accepted": 0, "precision": None},
        "by_source": [row.model_dump() for row in sources],
        "effort_at_target": first.effort_at_target,
        "random_effort_at_target": first.random_effort_at_target,
        "oracle_effort_at_target": first.oracle_effort_at_target,
        "reduction_vs_random": first.reduction_vs_random,
        "oracle_reduction_vs_random": first.oracle_reduction_vs_random,
        "gap_closed": first.gap_closed,
        "plot": "p.png",
        "version": "v1",
        **evaluation.model_dump(),
    }
    printed = json.dumps(summary.model_dump())
    assert printed == json.dumps(printed_before)
    assert TriageSummary.model_validate_json(printed) == summary
