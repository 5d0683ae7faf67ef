"""Batching for BeLUGA's behavioural learning: training items and mini-batches.

Training material is MFT cases (suite `TestCase`s, i.i.d. examples) and perturbation
tests (`PerturbedCase`s). Perturbed cases that share an original, a perturbation and an
expectation form one item; each update samples one of the item's perturbed versions.
dir_target DIRs (paraphrase DIRs) are MFTs on their perturbed input.

Each step draws one mini-batch of `batch_size` from each kind present (MFT, INV, DIR);
the originals and the perturbed inputs of a step go through the model in one forward
pass, and each kind gets its per-example losses (`step_losses`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from testaug.core.errors import TestAugError
from testaug.evaluation.expectations import is_binary_sentiment
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.behaviour.losses import (
    DirForm,
    dir_loss,
    inv_loss,
    mft_loss,
    mft_target,
    monotonic_loss,
)
from testaug.fixing.finetune import Classifier, FineTuneConfig, LabelledInput

IID_GROUP = "iid"


@dataclass(frozen=True)
class MftItem:
    """An input with a training target over the head's outputs, and its environment."""

    inputs: tuple[str, str | None]
    target: tuple[float, ...]
    group: str


@dataclass(frozen=True)
class PairItem:
    """An original input, its perturbed versions and the expectation between them."""

    original: tuple[str, str | None]
    versions: tuple[tuple[str, str | None], ...]
    kind: Literal["inv", "dir"]
    expectation: Any
    group: str
    form: DirForm | None = None


@dataclass(frozen=True)
class TrainingMaterial:
    """What a behavioural training step learns from: MFT-like cases and perturbation tests.

    `cases` are suite cases (their functionality, `description_id`, is the
    environment); `iid` are i.i.d. examples (one environment, "iid"); `perturbed`
    are INV and DIR cases. `forms` names BeLUGA's comparison form of a perturbation's
    DIRs where the expectation cannot say it (an intensifier: not_less_confident; a
    reducer: not_more_confident); it overrides their monotonic expectation in training.
    """

    cases: Sequence[Any] = ()
    perturbed: Sequence[PerturbedCase] = ()
    iid: Sequence[LabelledInput] = ()
    forms: Mapping[str, DirForm] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.cases) + len(self.perturbed) + len(self.iid)


def group_of(case: Any) -> str:
    """A suite case's environment: its description (functionality)."""
    return str(getattr(case, "description_id", None) or IID_GROUP)


def training_items(
    material: TrainingMaterial, labels: Sequence[str]
) -> tuple[list[MftItem], list[PairItem], list[PairItem]]:
    """The MFT, INV and DIR items of the material for a head with outputs `labels`."""
    mft = [
        MftItem((c.text, c.text_pair), tuple(mft_target(labels, c.label)), IID_GROUP)
        for c in material.iid
    ]
    mft += [
        MftItem((c.text, c.text_pair), tuple(mft_target(labels, c.label)), group_of(c))
        for c in material.cases
    ]
    pairs: dict[tuple[str, str, str], list[PerturbedCase]] = {}
    for case in material.perturbed:
        if case.expectation.kind == "dir_target":
            assert case.expectation.target is not None
            target = tuple(mft_target(labels, case.expectation.target))
            mft.append(MftItem(case.inputs, target, case.description_id))
            continue
        key = (case.original.id, case.perturbation, case.expectation.model_dump_json())
        pairs.setdefault(key, []).append(case)
    inv: list[PairItem] = []
    dirs: list[PairItem] = []
    for group in pairs.values():
        first = group[0]
        kind: Literal["inv", "dir"] = "inv" if first.expectation.kind == "inv" else "dir"
        form = material.forms.get(first.perturbation) if kind == "dir" else None
        if form in ("not_more_negative", "not_more_positive") and not is_binary_sentiment(labels):
            raise TestAugError(
                f"DIR form {form} needs a binary sentiment head, not {tuple(labels)}"
            )
        item = PairItem(
            (first.original.text, first.original.text_pair),
            tuple(case.inputs for case in group),
            kind,
            first.expectation,
            first.description_id,
            form,
        )
        (inv if kind == "inv" else dirs).append(item)
    return mft, inv, dirs


class Cycler:
    """Shuffled mini-batches of one kind's items, reshuffled when exhausted."""

    def __init__(self, items: Sequence[Any], batch_size: int, rng: random.Random) -> None:
        self.items, self.batch_size, self.rng = list(items), batch_size, rng
        self.order: list[int] = []

    def __len__(self) -> int:
        return math.ceil(len(self.items) / self.batch_size)

    def next(self) -> list[Any]:
        if not self.order:
            self.order = list(range(len(self.items)))
            self.rng.shuffle(self.order)
        chosen, self.order = self.order[: self.batch_size], self.order[self.batch_size :]
        return [self.items[i] for i in chosen]


def batch_probabilities(
    classifier: Classifier,
    inputs: list[tuple[str, str | None]],
    config: FineTuneConfig,
    scale: Any = None,
) -> Any:
    """Softmax rows of the inputs, with gradients (logits times IRM's dummy `scale` if given)."""
    import torch

    features = [
        dict(classifier.tokenizer(t, p, truncation=True, max_length=config.max_length))
        for t, p in inputs
    ]
    batch = classifier.tokenizer.pad(features, padding=True, return_tensors="pt")
    batch = {key: value.to(config.device) for key, value in batch.items()}
    logits = classifier.model(**batch).logits.float()
    return torch.softmax(logits if scale is None else logits * scale, dim=-1)


def step_losses(
    classifier: Classifier,
    batches: dict[str, list[Any]],
    config: FineTuneConfig,
    rng: random.Random,
    detach_original: bool,
    scale: Any = None,
) -> tuple[dict[str, Any], list[str]]:
    """Per-example losses of each kind's batch (one forward pass) and their groups."""
    import torch

    inputs: list[tuple[str, str | None]] = []
    for item in batches.get("mft", []):
        inputs.append(item.inputs)
    pairs = batches.get("inv", []) + batches.get("dir", [])
    versions = [item.versions[rng.randrange(len(item.versions))] for item in pairs]
    inputs += [item.original for item in pairs] + versions
    probabilities = batch_probabilities(classifier, inputs, config, scale)
    n_mft, n_pairs = len(batches.get("mft", [])), len(pairs)
    losses: dict[str, Any] = {}
    groups: list[str] = []
    if n_mft:
        targets = torch.tensor([item.target for item in batches["mft"]], device=config.device)
        losses["mft"] = mft_loss(probabilities[:n_mft], targets)
        groups += [item.group for item in batches["mft"]]
    originals = probabilities[n_mft : n_mft + n_pairs]
    perturbed = probabilities[n_mft + n_pairs :]
    n_inv = len(batches.get("inv", []))
    if n_inv:
        losses["inv"] = inv_loss(
            originals[:n_inv], perturbed[:n_inv], detach_original=detach_original
        )
        groups += [item.group for item in batches["inv"]]
    if n_pairs > n_inv:
        names = list(classifier.labels)
        sides = (
            {"negative": names.index("negative"), "positive": names.index("positive")}
            if is_binary_sentiment(names)
            else {}
        )
        rows = [
            dir_loss(originals[i : i + 1], perturbed[i : i + 1], item.form, **sides)
            if item.form is not None
            else monotonic_loss(
                originals[i : i + 1], perturbed[i : i + 1], item.expectation, classifier.labels
            )
            for i, item in enumerate(pairs[n_inv:], start=n_inv)
        ]
        losses["dir"] = torch.cat(rows)
        groups += [item.group for item in batches["dir"]]
    return losses, groups
