"""Triage per source: each generator's (and the hard cases') candidates ranked among themselves."""

from __future__ import annotations

import numpy as np

from rankers.evaluation.report import by_source
from testaug.core.records import LabelledCandidate, RankedCandidate
from tests.tiny_models import make_candidate


def labelled(text: str, model: str, valid: bool, backend: str = "local") -> LabelledCandidate:
    candidate = make_candidate(text).model_copy(update={"model": model, "backend": backend})
    return LabelledCandidate(candidate=candidate, valid=valid, reason=None if valid else "label")


def in_order(items: list[LabelledCandidate], scores: np.ndarray) -> list[RankedCandidate]:
    """The candidates as a ranking, highest score first."""
    order = np.argsort(-scores, kind="stable")
    return [
        RankedCandidate(candidate=items[i].candidate, scores={}, borda_points=0.0, rank=r)
        for r, i in enumerate(order, start=1)
    ]


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
    rows = {row.source: row for row in by_source(items, in_order(items, perfect), target=1.0)}
    assert set(rows) == {"gen-a", "gen-b", "rule"}
    assert rows["gen-a"].gap_closed == 1.0 and rows["rule"].gap_closed == 1.0
    assert rows["gen-b"].gap_closed < 1.0
    assert rows["gen-a"].n == 2 and rows["gen-a"].n_invalid == 1


def test_the_triage_summary_reads_back_as_it_was_printed():
    import json

    from rankers.evaluation.report import evaluate_scores
    from testaug.core.triage import TriageSummary

    items = [labelled(t, "gen-a", valid) for t, valid in (("a", True), ("b", False), ("c", True))]
    scores = {"m": np.array([0.1, 0.9, 0.2]), "n": np.array([0.3, 0.2, 0.1])}
    summary = evaluate_scores(items, scores, 0.9)
    printed = json.dumps(summary.model_dump())
    assert TriageSummary.model_validate_json(printed) == summary
    assert set(summary.parts) == {"m", "n"} and summary.triage.n == 3
