"""Calibration to P(valid): precision curves cross-fitted over the ensemble's folds, and
calibration groups by generator setting."""

from __future__ import annotations

import numpy as np

from rankers.calibration import (
    RULE,
    calibration_group,
    cross_fitted_p_valid,
    fit_map,
    generator_of,
)
from testaug.core.records import Candidate


def test_each_folds_p_valid_comes_from_a_map_fitted_on_the_other_folds():
    scores = np.tile(np.linspace(0.0, 1.0, 100), 3)
    folds = np.repeat([0, 1, 2], 100)
    low = scores < 0.5  # the rest: valid where the score is low; fold 0 the other way round
    valid = np.where(folds == 0, ~low, low)
    p = cross_fitted_p_valid(scores, valid, folds, "isotonic")
    assert p[(folds == 0) & low].mean() > 0.9  # what folds 1 and 2 say, not fold 0's labels
    assert p[(folds == 1) & ~low].mean() < 0.6


def test_a_fold_whose_others_lack_a_verdict_reads_the_map_of_all():
    scores = np.linspace(0.0, 1.0, 9)
    valid = np.array([True] * 3 + [True] * 3 + [True, False, False])
    folds = np.repeat([0, 1, 2], 3)  # folds 0 and 1 hold no invalid candidate
    p = cross_fitted_p_valid(scores, valid, folds, "isotonic")
    everyone = fit_map(scores, valid, "isotonic").p_valid(scores)
    assert p[folds == 2].tolist() == everyone[folds == 2].tolist()


def generated(model: str, temperature: float | None) -> Candidate:
    return Candidate(
        task="sentiment",
        capability="Vocabulary",
        description_id="d",
        description="A positive sentence.",
        text="The crew was great.",
        label="positive",
        prompt_id="p",
        seed_case_ids=(),
        backend="local",
        model=model,
        temperature=temperature,
    )


def test_a_generator_at_another_temperature_is_another_calibration_group():
    cold, hot = generated("smol", 0.2), generated("smol", 1.0)
    assert calibration_group(cold) == "smol at temperature 0.2"
    assert calibration_group(hot) == "smol at temperature 1"
    assert generator_of(cold) == generator_of(hot) == "smol"


def test_candidates_of_older_files_without_a_temperature_group_by_generator():
    assert calibration_group(generated("smol", None)) == "smol"
    assert RULE == "rule"
