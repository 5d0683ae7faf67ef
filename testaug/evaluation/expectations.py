"""CheckList's expectations, checked on a model's probability arrays.

Arrays are (n cases, n labels), columns in the model's label order. Each check
returns one `Outcome` per case: passed or failed, with a short reason, or
filtered (CheckList's "not applicable": a DIR case that cannot fail), which
failure rates leave out.

- MFT: pass iff the predicted label is one of the expected labels.
- INV: fail iff the predicted label changes AND the probability of the original
  prediction moves by more than the tolerance (CheckList footnote 4, `Expect.inv`).
- DIR monotonic: P(label) must not go down (direction "up") or up ("down") by
  more than the tolerance; filtered when it cannot fail: P(label) was already
  <= tolerance ("up") or >= 1 - tolerance ("down") (`Expect.monotonic`).
- DIR target: pass iff the new prediction is one of the target labels.

Binary sentiment models (labels exactly negative and positive) can be read with
CheckList's neutral band (footnote 3): P(positive) in [1/3, 2/3] predicts
neutral, as CheckList's and BeLUGA's code do (the paper writes the open interval).
For such a model, the probability that moves for a neutral prediction is P(positive).
Comparisons allow 1e-9 of float rounding, so a change of exactly the tolerance passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import model_validator

from testaug.core.records import Label, Record, label_options, normalize_label

NEUTRAL_BAND = (1 / 3, 2 / 3)
EPSILON = 1e-9
Direction = Literal["up", "down"]
Band = tuple[float, float] | None


class Expectation(Record):
    """What a perturbation test expects of the perturbed prediction, relative to the original."""

    kind: Literal["inv", "dir_monotonic", "dir_target"]
    tolerance: float = 0.1
    label: str | None = None  # dir_monotonic: the label whose probability is watched
    direction: Direction | None = None  # dir_monotonic
    target: Label | None = None  # dir_target: the acceptable new labels

    @model_validator(mode="before")
    @classmethod
    def _normalize_target(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("target") is not None:
            data = {**data, "target": normalize_label(data["target"])}
        return data

    @model_validator(mode="after")
    def _check_fields(self) -> Expectation:
        if self.kind == "dir_monotonic" and (self.label is None or self.direction is None):
            raise ValueError("a dir_monotonic expectation needs a label and a direction")
        if self.kind == "dir_target" and self.target is None:
            raise ValueError("a dir_target expectation needs a target label (or labels)")
        if not 0 <= self.tolerance <= 1:
            raise ValueError(f"tolerance must be within [0, 1], got {self.tolerance}")
        return self

    @classmethod
    def inv(cls, tolerance: float = 0.1) -> Expectation:
        """Same prediction, unless the probability moves by at most `tolerance`."""
        return cls(kind="inv", tolerance=tolerance)

    @classmethod
    def monotonic(cls, label: str, direction: Direction, tolerance: float = 0.1) -> Expectation:
        """P(label) must not move against `direction` by more than `tolerance`."""
        return cls(kind="dir_monotonic", label=label, direction=direction, tolerance=tolerance)

    @classmethod
    def to_target(cls, target: Label | Sequence[str]) -> Expectation:
        """The new prediction must be the target label (or one of them)."""
        return cls(kind="dir_target", target=normalize_label(target))

    @property
    def test_type(self) -> Literal["INV", "DIR"]:
        """The CheckList test type this expectation belongs to."""
        return "INV" if self.kind == "inv" else "DIR"

    def describe(self) -> str:
        """The expected behaviour in words, as a report shows it."""
        if self.kind == "inv":
            return f"same prediction (INV, tolerance {self.tolerance:g})"
        if self.kind == "dir_target":
            return f"prediction {' or '.join(label_options(self.target or ()))} (DIR)"
        against = "down" if self.direction == "up" else "up"
        return f"P({self.label}) should not go {against} by more than {self.tolerance:g} (DIR)"


class Outcome(Record):
    """One case's verdict: passed, or failed, or filtered out (cannot fail), with a reason."""

    passed: bool
    filtered: bool = False
    reason: str


def is_binary_sentiment(labels: Sequence[str]) -> bool:
    """Whether the labels are exactly negative and positive (in any order)."""
    return sorted(labels) == ["negative", "positive"]


def predicted_labels(
    labels: Sequence[str], probabilities: np.ndarray, *, neutral_band: Band = None
) -> list[str]:
    """Each row's predicted label: the argmax, or neutral inside the band for binary sentiment."""
    probabilities = _as_rows(probabilities, labels)
    predicted = [labels[i] for i in probabilities.argmax(axis=1)]
    if neutral_band is None or not is_binary_sentiment(labels):
        return predicted
    low, high = neutral_band
    positive = probabilities[:, list(labels).index("positive")]
    return [
        "neutral" if low <= p <= high else label
        for p, label in zip(positive, predicted, strict=True)
    ]


def label_column(labels: Sequence[str], label: str) -> int:
    """The column of a label; for a binary sentiment model, neutral reads P(positive)."""
    if label in labels:
        return list(labels).index(label)
    if label == "neutral" and is_binary_sentiment(labels):
        return list(labels).index("positive")
    raise ValueError(f"label {label!r} is not one of the model's labels ({', '.join(labels)})")


def check_mft(
    labels: Sequence[str],
    probabilities: np.ndarray,
    expected: Sequence[Label],
    *,
    neutral_band: Band = None,
) -> list[Outcome]:
    """MFT: pass iff each predicted label is in its case's expected label(s)."""
    predicted = predicted_labels(labels, probabilities, neutral_band=neutral_band)
    out = []
    for label, want in zip(predicted, expected, strict=True):
        options = label_options(want)
        passed = label in options
        reason = f"predicted {label}" + ("" if passed else f", expected {' or '.join(options)}")
        out.append(Outcome(passed=passed, reason=reason))
    return out


def check_inv(
    labels: Sequence[str],
    original: np.ndarray,
    perturbed: np.ndarray,
    *,
    tolerance: float = 0.1,
    neutral_band: Band = None,
) -> list[Outcome]:
    """INV: fail iff the prediction changes and P(original prediction) moves by > tolerance."""
    original, perturbed = _as_rows(original, labels), _as_rows(perturbed, labels)
    before = predicted_labels(labels, original, neutral_band=neutral_band)
    after = predicted_labels(labels, perturbed, neutral_band=neutral_band)
    out = []
    for row, (old, new) in enumerate(zip(before, after, strict=True)):
        column = label_column(labels, old)
        moved = float(perturbed[row, column] - original[row, column])
        shown = f"P({labels[column]}) moved {moved:+.2f}"
        if old == new:
            out.append(Outcome(passed=True, reason=f"prediction stayed {old}; {shown}"))
        elif abs(moved) <= tolerance + EPSILON:
            out.append(
                Outcome(
                    passed=True,
                    reason=f"prediction {old} -> {new}, but {shown} (within {tolerance:g})",
                )
            )
        else:
            out.append(
                Outcome(
                    passed=False,
                    reason=f"prediction {old} -> {new} and {shown} (more than {tolerance:g})",
                )
            )
    return out


def check_monotonic(
    labels: Sequence[str],
    original: np.ndarray,
    perturbed: np.ndarray,
    *,
    label: str,
    direction: Direction,
    tolerance: float = 0.1,
) -> list[Outcome]:
    """DIR monotonic: P(label) must not move against `direction` by more than the tolerance."""
    original, perturbed = _as_rows(original, labels), _as_rows(perturbed, labels)
    column = label_column(labels, label)
    out = []
    for before, after in zip(original[:, column], perturbed[:, column], strict=True):
        change = float(after - before)
        shown = f"P({label}) {float(before):.2f} -> {float(after):.2f}"
        if direction == "up" and before <= tolerance + EPSILON:
            out.append(
                Outcome(
                    passed=True,
                    filtered=True,
                    reason=f"{shown}: cannot go down by more than {tolerance:g}",
                )
            )
        elif direction == "down" and before >= 1 - tolerance - EPSILON:
            out.append(
                Outcome(
                    passed=True,
                    filtered=True,
                    reason=f"{shown}: cannot go up by more than {tolerance:g}",
                )
            )
        else:
            against = -change if direction == "up" else change
            passed = against <= tolerance + EPSILON
            verdict = "within" if passed else "more than"
            moved = "down" if direction == "up" else "up"
            detail = f"went {moved} {max(against, 0.0):.2f}, {verdict} {tolerance:g}"
            out.append(Outcome(passed=passed, reason=f"{shown}: {detail}"))
    return out


def check_target(
    labels: Sequence[str],
    perturbed: np.ndarray,
    target: Label,
    *,
    neutral_band: Band = None,
) -> list[Outcome]:
    """DIR target: pass iff each new prediction is one of the target labels."""
    return check_mft(labels, perturbed, [target] * len(perturbed), neutral_band=neutral_band)


def check_expectation(
    expectation: Expectation,
    labels: Sequence[str],
    original: np.ndarray,
    perturbed: np.ndarray,
    *,
    neutral_band: Band = None,
) -> list[Outcome]:
    """Check a perturbation test's expectation on aligned original and perturbed rows."""
    if expectation.kind == "inv":
        return check_inv(
            labels, original, perturbed, tolerance=expectation.tolerance, neutral_band=neutral_band
        )
    if expectation.kind == "dir_monotonic":
        assert expectation.label is not None and expectation.direction is not None
        return check_monotonic(
            labels,
            original,
            perturbed,
            label=expectation.label,
            direction=expectation.direction,
            tolerance=expectation.tolerance,
        )
    assert expectation.target is not None
    return check_target(labels, perturbed, expectation.target, neutral_band=neutral_band)


def _as_rows(probabilities: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """The probabilities as a float (n, len(labels)) array; a single row becomes (1, k)."""
    array = np.asarray(probabilities, dtype=float)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != len(labels):
        raise ValueError(
            f"expected probabilities of shape (n, {len(labels)}), got {tuple(array.shape)}"
        )
    return array
