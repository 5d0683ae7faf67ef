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
