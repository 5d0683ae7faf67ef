"""BeLUGA's behavioural learning (BL-6, BL-7, BL-11): training on MFT, INV and DIR tests.

Training material is MFT cases (suite `TestCase`s, i.i.d. examples) and
perturbation tests (`PerturbedCase`s). Perturbed cases that share an original,
a perturbation and an expectation form one item; each update samples one of the
item's perturbed versions (BL-7). dir_target DIRs (paraphrase DIRs) are MFTs on
their perturbed input.

Batches: each step draws one mini-batch of `batch_size` from each kind present
(MFT, INV, DIR) and sums the kinds' mean losses; an epoch is one pass over the
largest kind, smaller kinds are reshuffled and repeated. The originals and the
perturbed inputs of a step go through the model in one forward pass.

Methods (BL-11), applied to one training step (`train_behaviour`):
vanilla; l2 (AdamW weight decay 0.1); dropout (every dropout probability 0.3);
lp (encoder frozen, head only, lr 5e-4); lp_ft (lp, then fine-tuning with a fresh
optimizer for half the epochs); group_dro (environments: each functionality,
i.e. test-case description, and the i.i.d. data; online weights
w_g <- w_g exp(eta loss_g), renormalised, eta 1e-2; loss sum_g w_g loss_g);
irm (IRMv1, Arjovsky et al.: the same environments; the logits are multiplied by
a dummy scale w = 1 and the penalty is the mean over environments of
(d loss_g / d w)^2, weight 1 for the first fifth of the steps, then 1e4, the
total divided by the weight when it exceeds 1, as BeLUGA's code does); fish
(Shi et al.: 5 inner SGD steps on a copy, each on one sampled environment, then
theta <- theta + meta_lr (theta_inner - theta), meta_lr = 5e-7 / lr / 5).

Configurations (BL-6, `train_configuration`): iid, iid->t, iid+t,
iid->(iid+t); the method is applied in the last step only, the i.i.d.-only first
step is vanilla.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from testaug.core.errors import TestAugError
from testaug.evaluation.behaviour_losses import (
    DirForm,
    dir_loss,
    inv_loss,
    mft_loss,
    mft_target,
    monotonic_loss,
)
from testaug.evaluation.expectations import is_binary_sentiment
from testaug.evaluation.finetune import Classifier, FineTuneConfig, LabelledInput, load_classifier
from testaug.evaluation.perturbed_cases import PerturbedCase

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

Method = Literal["vanilla", "l2", "dropout", "lp", "lp_ft", "group_dro", "irm", "fish"]
METHODS: tuple[Method, ...] = (
    "vanilla",
    "l2",
    "dropout",
    "lp",
    "lp_ft",
    "group_dro",
    "irm",
    "fish",
)
Configuration = Literal["iid", "iid->t", "iid+t", "iid->(iid+t)"]
CONFIGURATIONS: tuple[Configuration, ...] = ("iid", "iid->t", "iid+t", "iid->(iid+t)")
IID_GROUP = "iid"
L2_WEIGHT_DECAY = 0.1
DROPOUT = 0.3
LP_LEARNING_RATE = 5e-4
DRO_ETA = 1e-2
IRM_WEIGHT_EARLY = 1.0
IRM_WEIGHT = 1e4
IRM_ANNEAL_FRACTION = 1 / 5
FISH_META_STEPS = 5
FISH_META_LR = 5e-7


@dataclass(frozen=True)
class _MftItem:
    """An input with a training target over the head's outputs, and its environment."""

    inputs: tuple[str, str | None]
    target: tuple[float, ...]
    group: str


@dataclass(frozen=True)
class _PairItem:
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
    are INV and DIR cases. `forms` names BL-8's comparison form of a perturbation's
    DIRs where the expectation cannot say it (an intensifier: not_less_confident; a
    reducer: not_more_confident); it overrides their monotonic expectation in training.
    """

    cases: Sequence[Any] = ()
    perturbed: Sequence[PerturbedCase] = ()
    iid: Sequence[LabelledInput] = ()
    forms: Mapping[str, DirForm] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.cases) + len(self.perturbed) + len(self.iid)


def _group_of(case: Any) -> str:
    """A suite case's environment: its description (functionality)."""
    return str(getattr(case, "description_id", None) or IID_GROUP)


def training_items(
    material: TrainingMaterial, labels: Sequence[str]
) -> tuple[list[_MftItem], list[_PairItem], list[_PairItem]]:
    """The MFT, INV and DIR items of the material for a head with outputs `labels`."""
    mft = [
        _MftItem((c.text, c.text_pair), tuple(mft_target(labels, c.label)), IID_GROUP)
        for c in material.iid
    ]
    mft += [
        _MftItem((c.text, c.text_pair), tuple(mft_target(labels, c.label)), _group_of(c))
        for c in material.cases
    ]
    pairs: dict[tuple[str, str, str], list[PerturbedCase]] = {}
    for case in material.perturbed:
        if case.expectation.kind == "dir_target":
            assert case.expectation.target is not None
            target = tuple(mft_target(labels, case.expectation.target))
            mft.append(_MftItem(case.inputs, target, case.description_id))
            continue
        key = (case.original.id, case.perturbation, case.expectation.model_dump_json())
        pairs.setdefault(key, []).append(case)
    inv: list[_PairItem] = []
    dirs: list[_PairItem] = []
    for group in pairs.values():
        first = group[0]
        kind: Literal["inv", "dir"] = "inv" if first.expectation.kind == "inv" else "dir"
        form = material.forms.get(first.perturbation) if kind == "dir" else None
        if form in ("not_more_negative", "not_more_positive") and not is_binary_sentiment(labels):
            raise TestAugError(
                f"DIR form {form} needs a binary sentiment head, not {tuple(labels)}"
            )
        item = _PairItem(
            (first.original.text, first.original.text_pair),
            tuple(case.inputs for case in group),
            kind,
            first.expectation,
            first.description_id,
            form,
        )
        (inv if kind == "inv" else dirs).append(item)
    return mft, inv, dirs


def set_dropout(model: Any, probability: float) -> None:
    """Set every dropout probability of the model (modules, float attributes named
    *dropout*, and the config) to `probability`, in place."""
    import torch

    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = probability
        for name, value in list(vars(module).items()):
            # Attention implementations that keep the probability as a float attribute.
            if "dropout" in name and isinstance(value, float):
                setattr(module, name, probability)
    for name in list(vars(model.config)):
        value = getattr(model.config, name)
        named = name.endswith(("dropout", "dropout_prob", "dropout_rate"))
        if named and (
            value is None or (isinstance(value, float | int) and not isinstance(value, bool))
        ):
            setattr(model.config, name, probability)


def freeze_encoder(model: Any, frozen: bool = True) -> None:
    """Freeze (or unfreeze) the encoder, leaving the classification head trainable."""
    encoder = getattr(model, model.base_model_prefix, None)
    if encoder is None:
        raise TestAugError(f"cannot find the encoder of {type(model).__name__} to freeze")
    for parameter in encoder.parameters():
        parameter.requires_grad = not frozen


def _optimizer(model: Any, learning_rate: float, weight_decay: float) -> torch.optim.Optimizer:
    """AdamW over trainable parameters, weight decay on weights only (not biases, norms)."""
    import torch

    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            plain = name.endswith("bias") or "norm" in name.lower()
            (no_decay if plain else decay).append(parameter)
    groups = [
        {"params": decay, "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=learning_rate)


class _Cycler:
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


class GroupDro:
    """Sagawa et al.'s online group weights: w_g <- w_g exp(eta loss_g), renormalised."""

    def __init__(self, groups: Sequence[str], eta: float = DRO_ETA) -> None:
        self.eta = eta
        self.weights = {group: 1 / len(groups) for group in groups}

    def loss(self, losses: torch.Tensor, groups: Sequence[str]) -> torch.Tensor:
        """Update the weights of the groups present with their mean losses; the weighted sum."""
        import torch

        present = sorted(set(groups))
        index = torch.tensor([present.index(g) for g in groups], device=losses.device)
        sums = torch.zeros(len(present), device=losses.device).index_add(0, index, losses)
        counts = torch.bincount(index, minlength=len(present)).clamp_min(1)
        means = sums / counts
        for group, value in zip(present, means.detach().tolist(), strict=True):
            self.weights[group] *= math.exp(self.eta * value)
        total = sum(self.weights.values())
        self.weights = {g: w / total for g, w in self.weights.items()}
        weights = torch.tensor([self.weights[g] for g in present], device=losses.device)
        return (weights * means).sum()


def irm_penalty(losses: torch.Tensor, groups: Sequence[str], scale: torch.Tensor) -> torch.Tensor:
    """IRMv1's penalty: the mean over environments of (d loss_g / d scale)^2 at scale 1."""
    import torch

    penalties = []
    for group in sorted(set(groups)):
        mask = torch.tensor([g == group for g in groups], device=losses.device)
        (gradient,) = torch.autograd.grad(losses[mask].mean(), [scale], create_graph=True)
        penalties.append(gradient.pow(2))
    return torch.stack(penalties).mean()


def _probabilities(
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


def _step_losses(
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
    probabilities = _probabilities(classifier, inputs, config, scale)
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


def _run(
    classifier: Classifier,
    kinds: dict[str, list[Any]],
    config: FineTuneConfig,
    *,
    learning_rate: float,
    weight_decay: float,
    epochs: float,
    dro: GroupDro | None,
    detach_original: bool,
    on_progress: Callable[[str], None] | None,
    irm: bool = False,
) -> None:
    """The loop itself: AdamW, linear decay, one batch per kind per step, seeded."""
    import torch

    with_items = {kind: items for kind, items in kinds.items() if items}
    if not with_items or epochs <= 0:
        return
    rng = random.Random(config.seed)
    cyclers = {kind: _Cycler(items, config.batch_size, rng) for kind, items in with_items.items()}
    per_epoch = max(len(cycler) for cycler in cyclers.values())
    steps = max(1, round(epochs * per_epoch))
    torch.manual_seed(config.seed)  # dropout
    optimizer = _optimizer(classifier.model, learning_rate, weight_decay)
    warmup = int(config.warmup_ratio * steps)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: (
            (step + 1) / max(1, warmup)
            if step < warmup
            else max(0.0, (steps - step) / max(1, steps - warmup))
        ),
    )
    classifier.model.train()
    total, count = 0.0, 0
    for step in range(steps):
        batches = {kind: cycler.next() for kind, cycler in cyclers.items()}
        scale = torch.tensor(1.0, device=config.device, requires_grad=True) if irm else None
        losses, groups = _step_losses(classifier, batches, config, rng, detach_original, scale)
        if irm:
            weight = IRM_WEIGHT_EARLY if step < steps * IRM_ANNEAL_FRACTION else IRM_WEIGHT
            loss = sum(value.mean() for value in losses.values())
            loss = loss + weight * irm_penalty(torch.cat(list(losses.values())), groups, scale)
            if weight > 1:
                loss = loss / weight
        elif dro is not None:
            loss = dro.loss(torch.cat(list(losses.values())), groups)
        else:
            loss = sum(value.mean() for value in losses.values())
        loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        total, count = total + float(loss.item()), count + 1
        if (step + 1) % per_epoch == 0 or step + 1 == steps:
            message = f"step {step + 1}/{steps}: loss {total / count:.4f}"
            total, count = 0.0, 0
            logger.info(message)
            if on_progress is not None:
                on_progress(message)
    classifier.model.eval()


def _run_fish(
    classifier: Classifier,
    kinds: dict[str, list[Any]],
    config: FineTuneConfig,
    detach_original: bool,
    on_progress: Callable[[str], None] | None,
) -> None:
    """Fish: inner SGD steps on sampled environments on a copy, then a Reptile-style update.

    Each outer update copies the model, takes FISH_META_STEPS SGD steps (learning rate
    `config.learning_rate`) on batches of one randomly drawn environment each, and moves
    the weights by meta_lr = FISH_META_LR / lr / meta_steps times the copy's displacement.
    Outer updates: the vanilla run's steps divided by the meta steps (same compute).
    """
    import copy

    import torch

    by_group: dict[str, dict[str, list[Any]]] = {}
    for kind, items in kinds.items():
        for item in items:
            by_group.setdefault(item.group, {}).setdefault(kind, []).append(item)
    if not by_group or config.epochs <= 0:
        return
    rng = random.Random(config.seed)
    cyclers = {
        group: {kind: _Cycler(items, config.batch_size, rng) for kind, items in kinds_.items()}
        for group, kinds_ in sorted(by_group.items())
    }
    per_epoch = max(
        len(c) for c in (_Cycler(i, config.batch_size, rng) for i in kinds.values() if i)
    )
    outer = max(1, round(config.epochs * per_epoch / FISH_META_STEPS))
    meta_lr = FISH_META_LR / config.learning_rate / FISH_META_STEPS
    torch.manual_seed(config.seed)
    names = sorted(cyclers)
    classifier.model.train()
    for update in range(outer):
        inner = Classifier(copy.deepcopy(classifier.model), classifier.tokenizer, classifier.labels)
        optimizer = torch.optim.SGD(inner.model.parameters(), lr=config.learning_rate)
        total = 0.0
        for _ in range(FISH_META_STEPS):
            group = names[rng.randrange(len(names))]
            batches = {kind: cycler.next() for kind, cycler in cyclers[group].items()}
            losses, _groups = _step_losses(inner, batches, config, rng, detach_original)
            loss = sum(value.mean() for value in losses.values())
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total += float(loss.item())
        with torch.no_grad():
            moved = dict(inner.model.named_parameters())
            for name, parameter in classifier.model.named_parameters():
                parameter.add_(moved[name] - parameter, alpha=meta_lr)
        message = f"fish update {update + 1}/{outer}: inner loss {total / FISH_META_STEPS:.4f}"
        logger.debug(message)
        if on_progress is not None and (update + 1 == outer):
            on_progress(message)
    classifier.model.eval()


def train_behaviour(
    classifier: Classifier,
    material: TrainingMaterial,
    config: FineTuneConfig | None = None,
    *,
    method: Method = "vanilla",
    detach_original: bool = True,
    on_progress: Callable[[str], None] | None = None,
) -> Classifier:
    """Train the classifier in place on the material with a BL-11 method; returns it.

    `config` gives learning rate, batch size, epochs, seed and device (defaults:
    `FineTuneConfig()`); the method overrides what it names (l2: weight decay 0.1;
    lp: lr 5e-4; dropout: 0.3). lp_ft runs lp for `config.epochs`, then fine-tunes
    everything with a fresh optimizer for half as many epochs at `config`'s rate.
    """
    config = config or FineTuneConfig()
    if method not in METHODS:
        raise TestAugError(f"unknown method {method!r} (use one of {', '.join(METHODS)})")
    mft, inv, dirs = training_items(material, classifier.labels)
    kinds = {"mft": mft, "inv": inv, "dir": dirs}
    model = classifier.model
    common = {"dro": None, "detach_original": detach_original, "on_progress": on_progress}
    if method == "dropout":
        set_dropout(model, DROPOUT)
    if method in ("lp", "lp_ft"):
        freeze_encoder(model)
        try:
            _run(
                classifier,
                kinds,
                config,
                learning_rate=LP_LEARNING_RATE,
                weight_decay=config.weight_decay,
                epochs=config.epochs,
                **common,
            )
        finally:
            freeze_encoder(model, frozen=False)
        if method == "lp_ft":
            _run(
                classifier,
                kinds,
                config,
                learning_rate=config.learning_rate,
                weight_decay=config.weight_decay,
                epochs=config.epochs / 2,
                **common,
            )
        return classifier
    if method == "fish":
        _run_fish(classifier, kinds, config, detach_original, on_progress)
        return classifier
    if method == "irm":
        common["irm"] = True
    if method == "group_dro":
        groups = sorted({item.group for items in kinds.values() for item in items})
        common["dro"] = GroupDro(groups or [IID_GROUP], DRO_ETA)
    decay = L2_WEIGHT_DECAY if method == "l2" else config.weight_decay
    _run(
        classifier,
        kinds,
        config,
        learning_rate=config.learning_rate,
        weight_decay=decay,
        epochs=config.epochs,
        **common,
    )
    return classifier


def train_configuration(
    model: str | Path | Classifier,
    configuration: Configuration,
    *,
    labels: Sequence[str],
    iid: Sequence[LabelledInput] = (),
    suite: TrainingMaterial | None = None,
    method: Method = "vanilla",
    config: FineTuneConfig | None = None,
    iid_config: FineTuneConfig | None = None,
    model_labels: Sequence[str] | None = None,
    detach_original: bool = True,
    on_progress: Callable[[str], None] | None = None,
) -> Classifier:
    """A classifier trained in a BL-6 configuration with a BL-11 method (BeLUGA's f(D, T, chi)).

    - iid: the method on `iid` only.
    - iid->t: vanilla on `iid` (with `iid_config`, default `config`), then the method on the suite.
    - iid+t: the method on `iid` and the suite together (i.i.d. data one more environment).
    - iid->(iid+t): vanilla on `iid`, then the method on `iid` and the suite.

    `model` is a path or hub id (loaded with a head of the task's labels where its own
    does not cover them, as `fine_tune` does) or an already loaded `Classifier`,
    trained in place (the debugging loop continues from its last checkpoint).
    """
    config = config or FineTuneConfig()
    if configuration not in CONFIGURATIONS:
        raise TestAugError(
            f"unknown configuration {configuration!r} (use one of {', '.join(CONFIGURATIONS)})"
        )
    suite = suite or TrainingMaterial()
    if configuration != "iid" and not len(suite):
        raise TestAugError(f"configuration {configuration} needs suite training material")
    if configuration != "iid->t" and not iid:
        raise TestAugError(f"configuration {configuration} needs i.i.d. examples")
    if isinstance(model, Classifier):
        classifier = model
    else:
        classifier = load_classifier(
            model,
            labels=labels,
            model_labels=model_labels,
            seed=config.seed,
            train=True,
            device=config.device,
        )
    both = TrainingMaterial(
        cases=suite.cases, perturbed=suite.perturbed, iid=[*iid, *suite.iid], forms=suite.forms
    )
    extra = {"detach_original": detach_original, "on_progress": on_progress}
    if configuration == "iid":
        return train_behaviour(
            classifier, TrainingMaterial(iid=iid), config, method=method, **extra
        )
    if configuration == "iid+t":
        return train_behaviour(classifier, both, config, method=method, **extra)
    if iid:
        train_behaviour(classifier, TrainingMaterial(iid=iid), iid_config or config, **extra)
    second = suite if configuration == "iid->t" else both
    return train_behaviour(classifier, second, config, method=method, **extra)
