"""BeLUGA's behaviour losses on constructed predictions: zero where the expectation holds,
growing with the violation; soft labels; the BL-8 forms and their mapping from expectations."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from testaug.core.errors import TestAugError  # noqa: E402
from testaug.evaluation.expectations import Expectation, check_monotonic  # noqa: E402
from testaug.fixing.behaviour.losses import (  # noqa: E402
    DIR_FORMS,
    dir_error,
    dir_form,
    dir_loss,
    inv_cross_entropy,
    inv_loss,
    mft_loss,
    mft_target,
    monotonic_error,
    monotonic_loss,
)

BINARY = ("negative", "positive")


def rows(*positives: float) -> torch.Tensor:
    """Binary (negative, positive) probability rows with the given P(positive)."""
    p = torch.tensor(positives, dtype=torch.float64)
    return torch.stack([1 - p, p], dim=1)


def test_soft_labels_follow_beluga_on_a_binary_sentiment_head():
    assert mft_target(BINARY, "positive") == [0.0, 1.0]
    assert mft_target(BINARY, "negative") == [1.0, 0.0]
    assert mft_target(BINARY, "neutral") == [0.5, 0.5]
    assert mft_target(BINARY, ("neutral", "positive")) == pytest.approx([1 / 3, 2 / 3])
    assert mft_target(BINARY, ("negative", "neutral")) == pytest.approx([2 / 3, 1 / 3])
    # The head's own order decides the columns.
    assert mft_target(("positive", "negative"), "neutral") == [0.5, 0.5]
    assert mft_target(("positive", "negative"), ("neutral", "positive")) == pytest.approx(
        [2 / 3, 1 / 3]
    )


def test_label_sets_on_a_three_label_head_spread_evenly_and_unknown_labels_fail():
    labels = ("negative", "neutral", "positive")
    assert mft_target(labels, ("neutral", "positive")) == [0.0, 0.5, 0.5]
    with pytest.raises(TestAugError, match="cannot be trained"):
        mft_target(BINARY, "duplicate")


def test_mft_loss_is_the_cross_entropy_and_smallest_at_the_soft_target():
    target = torch.tensor([[1 / 3, 2 / 3]] * 3, dtype=torch.float64)
    losses = mft_loss(rows(2 / 3, 0.9, 0.2), target)
    assert losses[0] < losses[1] and losses[0] < losses[2]
    hard = mft_loss(rows(0.8), torch.tensor([[0.0, 1.0]], dtype=torch.float64))
    assert float(hard[0]) == pytest.approx(-torch.log(torch.tensor(0.8)).item(), rel=1e-6)


def test_inv_loss_is_zero_for_equal_predictions_and_grows_with_the_gap():
    original = rows(0.7, 0.7, 0.7, 0.7, 0.5)
    perturbed = rows(0.7, 0.6, 0.4, 0.1, 0.5)
    losses = inv_loss(original, perturbed)
    assert float(losses[0]) == pytest.approx(0.0, abs=1e-12)
    assert float(losses[4]) == pytest.approx(0.0, abs=1e-12)
    assert 0 < losses[1] < losses[2] < losses[3]
    # It is Eq. 5 minus H(p0): the same numbers up to the constant, and the same gradients.
    raw = inv_cross_entropy(original, perturbed)
    entropy = -(original * original.log()).sum(dim=1)
    assert torch.allclose(raw - entropy, losses)


def test_inv_gradients_are_eq5_and_the_original_is_detached_by_default():
    original = rows(0.7).requires_grad_(True)
    perturbed = rows(0.4).requires_grad_(True)
    inv_loss(original, perturbed).sum().backward()
    ours = perturbed.grad.clone()
    assert original.grad is None
    perturbed.grad = None
    inv_cross_entropy(original, perturbed).sum().backward()
    assert torch.allclose(ours, perturbed.grad)
    both = rows(0.7).requires_grad_(True)
    inv_loss(both, rows(0.4), detach_original=False).sum().backward()
    assert both.grad is not None and both.grad.abs().sum() > 0


@pytest.mark.parametrize("form", DIR_FORMS)
def test_dir_loss_is_zero_where_the_form_holds_and_grows_with_the_violation(form):
    # Original P(positive) 0.7, so c* = positive: "more confident" = P(positive) up.
    original = rows(*[0.7] * 5)
    ups, downs = rows(0.7, 0.75, 0.8, 0.9, 0.99), rows(0.7, 0.65, 0.6, 0.5, 0.41)
    violating = {
        "not_more_negative": downs,  # P(negative) going up
        "not_more_positive": ups,
        "not_more_confident": ups,
        "not_less_confident": downs,
    }[form]
    holding = downs if violating is ups else ups
    assert torch.all(dir_loss(original, holding, form) == 0)
    losses = dir_loss(original, violating, form)
    assert float(losses[0]) == 0
    assert all(losses[i] < losses[i + 1] for i in range(4))
    eps = dir_error(original, violating, form)
    assert torch.allclose(losses, -torch.log(1 - eps))


def test_dir_error_reads_the_original_argmax_for_the_confidence_forms():
    # Original P(positive) 0.2: c* = negative, so P(positive) going up is *less* confident.
    original, perturbed = rows(0.2), rows(0.5)
    assert float(dir_error(original, perturbed, "not_less_confident")[0]) == pytest.approx(0.3)
    assert float(dir_error(original, perturbed, "not_more_confident")[0]) == 0


def test_dir_tolerance_forgives_small_moves_and_eq6_is_finite_at_full_violation():
    original, perturbed = rows(0.7, 0.7), rows(0.65, 0.3)
    loose = dir_loss(original, perturbed, "not_more_negative", tolerance=0.1)
    assert float(loose[0]) == 0 and float(loose[1]) > 0
    worst = dir_loss(rows(0.0), rows(1.0), "not_more_positive")
    assert torch.isfinite(worst).all() and float(worst[0]) > 10


@pytest.mark.parametrize(
    ("label", "direction", "form"),
    [
        ("positive", "up", "not_more_negative"),
        ("negative", "up", "not_more_positive"),
        ("positive", "down", "not_more_positive"),
        ("negative", "down", "not_more_negative"),
        ("neutral", "up", "not_more_negative"),
    ],
)
def test_monotonic_expectations_map_to_beluga_forms_with_the_same_error(label, direction, form):
    expectation = Expectation.monotonic(label, direction)
    got, column = dir_form(expectation, BINARY)
    assert got == form
    original = rows(0.5, 0.5, 0.5, 0.5)
    perturbed = rows(0.2, 0.45, 0.55, 0.8)
    ours = monotonic_error(original, perturbed, expectation, BINARY)
    assert torch.allclose(ours, dir_error(original, perturbed, form, column=column))


def test_monotonic_loss_is_zero_exactly_where_the_strict_check_passes():
    expectation = Expectation.monotonic("positive", "up", tolerance=0.0)
    original, perturbed = rows(0.5, 0.5, 0.5, 0.5), rows(0.2, 0.45, 0.5, 0.8)
    losses = monotonic_loss(original, perturbed, expectation, BINARY)
    outcomes = check_monotonic(
        BINARY, original.numpy(), perturbed.numpy(), label="positive", direction="up", tolerance=0
    )
    assert [float(x) == 0 for x in losses] == [o.passed for o in outcomes]
    assert losses[0] > losses[1] > 0
    # With the expectation's tolerance the loss is zero wherever CheckList's check passes.
    loose = Expectation.monotonic("positive", "up", tolerance=0.1)
    losses = monotonic_loss(original, perturbed, loose, BINARY, tolerance=loose.tolerance)
    outcomes = check_monotonic(
        BINARY, original.numpy(), perturbed.numpy(), label="positive", direction="up"
    )
    assert [float(x) == 0 for x in losses] == [o.passed for o in outcomes]


def test_forms_need_a_monotonic_expectation_and_a_binary_sentiment_head():
    with pytest.raises(TestAugError, match="no DIR comparison form"):
        dir_form(Expectation.inv(), BINARY)
    with pytest.raises(TestAugError, match="binary sentiment head"):
        dir_form(Expectation.monotonic("positive", "up"), ("negative", "neutral", "positive"))
