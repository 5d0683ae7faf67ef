"""Building the fixing examples of a debugging round and training on them.

A failing test becomes a fixing example, and as many i.i.d. examples are sampled (1:1,
seeded) from a training pool; the start checkpoint is fine-tuned on the mixture.

Training (`trainer`): "behaviour" (the default) uses BeLUGA's behaviour losses
(`evaluation.behaviour_training.train_behaviour`, vanilla method): "should be Y"
trains Y, several labels or neutral on a binary sentiment head as BeLUGA's soft
targets; "should not be Y" trains the other labels (on a binary sentiment head read
with the neutral band, "not positive" is {negative, neutral}: 2/3 negative);
"should be the same as for" (INV) is the INV loss between the original and the
changed input; DIR tests are the monotonic DIR loss on the watched label. The
fixing examples and the i.i.d. sample go into one mixture, batches mixing the kinds
as BeLUGA does. "hard" is plain cross-entropy on one label per test (the existing
fine-tuning code): "should be Y" the likeliest of Y's labels the head has, "should
not be Y" the likeliest label outside Y, INV the label the start model predicts for
the original; DIR tests are left out. Tests whose labels the head cannot be trained
on are counted as untrainable and left out.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from testaug.adaptive.scores import THREE_WAY, predict_distinct, test_inputs
from testaug.adaptive.tree import LABEL_COMPARATORS, TreeTest
from testaug.core.errors import TestAugError
from testaug.core.records import Label, TestCase
from testaug.evaluation.expectations import NEUTRAL_BAND, is_binary_sentiment, predicted_labels
from testaug.evaluation.models import ModelUnderTest
from testaug.fixing.debugging.records import FixExample, Trainer
from testaug.fixing.finetune import Classifier, FineTuneConfig, fine_tune, load_classifier
from testaug.fixing.patching.protocol import IidExample

if TYPE_CHECKING:
    from testaug.fixing.behaviour.training import TrainingMaterial

IID_HOLDOUT = 0.5
Progress = Callable[[str], None]


def fixing_examples(
    tests: Sequence[TreeTest],
    model: ModelUnderTest,
    head: Sequence[str],
    *,
    trainer: Trainer = "behaviour",
    batch_size: int = 32,
) -> tuple[list[FixExample], dict[str, int]]:
    """Fixing examples for failing tests on `model` (see the module docstring), and the tests
    left out by reason. `head` are the labels the classifier can be trained on."""
    from testaug.fixing.behaviour.losses import mft_target

    rows = predict_distinct(
        model, [item for test in tests for item in test_inputs(test)], batch_size=batch_size
    )
    labels = list(model.labels)
    examples: list[FixExample] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    def trainable(label: Label) -> bool:
        try:
            mft_target(head, label)
        except TestAugError:
            return False
        return True

    def likeliest(choices: Sequence[str], row: np.ndarray) -> str:
        return max(choices, key=lambda name: row[labels.index(name)] if name in labels else -1)

    for test in tests:
        own = rows[(test.input, test.input_pair)]
        common = {"text": test.input, "text_pair": test.input_pair, "test_id": test.id,
                  "topic": test.topic}  # fmt: skip
        if test.comparator in LABEL_COMPARATORS:
            expected = test.expected_labels
            if test.comparator == "should be":
                wanted = [label for label in expected if label in head]
            else:
                wanted = [label for label in head if label not in expected]
            if trainer == "behaviour":
                space = THREE_WAY if is_binary_sentiment(labels) else labels  # neutral band
                rest = tuple(label for label in space if label not in expected)
                target: Label = expected if test.comparator == "should be" else rest
                target = target[0] if len(target) == 1 else tuple(target)
                if trainable(target):
                    examples.append(FixExample(label=target, **common))
                    continue
            if not wanted:
                skip("label not on the model's head")
                continue
            examples.append(FixExample(label=likeliest(wanted, own), **common))
            continue
        other = rows[(test.output, test.output_pair)]
        original = predicted_labels(labels, other, neutral_band=NEUTRAL_BAND)[0]
        pair = {"original": test.output, "original_pair": test.output_pair,
                "original_label": original, "tolerance": test.tolerance}  # fmt: skip
        if test.comparator == "should be the same as for":
            if trainer == "behaviour":
                examples.append(FixExample(kind="inv", **pair, **common))
            elif original in head:
                examples.append(FixExample(label=original, **common))
            else:
                skip("label not on the model's head")
            continue
        if trainer == "hard":
            skip("DIR test (needs the behaviour losses)")
        elif test.watched not in head:
            skip("label not on the model's head")
        else:
            direction = "up" if test.comparator == "should be no less than" else "down"
            examples.append(
                FixExample(kind="dir", watched=test.watched, direction=direction, **pair, **common)
            )
    return examples, skipped


def behaviour_material(
    examples: Sequence[FixExample], iid: Sequence[IidExample]
) -> TrainingMaterial:
    """BeLUGA's training material: MFT examples as cases (soft targets where they name
    several labels), INV and DIR examples as perturbation cases, and the i.i.d. sample."""
    from testaug.evaluation.expectations import Expectation
    from testaug.evaluation.perturbations.cases import PerturbedCase
    from testaug.fixing.behaviour.training import TrainingMaterial

    cases, perturbed = [], []
    for example in examples:
        if example.kind == "mft":
            cases.append(example)
            continue
        original = TestCase(
            task="tree",
            capability=example.topic,
            description_id=example.topic,
            description=example.topic,
            text=example.original,
            text_pair=example.original_pair,
            label=example.original_label or "unknown",
        )
        if example.kind == "inv":
            expectation = Expectation.inv(example.tolerance)
        else:
            assert example.watched is not None and example.direction is not None
            expectation = Expectation.monotonic(
                example.watched, example.direction, example.tolerance
            )
        perturbed.append(
            PerturbedCase(
                original=original,
                text=example.text,
                text_pair=example.text_pair,
                perturbation=f"tree test {example.test_id}",
                test_type="INV" if example.kind == "inv" else "DIR",
                expectation=expectation,
            )
        )
    return TrainingMaterial(cases=cases, perturbed=perturbed, iid=list(iid))


def train_fix(
    start: Path,
    examples: Sequence[FixExample],
    iid: Sequence[IidExample],
    *,
    head: Sequence[str],
    config: FineTuneConfig,
    trainer: Trainer = "behaviour",
    output_dir: Path | None = None,
    on_progress: Progress | None = None,
) -> Classifier:
    """The start checkpoint fine-tuned on the fixing examples and the i.i.d. sample: with
    BeLUGA's behaviour losses (MFT soft targets, INV, DIR; `behaviour`), or plain
    cross-entropy on hard labels (`hard`, MFT-shaped examples only). Saved to `output_dir`."""
    if trainer == "hard":
        hard = [example for example in examples if example.kind == "mft"]
        if any(not isinstance(example.label, str) for example in hard):
            raise TestAugError("hard-label training needs one label per example")
        return fine_tune(
            start, [*hard, *iid], labels=head, config=config, output_dir=output_dir,
            on_progress=on_progress,
        )  # fmt: skip
    from testaug.fixing.behaviour.training import train_behaviour

    classifier = load_classifier(
        start, labels=head, seed=config.seed, train=True, device=config.device
    )
    train_behaviour(classifier, behaviour_material(examples, iid), config, on_progress=on_progress)
    classifier.model.eval()
    if output_dir is not None:
        classifier.model.config.id2label = dict(enumerate(classifier.labels))
        classifier.model.config.label2id = {name: i for i, name in enumerate(classifier.labels)}
        classifier.model.save_pretrained(output_dir)
        classifier.tokenizer.save_pretrained(output_dir)
    return classifier


def sample_iid(pool: Sequence[IidExample], n: int, seed: int) -> list[IidExample]:
    """`n` i.i.d. examples drawn from the pool by `seed` (with replacement only when the pool
    is smaller than `n`)."""
    if n == 0:
        return []
    if not pool:
        raise TestAugError("no i.i.d. examples to mix with the fixing data")
    rng = random.Random(seed)
    if n <= len(pool):
        return rng.sample(list(pool), n)
    return rng.choices(list(pool), k=n)


def split_iid(
    iid: Sequence[IidExample], holdout: float = IID_HOLDOUT, seed: int = 0
) -> tuple[list[IidExample], list[IidExample]]:
    """The i.i.d. examples split (seeded) into a training pool and a held-out evaluation set."""
    order = list(range(len(iid)))
    random.Random(seed).shuffle(order)
    cut = round(len(iid) * holdout)
    held = sorted(order[:cut])
    pool = sorted(order[cut:])
    return [iid[i] for i in pool], [iid[i] for i in held]
