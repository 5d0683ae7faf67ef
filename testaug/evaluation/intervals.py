"""95% intervals of error rates: Wilson's score interval for a rate whose every case is
known to be valid, and prediction-powered inference (PPI; Angelopoulos et al., 2023) for a
rate that rests partly on cases whose validity only a ranker vouches for.

Rates here are fractions (0..1); the records that show them in percent scale them.

The PPI estimate (`ppi_error_rate`): the error rate over the *valid* cases is the ratio
E[F·V] / E[V] of two means, F = the model failed on the case, V = the case is valid.
Verified cases have V = 1. For an unverified case of a generator, V is predicted by the
ranker's P(valid) p (1 where it has none). Each mean is estimated the PPI way: the mean
of the predictions (F·p and p) over all cases, minus a rectifier, the mean of
prediction - truth (F·p - F·V and p - V) on the cases of the same generator that people
labelled, scaled by the generator's share of the cases. The variance of each mean is the
variance of the predictions over all cases / N plus, per generator, (N_g / N)^2 times
the variance of the rectifier over its n_g labels; the two means' covariances are
kept, and the delta method turns them into the variance of the ratio, giving a normal
95% interval clipped to [0, 1]. With perfect predictions every rectifier is 0 and the
estimate is the classical ratio on all cases; with biased ones the rectifier removes the
bias (the estimate is unbiased for each mean whatever the predictions are, as long as
the labelled cases are drawn like the generator's cases). So the labels given here must
be a random sample of the generator's cases: its calibration sample, never cases picked
because the ranker was unsure of them or ranked them high (the caller chooses them; see
`testaug.evaluation.validity`). A generator needs at least `MIN_LABELS` of them.

People-rejected cases never enter the suite, so the model never ran on them: a rejected
label's F·V is 0 (it is invalid), but its prediction F·p needs an F. For those, F is
taken as the model's failure rate on that generator's unverified cases (the cases of the
generator in the rate being estimated), that is, the model is assumed to fail on invalid
cases as often as on the generator's cases at large. Where the model ran on every
labelled case, no such assumption is made.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal

import numpy as np
from pydantic import Field

from testaug.core.records import Record

DEFAULT_CONFIDENCE = 0.95
MIN_LABELS = 2  # random labels a generator's unverified cases need for the PPI interval

Fraction = float
Method = Literal["wilson", "ppi", "wilson-verified"]


class Interval(Record):
    """A confidence interval of an error rate (fractions, 0..1) and the n it rests on.

    `method`: `wilson` (all n cases known valid), `ppi` (prediction-powered, `estimate` is
    the PPI point estimate, `labelled` the people's labels it used) or `wilson-verified`
    (unverified cases without people's labels: Wilson on the verified cases only, `n`
    of them). n = 0: no data, the whole [0, 1]."""

    low: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    high: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    n: int = Field(ge=0)
    confidence: float = DEFAULT_CONFIDENCE
    method: Method = "wilson"
    estimate: float | None = Field(default=None, ge=0.0, le=1.0, allow_inf_nan=False)
    labelled: int | None = None

    def text(self) -> str:
        """The bounds in percent, `8.1–18.6`."""
        return f"{100 * self.low:.1f}–{100 * self.high:.1f}"


def _z(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson(failures: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson's score interval of a binomial proportion, `failures` of `n`.

    >>> wilson(8, 64).text()
    '6.5–22.8'
    >>> wilson(0, 0).low, wilson(0, 0).high
    (0.0, 1.0)
    """
    if not 0 <= failures <= n:
        raise ValueError(f"need 0 <= failures <= n, got {failures} of {n}")
    z = _z(confidence)
    if n == 0:
        return Interval(low=0.0, high=1.0, n=0, confidence=confidence)
    p = failures / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low = 0.0 if failures == 0 else max(0.0, centre - half)
    high = 1.0 if failures == n else min(1.0, centre + half)
    return Interval(low=low, high=high, n=n, confidence=confidence)


@dataclass(frozen=True)
class Generated:
    """The unverified cases of one generator and people's labels of a random sample of
    its cases.

    `failed`, `p_valid`: per unverified case, whether the model failed and the ranker's
    P(valid) (1 without a score). `labelled_failed`, `labelled_p_valid` and
    `labelled_valid`: per case people labelled; `labelled_failed` is None where the model
    never ran on the case (people rejected it), and then the failure rate of `failed`
    stands in for it."""

    failed: Sequence[bool]
    p_valid: Sequence[float]
    labelled_failed: Sequence[bool | None] = field(default_factory=tuple)
    labelled_p_valid: Sequence[float] = field(default_factory=tuple)
    labelled_valid: Sequence[bool] = field(default_factory=tuple)


def ppi_error_rate(
    verified_failed: Sequence[bool],
    generated: Sequence[Generated],
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """The PPI estimate and normal-approximation interval of the error rate over valid
    cases, from verified cases (known valid) and each generator's unverified cases with
    people's labels of a random sample of that generator's cases (see the module doc).
    Every generator with unverified cases needs at least `MIN_LABELS` labels (else
    ValueError)."""
    z = _z(confidence)
    verified = np.asarray(verified_failed, dtype=float)
    predicted_fv = [verified]
    predicted_v = [np.ones_like(verified)]
    rectifier = np.zeros(2)
    rectifier_cov = np.zeros((2, 2))
    n_total = len(verified) + sum(len(g.failed) for g in generated)
    if n_total == 0:
        return Interval(low=0.0, high=1.0, n=0, confidence=confidence, method="ppi")
    labelled = 0
    for group in generated:
        failed = np.asarray(group.failed, dtype=float)
        p = np.clip(np.asarray(group.p_valid, dtype=float), 0.0, 1.0)
        if len(failed) != len(p):
            raise ValueError("failed and p_valid need one entry per case")
        if not len(failed):
            continue
        n_labels = len(group.labelled_valid)
        if n_labels < MIN_LABELS:
            raise ValueError(
                f"a generator's unverified cases need at least {MIN_LABELS} people's labels"
            )
        predicted_fv.append(failed * p)
        predicted_v.append(p)
        rate = float(failed.mean())
        f_l = np.asarray([rate if f is None else float(f) for f in group.labelled_failed])
        p_l = np.clip(np.asarray(group.labelled_p_valid, dtype=float), 0.0, 1.0)
        v_l = np.asarray(group.labelled_valid, dtype=float)
        # prediction - truth, for the mean of F·V and for the mean of V
        diffs = np.stack([f_l * p_l - f_l * v_l, p_l - v_l])
        share = len(failed) / n_total
        rectifier += share * diffs.mean(axis=1)
        rectifier_cov += share**2 * np.cov(diffs, ddof=1) / n_labels
        labelled += n_labels
    predictions = np.stack([np.concatenate(predicted_fv), np.concatenate(predicted_v)])
    means = predictions.mean(axis=1) - rectifier
    cov = np.cov(predictions, ddof=1) / n_total + rectifier_cov if n_total > 1 else rectifier_cov
    numerator, denominator = float(means[0]), float(means[1])
    if denominator <= 0.0:
        return Interval(
            low=0.0, high=1.0, n=n_total, confidence=confidence, method="ppi", labelled=labelled
        )
    estimate = min(max(numerator / denominator, 0.0), 1.0)
    gradient = np.array([1.0 / denominator, -numerator / denominator**2])
    half = z * math.sqrt(max(float(gradient @ cov @ gradient), 0.0))
    return Interval(
        low=max(0.0, estimate - half),
        high=min(1.0, estimate + half),
        n=n_total,
        confidence=confidence,
        method="ppi",
        estimate=estimate,
        labelled=labelled,
    )
