"""BeLUGA's behavioural learning: training on MFT, INV and DIR tests.

`train_behaviour` trains one step with a behaviour-learning method (`behaviour_methods`) on MFT cases,
i.i.d. examples and perturbation tests (`behaviour_batching`: each step draws one
mini-batch from each kind present and sums the kinds' mean losses).

Configurations (`train_configuration`): iid, iid->t, iid+t, iid->(iid+t); the
method is applied in the last step only, the i.i.d.-only first step is vanilla.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from testaug.core.errors import TestAugError
from testaug.fixing.behaviour.batching import IID_GROUP, TrainingMaterial, training_items
from testaug.fixing.behaviour.methods import (
    DRO_ETA,
    DROPOUT,
    L2_WEIGHT_DECAY,
    LP_LEARNING_RATE,
    GroupDro,
    freeze_encoder,
    irm_penalty,
    run_fish,
    run_steps,
    set_dropout,
)
from testaug.fixing.finetune import Classifier, FineTuneConfig, LabelledInput, load_classifier

__all__ = [
    "CONFIGURATIONS",
    "METHODS",
    "Configuration",
    "GroupDro",
    "Method",
    "TrainingMaterial",
    "irm_penalty",
    "set_dropout",
    "train_behaviour",
    "train_configuration",
    "training_items",
]

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


def train_behaviour(
    classifier: Classifier,
    material: TrainingMaterial,
    config: FineTuneConfig | None = None,
    *,
    method: Method = "vanilla",
    detach_original: bool = True,
    on_progress: Callable[[str], None] | None = None,
) -> Classifier:
    """Train the classifier in place on the material with a behaviour-learning method; returns it.

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
            run_steps(
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
            run_steps(
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
        run_fish(classifier, kinds, config, detach_original, on_progress)
        return classifier
    if method == "irm":
        common["irm"] = True
    if method == "group_dro":
        groups = sorted({item.group for items in kinds.values() for item in items})
        common["dro"] = GroupDro(groups or [IID_GROUP], DRO_ETA)
    decay = L2_WEIGHT_DECAY if method == "l2" else config.weight_decay
    run_steps(
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
    """A classifier trained in one of BeLUGA's configurations with a behaviour-learning method (BeLUGA's f(D, T, chi)).

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
