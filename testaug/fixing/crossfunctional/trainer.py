"""Training and scoring for BeLUGA's cross-functional analysis with Hugging Face classifiers:
a `Train` by behavioural training (`behaviour_training`), a `Predict` (argmax label) and a
`Check` (CheckList's expectations on perturbation tests)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from testaug.core.errors import TestAugError
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.crossfunctional.records import (
    WITH_IID,
    Check,
    Predict,
    Progress,
    Train,
    TrainingRequest,
)
from testaug.fixing.finetune import (
    Classifier,
    FineTuneConfig,
    LabelledInput,
    load_classifier,
    predict_labels,
    predict_proba,
)


class Timings(dict[str, float]):
    """Seconds spent per step of the analysis, accumulated (`timed` adds to a step)."""

    def add(self, step: str, seconds: float) -> None:
        self[step] = self.get(step, 0.0) + seconds


def behaviour_trainer(
    base_model: str,
    *,
    labels: Sequence[str],
    config: FineTuneConfig | None = None,
    iid_config: FineTuneConfig | None = None,
    model_labels: Sequence[str] | None = None,
    on_progress: Progress | None = None,
    timings: Timings | None = None,
) -> Train:
    """A `Train` by BeLUGA's behavioural training (`behaviour_training`), suite cases read
    by their labels: the i.i.d.-only step (vanilla, `iid_config`, default `config`) is made
    once per seed and reused by IID, IID->T and IID->(IID+T); the method is applied in the
    suite step (IID: to the i.i.d. step itself, which is then not shared). A request's
    `setting` replaces `config`'s learning rate, epochs and batch size in the suite step.
    `timings` (if given) gathers the seconds of loading, the i.i.d. step and the suite step."""
    import copy

    from testaug.fixing.behaviour import training as bt

    config = config or FineTuneConfig()
    first_steps: dict[int, Any] = {}
    clock = timings if timings is not None else Timings()

    def fresh(seed: int) -> Classifier:
        started = time.perf_counter()
        classifier = load_classifier(
            base_model,
            labels=labels,
            model_labels=model_labels,
            seed=seed,
            train=True,
            device=config.device,
        )
        clock.add("load model", time.perf_counter() - started)
        return classifier

    def iid_model(material: TrainingRequest, seed: int) -> Classifier:
        classifier = fresh(seed)
        started = time.perf_counter()
        if seed not in first_steps:
            step = (iid_config or config).model_copy(update={"seed": seed})
            bt.train_behaviour(classifier, bt.TrainingMaterial(iid=material.iid), step)
            first_steps[seed] = copy.deepcopy(classifier.model.state_dict())
        classifier.model.load_state_dict(first_steps[seed])
        clock.add("i.i.d. step", time.perf_counter() - started)
        return classifier

    def train(material: TrainingRequest, seed: int) -> Classifier:
        if material.method not in bt.METHODS:
            raise TestAugError(
                f"unknown method {material.method!r}: one of {', '.join(bt.METHODS)}"
            )
        method: Any = material.method
        update: dict[str, Any] = {"seed": seed}
        if material.setting is not None:
            update.update(material.setting.model_dump())
        seeded = config.model_copy(update=update)
        extra = {"method": method, "on_progress": on_progress}
        if material.configuration == "IID":
            if method == "vanilla":
                return iid_model(material, seed)
            classifier = fresh(seed)
            started = time.perf_counter()
            bt.train_behaviour(classifier, bt.TrainingMaterial(iid=material.iid), seeded, **extra)
            clock.add("i.i.d. step", time.perf_counter() - started)
            return classifier
        iid = material.iid if material.configuration in WITH_IID else ()
        suite = bt.TrainingMaterial(cases=material.cases, perturbed=material.perturbed, iid=iid)
        classifier = fresh(seed) if material.configuration == "IID+T" else iid_model(material, seed)
        if not len(suite):
            return classifier  # everything left out (a suite of one test type): no suite step
        started = time.perf_counter()
        bt.train_behaviour(classifier, suite, seeded, **extra)
        clock.add("suite step", time.perf_counter() - started)
        return classifier

    return train


def classifier_predict(config: FineTuneConfig | None = None) -> Predict:
    """A `Predict` for the classifiers `behaviour_trainer` returns (argmax label)."""
    config = config or FineTuneConfig()

    def predict(classifier: Any, inputs: Sequence[LabelledInput]) -> list[str]:
        return predict_labels(classifier, inputs, config) if inputs else []

    return predict


def classifier_check(config: FineTuneConfig | None = None) -> Check:
    """A `Check` for the classifiers `behaviour_trainer` returns: CheckList's expectation
    of each perturbation test on the model's probabilities (`failures`)."""
    config = config or FineTuneConfig()

    def check(classifier: Any, perturbed: Sequence[PerturbedCase]) -> list[bool | None]:
        from testaug.evaluation.model_runs import evaluate_from_probabilities, needed_inputs

        inputs = needed_inputs((), perturbed)
        rows = predict_proba(
            classifier.model,
            classifier.tokenizer,
            inputs,
            config.eval_batch_size,
            max_length=config.max_length,
        )
        evaluation = evaluate_from_probabilities(
            "model", classifier.labels, (), perturbed, dict(zip(inputs, rows, strict=True))
        )
        return [None if r.filtered else r.passed for r in evaluation.results]

    return check
