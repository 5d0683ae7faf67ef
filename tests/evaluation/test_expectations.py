"""CheckList's expectations on probability arrays: MFT, INV, DIR monotonic and DIR target."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from testaug.evaluation.expectations import (
    NEUTRAL_BAND,
    Expectation,
    check_expectation,
    check_inv,
    check_mft,
    check_monotonic,
    check_target,
    predicted_labels,
)

LABELS = ("negative", "neutral", "positive")


def rows(*values: tuple[float, ...]) -> np.ndarray:
    return np.asarray(values, dtype=float)


def verdicts(outcomes) -> list[bool]:
    return [o.passed for o in outcomes]


def test_mft_passes_iff_the_argmax_is_an_expected_label():
    probs = rows((0.1, 0.2, 0.7), (0.1, 0.6, 0.3), (0.8, 0.1, 0.1))
    outcomes = check_mft(LABELS, probs, ["positive", ("positive", "neutral"), "positive"])
    assert verdicts(outcomes) == [True, True, False]
    assert outcomes[2].reason == "predicted negative, expected positive"


def test_inv_passes_when_the_label_changes_but_the_probability_moves_at_most_the_tolerance():
    original = rows((0.1, 0.38, 0.52), (0.1, 0.2, 0.7), (0.1, 0.35, 0.55))
    perturbed = rows((0.1, 0.48, 0.42), (0.1, 0.2, 0.7), (0.1, 0.6, 0.3))
    outcomes = check_inv(LABELS, original, perturbed)
    assert verdicts(outcomes) == [True, True, False]
    assert "within 0.1" in outcomes[0].reason
    assert (
        outcomes[2].reason
        == "prediction positive -> neutral and P(positive) moved -0.25 (more than 0.1)"
    )


def test_inv_passes_when_the_label_stays_however_far_the_probability_moves():
    assert verdicts(check_inv(LABELS, rows((0.0, 0.0, 1.0)), rows((0.2, 0.2, 0.6)))) == [True]


def test_inv_tolerance_is_a_parameter():
    original, perturbed = rows((0.1, 0.38, 0.52)), rows((0.1, 0.48, 0.42))
    assert verdicts(check_inv(LABELS, original, perturbed, tolerance=0.05)) == [False]
    assert verdicts(check_inv(LABELS, original, perturbed, tolerance=0.0)) == [False]


def test_dir_up_fails_only_when_the_label_probability_goes_down_by_more_than_the_tolerance():
    original = rows((0.2, 0.1, 0.7), (0.2, 0.1, 0.7), (0.1, 0.1, 0.8), (0.5, 0.2, 0.3))
    perturbed = rows((0.3, 0.1, 0.6), (0.35, 0.1, 0.55), (0.0, 0.0, 1.0), (0.1, 0.1, 0.8))
    outcomes = check_monotonic(LABELS, original, perturbed, label="positive", direction="up")
    assert verdicts(outcomes) == [True, False, True, True]
    assert outcomes[1].reason == "P(positive) 0.70 -> 0.55: went down 0.15, more than 0.1"


def test_dir_down_fails_only_when_the_label_probability_goes_up_by_more_than_the_tolerance():
    original = rows((0.2, 0.1, 0.7), (0.2, 0.1, 0.7), (0.2, 0.1, 0.7))
    perturbed = rows((0.1, 0.1, 0.8), (0.1, 0.05, 0.85), (0.6, 0.1, 0.3))
    outcomes = check_monotonic(LABELS, original, perturbed, label="positive", direction="down")
    assert verdicts(outcomes) == [True, False, True]


def test_a_change_of_exactly_the_tolerance_passes_despite_float_rounding():
    # 0.8 - 0.7 is 0.10000000000000009 in floats
    up = check_monotonic(
        LABELS, rows((0.1, 0.1, 0.8)), rows((0.2, 0.1, 0.7)), label="positive", direction="up"
    )
    inv = check_inv(LABELS, rows((0.1, 0.1, 0.8)), rows((0.1, 0.2, 0.7)))
    assert verdicts(up + inv) == [True, True]
    inv_changed = check_inv(LABELS, rows((0.15, 0.3, 0.55)), rows((0.15, 0.4, 0.45)))
    assert verdicts(inv_changed) == [True]


def test_dir_cases_that_cannot_fail_are_filtered_as_in_checklist():
    up = check_monotonic(
        LABELS, rows((0.85, 0.1, 0.05)), rows((1.0, 0.0, 0.0)), label="positive", direction="up"
    )
    down = check_monotonic(
        LABELS, rows((0.0, 0.05, 0.95)), rows((0.0, 0.0, 1.0)), label="positive", direction="down"
    )
    assert [(o.passed, o.filtered) for o in up + down] == [(True, True), (True, True)]


def test_dir_target_passes_iff_the_new_prediction_is_in_the_target_set():
    perturbed = rows((0.7, 0.2, 0.1), (0.1, 0.6, 0.3), (0.1, 0.2, 0.7))
    assert verdicts(check_target(LABELS, perturbed, ("negative", "neutral"))) == [True, True, False]
    assert verdicts(check_target(LABELS, perturbed, "negative")) == [True, False, False]


def test_check_expectation_dispatches_on_the_kind():
    original, perturbed = rows((0.1, 0.1, 0.8)), rows((0.5, 0.1, 0.4))
    assert verdicts(check_expectation(Expectation.inv(), LABELS, original, perturbed)) == [False]
    assert verdicts(check_expectation(Expectation.inv(0.5), LABELS, original, perturbed)) == [True]
    down = Expectation.monotonic("positive", "down")
    assert verdicts(check_expectation(down, LABELS, original, perturbed)) == [True]
    target = Expectation.to_target(["negative"])
    assert verdicts(check_expectation(target, LABELS, original, perturbed)) == [True]


def test_expectations_need_their_fields_and_describe_themselves():
    with pytest.raises(ValidationError, match="label and a direction"):
        Expectation(kind="dir_monotonic", label="positive")
    with pytest.raises(ValidationError, match="target"):
        Expectation(kind="dir_target")
    assert Expectation.inv().test_type == "INV"
    assert Expectation.monotonic("positive", "up").describe() == (
        "P(positive) should not go down by more than 0.1 (DIR)"
    )
    assert Expectation.to_target(["negative", "neutral"]).target == ("negative", "neutral")


def test_binary_sentiment_models_predict_neutral_inside_the_band():
    binary = ("negative", "positive")
    probs = rows((0.9, 0.1), (0.5, 0.5), (0.3, 0.7), (2 / 3, 1 / 3))
    assert predicted_labels(binary, probs, neutral_band=NEUTRAL_BAND) == [
        "negative",
        "neutral",
        "positive",
        "neutral",
    ]
    assert predicted_labels(binary, probs) == ["negative", "negative", "positive", "negative"]
    outcomes = check_mft(
        binary, probs, ["negative", "neutral", "neutral", "neutral"], neutral_band=NEUTRAL_BAND
    )
    assert verdicts(outcomes) == [True, True, False, True]


def test_binary_inv_from_neutral_reads_the_positive_probability():
    binary = ("negative", "positive")
    # neutral (P(pos) 0.6) -> positive (0.68): moved 0.08, within the tolerance
    outcomes = check_inv(binary, rows((0.4, 0.6)), rows((0.32, 0.68)), neutral_band=NEUTRAL_BAND)
    assert verdicts(outcomes) == [True]


def test_probability_arrays_of_the_wrong_width_are_refused():
    with pytest.raises(ValueError, match="shape"):
        check_mft(LABELS, rows((0.5, 0.5)), ["positive"])
