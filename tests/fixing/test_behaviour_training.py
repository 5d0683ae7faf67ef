"""BeLUGA's behavioural training on a tiny BERT: INV training teaches invariance, the BL-6
configurations and BL-11 methods run seeded, and each method does what it names."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from testaug.core.errors import TestAugError  # noqa: E402
from testaug.core.records import TestCase  # noqa: E402
from testaug.evaluation.expectations import Expectation  # noqa: E402
from testaug.evaluation.perturbations.cases import PerturbedCase  # noqa: E402
from testaug.fixing.behaviour.batching import TrainingMaterial, training_items  # noqa: E402
from testaug.fixing.behaviour.losses import inv_loss  # noqa: E402
from testaug.fixing.behaviour.methods import GroupDro, irm_penalty, set_dropout  # noqa: E402
from testaug.fixing.behaviour.training import (  # noqa: E402
    CONFIGURATIONS,
    METHODS,
    train_behaviour,
    train_configuration,
)
from testaug.fixing.finetune import (  # noqa: E402
    FineTuneConfig,
    case_inputs,
    load_classifier,
    predict_proba,
)
from testaug.fixing.patching.protocol import IidExample  # noqa: E402
from tests.models_fixture import build_tiny_classifier  # noqa: E402

BINARY = ("negative", "positive")
TRAIN_NOUNS = ("food", "seat", "crew")
HELD_NOUNS = ("service", "flight")
FAST = FineTuneConfig(learning_rate=1e-2, epochs=1, batch_size=4, seed=5)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """One torch thread: a hidden-size-16 model gains nothing from more, and on a busy
    two-core machine the threads' waiting costs more than the arithmetic."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    """A one-layer, hidden-size-16 BERT with a 2-label head (LABEL_0, LABEL_1), saved."""
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-bert"), 2)


def case(text: str, label, description: str) -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id=description,
        description=description,
        text=text,
        label=label,
    )


def sentiment_cases(nouns, negative_suffix: str = "") -> list[TestCase]:
    """Positive and negative 'the NOUN was WORD .' cases; negatives end with the suffix."""
    out = []
    for noun in nouns:
        out += [case(f"the {noun} was {w} .", "positive", "pos") for w in ("good", "great", "love")]
        out += [
            case(f"the {noun} was {w} .{negative_suffix}", "negative", "neg")
            for w in ("bad", "awful", "hate")
        ]
    return out


def appended(cases, token: str, expectation: Expectation) -> list[PerturbedCase]:
    return [
        PerturbedCase(
            original=c,
            text=c.text + token,
            perturbation="append",
            test_type=expectation.test_type,
            expectation=expectation,
        )
        for c in cases
    ]


def small_material() -> TrainingMaterial:
    cases = [
        *sentiment_cases(("food",))[:4],
        case("the seat was one seat .", "neutral", "neutral"),
        case("the seat was not bad .", ("neutral", "positive"), "not negative"),
    ]
    perturbed = appended(cases[:2], " !", Expectation.inv())
    perturbed += appended(cases[:1], " i love it", Expectation.monotonic("positive", "up"))
    perturbed += appended(cases[3:4], " i love it", Expectation.to_target("positive"))
    return TrainingMaterial(cases=cases, perturbed=perturbed)


IID = [
    IidExample(text="i love it", label="positive"),
    IidExample(text="i hate it", label="negative"),
]


def weights(classifier) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in classifier.model.named_parameters()}


def test_inv_and_dir_training_teach_the_behaviour_on_held_out_cases(tiny_bert):
    # Negative training cases end with "!", so plain MFT training learns "!" means negative.
    # Training with the INV loss on "append !" (training nouns only) must undo that on
    # held-out nouns: appending "!" to a held-out positive case leaves the prediction alone.
    # So must the DIR loss of "append !: P(positive) must not go down".
    train = sentiment_cases(TRAIN_NOUNS, negative_suffix=" !")
    positives = [c for c in train if c.label == "positive"]
    held = [c for c in sentiment_cases(HELD_NOUNS) if c.label == "positive"]
    config = FineTuneConfig(learning_rate=1e-2, epochs=15, batch_size=6, seed=2)
    measured = {}
    for name, material in {
        "mft": TrainingMaterial(cases=train),
        "mft+inv": TrainingMaterial(
            cases=train, perturbed=appended(positives, " !", Expectation.inv())
        ),
        "mft+dir": TrainingMaterial(
            cases=train,
            perturbed=appended(positives, " !", Expectation.monotonic("positive", "up", 0.0)),
        ),
    }.items():
        tuned = train_configuration(
            tiny_bert, "iid->t", labels=BINARY, suite=material, config=config
        )
        original = predict_proba(tuned.model, tuned.tokenizer, case_inputs(held))
        perturbed = predict_proba(
            tuned.model, tuned.tokenizer, [(c.text + " !", None) for c in held]
        )
        measured[name] = {
            "agreement": float(np.mean(original.argmax(1) == perturbed.argmax(1))),
            "inv_loss": float(inv_loss(torch.tensor(original), torch.tensor(perturbed)).mean()),
            "accuracy": float(np.mean(original.argmax(1) == 1)),
            "p_positive_drop": float(np.mean(original[:, 1] - perturbed[:, 1])),
        }
    assert measured["mft"]["agreement"] <= 0.5
    assert measured["mft+inv"]["agreement"] == 1.0
    assert measured["mft+inv"]["inv_loss"] < measured["mft"]["inv_loss"] / 10
    assert measured["mft+inv"]["accuracy"] == 1.0
    assert measured["mft"]["p_positive_drop"] > 0.5
    assert measured["mft+dir"]["p_positive_drop"] < 0.05
    assert measured["mft+dir"]["agreement"] == 1.0
    assert measured["mft+dir"]["accuracy"] == 1.0


def test_training_items_group_versions_and_train_target_dirs_as_mfts():
    material = small_material()
    extra = appended(material.cases[:1], " .", Expectation.inv())  # a second version of case 0
    material = TrainingMaterial(
        cases=material.cases, perturbed=[*material.perturbed, *extra], iid=IID
    )
    mft, inv, dirs = training_items(material, BINARY)
    assert len(mft) == 2 + 6 + 1  # i.i.d., cases, the dir_target on its perturbed input
    assert mft[-1].inputs == ("the food was bad . i love it", None)
    assert mft[-1].target == (0.0, 1.0)
    assert [item.target for item in mft[6:8]] == [(0.5, 0.5), pytest.approx((1 / 3, 2 / 3))]
    assert {item.group for item in mft} == {"iid", "pos", "neg", "neutral", "not negative"}
    assert sorted(len(item.versions) for item in inv) == [1, 2]
    assert [(item.kind, len(item.versions)) for item in dirs] == [("dir", 1)]


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_each_configuration_trains_and_is_seeded(tiny_bert, configuration):
    runs = [
        weights(
            train_configuration(
                tiny_bert,
                configuration,
                labels=BINARY,
                iid=IID,
                suite=small_material(),
                config=FAST,
            )
        )
        for _ in range(2)
    ]
    untouched = weights(load_classifier(tiny_bert, labels=BINARY, train=True))
    assert all(torch.equal(runs[0][name], runs[1][name]) for name in runs[0])
    assert any(not torch.equal(runs[0][name], untouched[name]) for name in untouched)


@pytest.mark.parametrize("method", METHODS)
def test_each_method_trains_and_is_seeded(tiny_bert, method):
    runs = []
    for _ in range(2):
        classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
        material = TrainingMaterial(
            cases=small_material().cases, perturbed=small_material().perturbed, iid=IID
        )
        runs.append(weights(train_behaviour(classifier, material, FAST, method=method)))
    assert all(torch.equal(runs[0][name], runs[1][name]) for name in runs[0])
    untouched = weights(load_classifier(tiny_bert, labels=BINARY, train=True))
    assert any(not torch.equal(runs[0][name], untouched[name]) for name in untouched)


def test_lp_trains_only_the_head_and_unfreezes_afterwards(tiny_bert):
    classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
    before = weights(classifier)
    train_behaviour(classifier, small_material(), FAST, method="lp")
    after = weights(classifier)
    changed = {name for name in before if not torch.equal(before[name], after[name])}
    assert changed and all(name.startswith("classifier.") for name in changed)
    assert all(p.requires_grad for p in classifier.model.parameters())


def test_the_method_applies_to_the_second_step_only(tiny_bert):
    # LP in iid+t freezes the encoder throughout; in iid->t the vanilla i.i.d. step trains it.
    untouched = weights(load_classifier(tiny_bert, labels=BINARY, train=True))
    one_step = weights(
        train_configuration(
            tiny_bert,
            "iid+t",
            labels=BINARY,
            iid=IID,
            suite=small_material(),
            method="lp",
            config=FAST,
        )
    )
    two_steps = weights(
        train_configuration(
            tiny_bert,
            "iid->t",
            labels=BINARY,
            iid=IID,
            suite=small_material(),
            method="lp",
            config=FAST,
        )
    )
    encoder = [name for name in untouched if name.startswith("bert.")]
    assert all(torch.equal(one_step[name], untouched[name]) for name in encoder)
    assert any(not torch.equal(two_steps[name], untouched[name]) for name in encoder)


def test_dropout_method_sets_every_dropout_probability(tiny_bert):
    classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
    set_dropout(classifier.model, 0.3)
    dropouts = [m for m in classifier.model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(m.p == 0.3 for m in dropouts)
    assert classifier.model.config.hidden_dropout_prob == 0.3
    assert classifier.model.config.attention_probs_dropout_prob == 0.3


def test_group_dro_weights_shift_to_the_worst_group():
    dro = GroupDro(["a", "b", "c"], eta=0.5)
    losses = torch.tensor([2.0, 2.0, 0.5, 0.1])
    total = dro.loss(losses, ["a", "a", "b", "c"])
    assert dro.weights["a"] > dro.weights["b"] > dro.weights["c"]
    assert sum(dro.weights.values()) == pytest.approx(1.0)
    expected = dro.weights["a"] * 2.0 + dro.weights["b"] * 0.5 + dro.weights["c"] * 0.1
    assert float(total) == pytest.approx(expected, rel=1e-5)


def test_configurations_reject_missing_material_and_unknown_names(tiny_bert):
    with pytest.raises(TestAugError, match="needs suite training material"):
        train_configuration(tiny_bert, "iid+t", labels=BINARY, iid=IID)
    with pytest.raises(TestAugError, match=r"needs i\.i\.d\. examples"):
        train_configuration(tiny_bert, "iid->(iid+t)", labels=BINARY, suite=small_material())
    with pytest.raises(TestAugError, match="unknown configuration"):
        train_configuration(tiny_bert, "t", labels=BINARY, iid=IID)  # type: ignore[arg-type]
    classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
    with pytest.raises(TestAugError, match="unknown method"):
        train_behaviour(classifier, small_material(), FAST, method="swa")  # type: ignore[arg-type]


def test_a_loaded_classifier_is_trained_in_place(tiny_bert):
    classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
    before = weights(classifier)
    out = train_configuration(classifier, "iid", labels=BINARY, iid=IID, config=FAST)
    assert out is classifier
    assert any(not torch.equal(before[n], p) for n, p in classifier.model.named_parameters())


def test_irm_penalty_is_the_mean_squared_gradient_of_each_environment_loss_at_scale_one():
    logits = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    targets = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5]])
    scale = torch.tensor(1.0, requires_grad=True)
    losses = -(targets * torch.log_softmax(logits * scale, dim=-1)).sum(dim=-1)
    penalty = irm_penalty(losses, ["a", "b", "b"], scale)
    expected = []
    for rows in ([0], [1, 2]):
        w = torch.tensor(1.0, requires_grad=True)
        loss = -(targets[rows] * torch.log_softmax(logits[rows] * w, dim=-1)).sum(dim=-1).mean()
        (g,) = torch.autograd.grad(loss, [w])
        expected.append(float(g) ** 2)
    assert penalty.item() == pytest.approx(sum(expected) / 2, rel=1e-5)
    # The uniform row is at a stationary point: alone, it costs nothing.
    alone = irm_penalty(losses[2:], ["c"], scale)
    assert alone.item() == pytest.approx(0.0, abs=1e-10)


def test_fish_moves_the_weights_a_meta_step_towards_the_inner_copy(tiny_bert, monkeypatch):
    # With meta_lr = 1 (FISH_META_LR = lr * meta_steps) the update lands on the inner copy:
    # the result equals plain SGD steps on sampled environments, so the loss must fall.
    import testaug.fixing.behaviour.methods as methods

    config = FineTuneConfig(learning_rate=0.5, epochs=10, batch_size=4, seed=5)
    material = small_material()
    classifier = load_classifier(tiny_bert, labels=BINARY, train=True)
    before = predict_proba(classifier.model, classifier.tokenizer, case_inputs(material.cases[:4]))
    monkeypatch.setattr(methods, "FISH_META_LR", config.learning_rate * methods.FISH_META_STEPS)
    train_behaviour(classifier, material, config, method="fish")
    after = predict_proba(classifier.model, classifier.tokenizer, case_inputs(material.cases[:4]))
    wanted = np.array([1, 1, 1, 0])  # positive, positive, positive, negative
    assert after[np.arange(4), wanted].mean() > before[np.arange(4), wanted].mean()


def test_named_forms_override_a_perturbations_dirs_and_train(tiny_bert):
    base = small_material()
    intensified = appended(base.cases[:2], " great", Expectation.monotonic("positive", "up"))
    material = TrainingMaterial(
        cases=base.cases,
        perturbed=[*base.perturbed, *intensified],
        forms={"append": "not_less_confident"},
    )
    _, _, dirs = training_items(material, BINARY)
    assert {item.form for item in dirs} == {"not_less_confident"}
    tuned = train_configuration(
        tiny_bert, "iid+t", labels=BINARY, iid=IID, suite=material, config=FAST
    )
    assert tuned.labels == BINARY
    three = ("negative", "neutral", "positive")
    sided = TrainingMaterial(perturbed=intensified, forms={"append": "not_more_negative"})
    with pytest.raises(TestAugError, match="needs a binary sentiment head"):
        training_items(sided, three)
