"""BeLUGA's behaviour-specific losses on probability tensors.

Every function takes torch tensors of shape (n, k): probabilities over the
model's k outputs (softmax rows), one row per example, and returns one loss per
row (shape (n,)), so a training loop can average them or weight them by group.

- MFT: cross-entropy against a (soft) target, `-sum_k t[k] log p[k]`. On a binary
  sentiment head, BeLUGA's soft labels (footnote 6): neutral -> [1/2, 1/2], "not
  negative" ({neutral, positive}) -> [1/3, 2/3] (and "not positive" -> [2/3, 1/3]);
  a label set on any other head spreads the target evenly over its labels.
  (BeLUGA's code trains the SENT head multi-label, sigmoid/BCE; we keep the softmax
  head and use soft-target cross-entropy.)
- INV (Eq. 5): `-sum_k p0[k] log pi[k]` between the original's and the perturbed
  input's predictions. We subtract the original's entropy `H(p0)` computed on a
  detached copy: the value is then KL(p0 || pi), zero exactly when the predictions
  agree, while the gradients are Eq. 5's unchanged (the subtracted term is a
  constant). By default p0 is detached too (the original prediction is a target,
  as in consistency training): without that, Eq. 5's gradient also pushes p0 to
  lower entropy, i.e. towards more confident originals.
- DIR (Eq. 6): `-log(1 - eps)` with eps one of BeLUGA's four comparison forms;
  zero where the comparison holds, growing without bound as eps -> 1 (eps is
  clamped to 1 - 1e-6). `tolerance` (default 0: BeLUGA's strict form) lets a
  move of up to the tolerance go unpenalised, as CheckList's check does.
- DIRs that expect a label (dir_target, paraphrase DIRs) are MFTs on the
  perturbed input: see `mft_target`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from testaug.core.errors import TestAugError
from testaug.core.records import Label, label_options
from testaug.evaluation.expectations import Expectation, is_binary_sentiment, label_column

if TYPE_CHECKING:
    import torch

DirForm = Literal[
    "not_more_negative", "not_more_positive", "not_more_confident", "not_less_confident"
]
DIR_FORMS: tuple[DirForm, ...] = (
    "not_more_negative",
    "not_more_positive",
    "not_more_confident",
    "not_less_confident",
)
_TINY = 1e-12
_MAX_EPS = 1 - 1e-6


def mft_target(labels: Sequence[str], label: Label) -> list[float]:
    """The training target of an expected label over the head's outputs `labels`.

    A label the head has: one-hot. On a binary sentiment head (negative, positive):
    neutral -> 1/2 each, {neutral, positive} -> 1/3 negative, 2/3 positive and
    {neutral, negative} -> 2/3, 1/3 (BeLUGA footnote 6). Another label set the head
    covers: 1/n on each of its n labels. Anything else is an error.
    """
    options = label_options(label)
    names = list(labels)
    if len(options) == 1 and options[0] in names:
        return [1.0 if name == options[0] else 0.0 for name in names]
    if is_binary_sentiment(names):
        positive = {
            ("neutral",): 1 / 2,
            ("neutral", "positive"): 2 / 3,
            ("negative", "neutral"): 1 / 3,
            ("negative", "positive"): 1 / 2,
        }.get(tuple(sorted(options)))
        if positive is not None:
            return [positive if name == "positive" else 1 - positive for name in names]
    if options and all(option in names for option in options):
        return [1 / len(options) if name in options else 0.0 for name in names]
    raise TestAugError(
        f"label {' or '.join(options)!r} cannot be trained on outputs {tuple(names)}"
    )


def mft_loss(probabilities: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-row cross-entropy -sum_k t[k] log p[k] against (soft) targets."""
    import torch

    return -(targets * torch.log(probabilities.clamp_min(_TINY))).sum(dim=-1)


def inv_cross_entropy(
    original: torch.Tensor, perturbed: torch.Tensor, *, detach_original: bool = True
) -> torch.Tensor:
    """Eq. 5 as written: per-row -sum_k p0[k] log pi[k]."""
    import torch

    p0 = original.detach() if detach_original else original
    return -(p0 * torch.log(perturbed.clamp_min(_TINY))).sum(dim=-1)


def inv_loss(
    original: torch.Tensor, perturbed: torch.Tensor, *, detach_original: bool = True
) -> torch.Tensor:
    """Eq. 5 minus the (constant) entropy of p0: KL(p0 || pi) per row, zero where they agree.

    The gradients are Eq. 5's. With `detach_original` (default) only the perturbed
    prediction is trained towards the original one.
    """
    import torch

    fixed = original.detach()
    entropy = -(fixed * torch.log(fixed.clamp_min(_TINY))).sum(dim=-1)
    return inv_cross_entropy(original, perturbed, detach_original=detach_original) - entropy


def dir_error(
    original: torch.Tensor,
    perturbed: torch.Tensor,
    form: DirForm,
    *,
    column: int | None = None,
    negative: int = 0,
    positive: int = 1,
    tolerance: float = 0.0,
) -> torch.Tensor:
    """The DIR violation eps per row, in [0, 1]: how far the perturbed prediction violates `form`.

    not_more_negative: max(0, pi[neg] - p0[neg]); not_more_positive: max(0, pi[pos] -
    p0[pos]); not_more_confident: max(0, pi[c*] - p0[c*]); not_less_confident:
    max(0, p0[c*] - pi[c*]); c* = argmax p0. `column` overrides the watched output of
    the first two forms (for a head other than binary sentiment: "not more negative"
    reads "P(column) must not go up"). A violation up to `tolerance` counts as none.
    """
    import torch

    if form in ("not_more_negative", "not_more_positive"):
        index = (
            column
            if column is not None
            else (negative if form == "not_more_negative" else positive)
        )
        rise = perturbed[:, index] - original[:, index]
    else:
        star = original.argmax(dim=-1, keepdim=True)
        gain = perturbed.gather(1, star).squeeze(1) - original.gather(1, star).squeeze(1)
        rise = gain if form == "not_more_confident" else -gain
    return torch.clamp(rise - tolerance, min=0.0)


def dir_loss(
    original: torch.Tensor,
    perturbed: torch.Tensor,
    form: DirForm,
    *,
    column: int | None = None,
    negative: int = 0,
    positive: int = 1,
    tolerance: float = 0.0,
    detach_original: bool = False,
) -> torch.Tensor:
    """Eq. 6 per row: -log(1 - eps), eps = `dir_error(...)`; zero where the form holds.

    By default gradients reach both predictions (the comparison is relative, and
    Eq. 6 has no target side); `detach_original` trains only the perturbed one.
    """
    import torch

    p0 = original.detach() if detach_original else original
    eps = dir_error(
        p0,
        perturbed,
        form,
        column=column,
        negative=negative,
        positive=positive,
        tolerance=tolerance,
    )
    return -torch.log1p(-eps.clamp(max=_MAX_EPS))


def dir_form(expectation: Expectation, labels: Sequence[str]) -> tuple[DirForm, int]:
    """The comparison form and watched output column of a dir_monotonic expectation.

    `monotonic(label, "up")` (P(label) must not go down) is "P(other) not more" on a
    binary head: label positive -> not_more_negative, label negative ->
    not_more_positive; `monotonic(label, "down")` is "P(label) not more": positive
    -> not_more_positive, negative -> not_more_negative. Neutral reads P(positive)
    (as the check does). BeLUGA's comparison forms are defined for a binary sentiment head only;
    on other heads train with `monotonic_loss`, which reads the label's own column.
    """
    if expectation.kind != "dir_monotonic":
        raise TestAugError(f"a {expectation.kind} expectation has no DIR comparison form")
    assert expectation.label is not None and expectation.direction is not None
    column = label_column(labels, expectation.label)
    names = list(labels)
    if is_binary_sentiment(names):
        watched = names[column]
        other = names.index("negative" if watched == "positive" else "positive")
        if expectation.direction == "up":
            form: DirForm = "not_more_negative" if watched == "positive" else "not_more_positive"
            return form, other
        form = "not_more_positive" if watched == "positive" else "not_more_negative"
        return form, column
    raise TestAugError(f"the DIR comparison forms need a binary sentiment head, not {tuple(names)}")


def monotonic_error(
    original: torch.Tensor,
    perturbed: torch.Tensor,
    expectation: Expectation,
    labels: Sequence[str],
    *,
    tolerance: float = 0.0,
) -> torch.Tensor:
    """eps of a dir_monotonic expectation: how far P(label) moved against its direction.

    "up": max(0, p0[label] - pi[label]); "down": max(0, pi[label] - p0[label]). On a
    binary sentiment head this equals the eps of `dir_form`'s form (the two
    columns sum to one).
    """
    import torch

    if expectation.kind != "dir_monotonic":
        raise TestAugError(f"a {expectation.kind} expectation is not a monotonic DIR")
    column = label_column(labels, expectation.label or "")
    change = perturbed[:, column] - original[:, column]
    against = -change if expectation.direction == "up" else change
    return torch.clamp(against - tolerance, min=0.0)


def monotonic_loss(
    original: torch.Tensor,
    perturbed: torch.Tensor,
    expectation: Expectation,
    labels: Sequence[str],
    *,
    tolerance: float = 0.0,
    detach_original: bool = False,
) -> torch.Tensor:
    """Eq. 6 for a dir_monotonic expectation: -log(1 - eps), eps from `monotonic_error`."""
    import torch

    p0 = original.detach() if detach_original else original
    eps = monotonic_error(p0, perturbed, expectation, labels, tolerance=tolerance)
    return -torch.log1p(-eps.clamp(max=_MAX_EPS))
