"""BeLUGA's generalization methods: the training loops and what each method changes.

vanilla; l2 (AdamW weight decay 0.1); dropout (every dropout probability 0.3); lp
(encoder frozen, head only, lr 5e-4); lp_ft (lp, then fine-tuning with a fresh optimizer
for half the epochs); group_dro (environments: each functionality, i.e. test-case
description, and the i.i.d. data; online weights w_g <- w_g exp(eta loss_g),
renormalised, eta 1e-2; loss sum_g w_g loss_g); irm (IRMv1, Arjovsky et al.: the same
environments; the logits are multiplied by a dummy scale w = 1 and the penalty is the
mean over environments of (d loss_g / d w)^2, weight 1 for the first fifth of the steps,
then 1e4, the total divided by the weight when it exceeds 1, as BeLUGA's code does); fish
(Shi et al.: 5 inner SGD steps on a copy, each on one sampled environment, then
theta <- theta + meta_lr (theta_inner - theta), meta_lr = 5e-7 / lr / 5).

`run_steps` is the loop (AdamW, linear decay, one batch per kind per step, seeded; an
epoch is one pass over the largest kind, smaller kinds are reshuffled and repeated);
`run_fish` is Fish's.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from testaug.core.errors import TestAugError
from testaug.fixing.behaviour.batching import Cycler, step_losses
from testaug.fixing.finetune import Classifier, FineTuneConfig

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

L2_WEIGHT_DECAY = 0.1
DROPOUT = 0.3
LP_LEARNING_RATE = 5e-4
DRO_ETA = 1e-2
IRM_WEIGHT_EARLY = 1.0
IRM_WEIGHT = 1e4
IRM_ANNEAL_FRACTION = 1 / 5
FISH_META_STEPS = 5
FISH_META_LR = 5e-7


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
    # foreach: the multi-tensor update (same arithmetic), about a third faster on CPU too.
    return torch.optim.AdamW(groups, lr=learning_rate, foreach=True)


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


def run_steps(
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
    cyclers = {kind: Cycler(items, config.batch_size, rng) for kind, items in with_items.items()}
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
        losses, groups = step_losses(classifier, batches, config, rng, detach_original, scale)
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


def run_fish(
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
        group: {kind: Cycler(items, config.batch_size, rng) for kind, items in kinds_.items()}
        for group, kinds_ in sorted(by_group.items())
    }
    per_epoch = max(
        len(c) for c in (Cycler(i, config.batch_size, rng) for i in kinds.values() if i)
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
            losses, _groups = step_losses(inner, batches, config, rng, detach_original)
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
