"""BeLUGA's cross-functional analysis: partitions, Eq. 7 and Eq. 8 on constructed models,
and the whole analysis on a tiny BERT with the behaviour trainer."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.crossfunctional.analysis import (
    CrossFunctionalReport,
    TrainingRequest,
    behaviour_trainer,
    classifier_check,
    classifier_predict,
    read_report,
    run_crossfunctional,
    write_report,
)
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.patching.protocol import IidExample

NOUNS = ("food", "seat", "crew", "service", "flight", "label")
# (capability, description, test type, template, label)
FUNCTIONALITIES = (
    ("Vocabulary", "pos", "MFT", "the {noun} was good .", "positive"),
    ("Vocabulary", "neg", "MFT", "the {noun} was bad .", "negative"),
    ("Negation", "not-pos", "MFT", "the {noun} was not good .", "negative"),
    ("Negation", "not-neg", "DIR", "the {noun} was not bad .", "positive"),
    ("Robustness", "typo", "INV", "the {noun} was grat !", "positive"),
)


def suite(nouns: Sequence[str] = NOUNS) -> list[TestCase]:
    """The constructed functionalities, one case per noun each."""
    return [
        TestCase(
            task="sentiment",
            capability=capability,
            description_id=description,
            description=f"{description} cases",
            test_type=test_type,
            text=template.format(noun=noun),
            label=label,
        )
        for capability, description, test_type, template, label in FUNCTIONALITIES
        for noun in nouns
    ]


IID = [
    IidExample(text="i love it", label="positive"),
    IidExample(text="i hate it", label="negative"),
    IidExample(text="great crew", label="positive"),
    IidExample(text="awful seat", label="negative"),
]


class Learner:
    """A constructed model: it knows the labels of the functionalities it was trained on
    and says "positive" to everything else; on the i.i.d. set it is wrong on one example
    of four ("awful seat") unless trained with i.i.d. data mixed in."""

    def __init__(self) -> None:
        self.calls: list[TrainingRequest] = []

    def train(self, material: TrainingRequest, seed: int) -> tuple[set[str], bool, int]:
        self.calls.append(material)
        mixed = material.configuration in ("IID+T", "IID->(IID+T)")
        return {c.description_id for c in material.cases}, mixed, seed

    @staticmethod
    def predict(model: tuple[set[str], bool, int], inputs: Sequence) -> list[str]:
        known, mixed, _ = model
        out = []
        for item in inputs:
            if isinstance(item, IidExample):
                right = mixed or item.text != "awful seat"
                out.append(item.label if right else "positive")
            else:
                out.append(item.label if item.description_id in known else "positive")
        return out


@pytest.fixture(scope="module")
def constructed() -> tuple[CrossFunctionalReport, Learner]:
    learner = Learner()
    report = run_crossfunctional(
        suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla"), ("IID+T", "l2")],
        train=learner.train,
        predict=learner.predict,
        seeds=(1, 2),
    )
    return report, learner


def test_each_partition_gives_every_functionality_exactly_one_unseen_rate(constructed):
    report, learner = constructed
    ids = {f.id for f in report.functionalities}
    for run in report.runs:
        assert set(run.pass_rates) == ids
    for scenario, subsets in (("func", 5), ("class", 3), ("type", 3)):
        materials = [
            m for m in learner.calls if m.scenario == scenario and m.configuration == "IID->T"
        ]
        assert len(materials) == 2 * subsets  # one model per subset and seed
        for material in materials[:subsets]:
            # the left-out subset is absent from training, everything else is present
            trained = {c.description_id for c in material.cases}
            left_out = ids - trained
            assert left_out
            key = {"func": "description_id", "class": "capability", "type": "test_type"}
            for case in suite():
                if case.description_id in left_out:
                    assert getattr(case, key[scenario]) == material.held_out


def test_unseen_functionalities_fall_to_the_default_label_and_seen_ones_pass(constructed):
    report, _ = constructed
    positives = {"pos", "not-neg", "typo"}
    pair = report.pairs[0]
    for key, rate in pair.scenarios["seen"].pass_rates.items():
        assert rate.mean == 1.0, key
    for scenario in ("func", "class", "type"):
        for key, rate in pair.scenarios[scenario].pass_rates.items():
            assert rate.mean == (1.0 if key in positives else 0.0)
    assert report.standard is not None
    assert report.standard.suite_score.mean == pytest.approx(3 / 5)


def test_g_scores_are_the_harmonic_mean_of_eq_8(constructed):
    report, _ = constructed
    seq, mixed = report.pairs
    # IID->T: s_iid = 3/4; seen s_T = 1; unseen s_T = 3/5
    assert seq.scenarios["seen"].g.mean == pytest.approx(2 * 1 * 0.75 / 1.75)
    assert seq.scenarios["func"].g.mean == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    # IID+T keeps the i.i.d. data: s_iid = 1
    assert mixed.scenarios["type"].g.mean == pytest.approx(2 * 0.6 / 1.6)
    assert report.standard.g.mean == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    expected_avg = statistics.fmean(s.g.mean for s in seq.scenarios.values())
    assert seq.g_average.mean == pytest.approx(expected_avg)
    assert seq.g_average.std == 0.0 and seq.g_average.n == 2
    assert [row for row, _ in report.g_table()] == [
        "IID (standard)",
        "IID->T / vanilla",
        "IID+T / l2",
    ]


def test_standard_and_iid_only_configurations_train_on_no_suite_case(constructed):
    _, learner = constructed
    standard = [m for m in learner.calls if m.scenario == "standard"]
    assert len(standard) == 2
    assert all(m.configuration == "IID" and not m.cases for m in standard)
    assert all(m.iid == tuple(IID) for m in learner.calls)


def test_report_round_trips_through_json(constructed, tmp_path):
    report, _ = constructed
    path = tmp_path / "crossfunctional.json"
    write_report(path, report)
    assert read_report(path) == report


def test_an_unknown_configuration_is_an_error():
    learner = Learner()
    with pytest.raises(TestAugError, match="unknown configuration"):
        run_crossfunctional(
            suite(),
            iid_train=IID,
            iid_test=IID,
            pairs=[("T", "vanilla")],
            train=learner.train,
            predict=learner.predict,
        )


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Iterator[Path]:
    """A tiny BERT, used with one torch thread (a hidden-size-16 model gains nothing from
    more, and on a busy two-core machine the threads' waiting costs more)."""
    torch = pytest.importorskip("torch")
    from tests.models_fixture import build_tiny_classifier

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield build_tiny_classifier(tmp_path_factory.mktemp("tiny-bert"), 2)
    finally:
        torch.set_num_threads(threads)


def test_the_analysis_runs_on_a_tiny_bert_with_the_behaviour_trainer(tiny_bert):
    config = FineTuneConfig(learning_rate=3e-3, epochs=1, batch_size=8)
    labels = ("negative", "positive")
    train = behaviour_trainer(str(tiny_bert), labels=labels, config=config)
    report = run_crossfunctional(
        suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->(IID+T)", "vanilla")],
        train=train,
        predict=classifier_predict(config),
        seeds=(7,),
        scenarios=("seen", "type"),
        labels=labels,
        base_model=str(tiny_bert),
    )
    pair = report.pairs[0]
    assert set(pair.scenarios) == {"seen", "type"}
    for summary in pair.scenarios.values():
        assert set(summary.pass_rates) == {f.id for f in report.functionalities}
        assert 0 <= summary.g.mean <= 1
    with pytest.raises(TestAugError, match="unknown method"):
        train(TrainingRequest("IID->T", "sgd", (), tuple(IID), "seen"), 7)


def perturbed_suite() -> list[PerturbedCase]:
    """An INV test (typo) of every "pos" case and a DIR test (more positive) of every "neg" one."""
    out = []
    for case in suite():
        if case.description_id == "pos":
            text = case.text.replace("good", "god")
            out.append(
                PerturbedCase(
                    original=case,
                    text=text,
                    perturbation="typos",
                    test_type="INV",
                    expectation=Expectation.inv(),
                )
            )
        if case.description_id == "neg":
            out.append(
                PerturbedCase(
                    original=case,
                    text=case.text + " !",
                    perturbation="add_exclamation",
                    test_type="DIR",
                    expectation=Expectation.monotonic("positive", "up"),
                )
            )
    return out


def test_perturbation_tests_are_functionalities_of_their_own_type_in_every_partition():
    learner = Learner()
    trained_perturbed: list[TrainingRequest] = []

    def train(material: TrainingRequest, seed: int):
        trained_perturbed.append(material)
        return learner.train(material, seed)

    def check(model, tests):  # passes an INV test only when its functionality was trained
        return [("typos" in model[0]) if t.test_type == "INV" else None for t in tests]

    original = learner.train

    def train_with_perturbed(material, seed):
        known, mixed, s = original(material, seed)
        return known | {t.perturbation for t in material.perturbed}, mixed, s

    learner.train = train_with_perturbed  # type: ignore[method-assign]
    report = run_crossfunctional(
        suite(),
        perturbed=perturbed_suite(),
        check=check,
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla")],
        train=train,
        predict=learner.predict,
        standard=False,
    )
    by_id = {f.id: f for f in report.functionalities}
    assert by_id["pos|INV|typos"].test_type == "INV"
    assert by_id["neg|DIR|add_exclamation"].test_type == "DIR"
    pair = report.pairs[0]
    # the DIR tests cannot fail (None): no rate; the INV one passes when seen only
    for name in ("seen", "func", "class", "type"):
        rates = pair.scenarios[name].pass_rates
        assert "neg|DIR|add_exclamation" not in rates
        assert rates["pos|INV|typos"].mean == (1.0 if name == "seen" else 0.0)
    type_models = [m for m in trained_perturbed if m.scenario == "type"]
    assert sorted(m.held_out for m in type_models) == ["DIR", "INV", "MFT"]
    for material in type_models:
        kinds = {t.test_type for t in material.perturbed} | {c.test_type for c in material.cases}
        assert material.held_out not in kinds


def test_the_tiny_bert_is_checked_on_perturbation_tests(tiny_bert):
    config = FineTuneConfig(learning_rate=3e-3, epochs=1, batch_size=8)
    labels = ("negative", "positive")
    report = run_crossfunctional(
        suite(),
        perturbed=perturbed_suite(),
        check=classifier_check(config),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID+T", "vanilla")],
        train=behaviour_trainer(str(tiny_bert), labels=labels, config=config),
        predict=classifier_predict(config),
        scenarios=("type",),
        standard=False,
    )
    rates = report.pairs[0].scenarios["type"].pass_rates
    assert "pos|INV|typos" in rates and 0 <= rates["pos|INV|typos"].mean <= 1
