"""BeLUGA's cross-functional analysis keeps per-example hits, compares each pair with the IID
baseline (BL-13), and selects the suite step's setting on T_val (BL-12): constructed models."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.fixing.crossfunctional.analysis import (
    TrainingRequest,
    TrainingSetting,
    read_report,
    run_crossfunctional,
    write_report,
)
from testaug.fixing.crossfunctional.scores import decode_hits
from testaug.fixing.crossfunctional.splits import suite_split
from testaug.fixing.patching.protocol import IidExample
from tests.fixing.test_crossfunctional import IID, Learner, suite

NOUNS = tuple(f"thing{i}" for i in range(24))
IID_MANY = [IidExample(text=f"{word} {i}", label=label) for i in range(20) for word, label in (("love", "positive"), ("hate", "negative"))]  # fmt: skip


def big_suite() -> list[TestCase]:
    """The five constructed functionalities with 24 cases each."""
    return suite(NOUNS)


class MethodLearner(Learner):
    """The constructed learner (the IID configuration learns no suite case, as the behaviour
    trainer); with the method "forget" it knows nothing and says "negative" to every suite
    case and every i.i.d. example (clearly worse than the IID baseline)."""

    def train(self, material: TrainingRequest, seed: int):
        known, mixed, s = super().train(material, seed)
        model = (set() if material.configuration == "IID" else known), mixed, s
        return ("forget", model) if material.method == "forget" else model

    @staticmethod
    def predict(model, inputs: Sequence) -> list[str]:
        if model[0] == "forget":
            return ["negative"] * len(inputs)
        return Learner.predict(model, inputs)


@pytest.fixture(scope="module")
def compared():
    learner = MethodLearner()
    report = run_crossfunctional(
        big_suite(),
        iid_train=IID_MANY,
        iid_test=IID_MANY,
        pairs=[("IID->T", "vanilla"), ("IID", "vanilla"), ("IID->T", "forget")],
        train=learner.train,
        predict=learner.predict,
        seeds=(1, 2),
        scenarios=("seen", "func"),
        significance_trials=2000,
    )
    return report


def test_every_run_keeps_its_per_test_and_per_example_hits(compared):
    report = compared
    assert len(report.test_ids) == len(report.test_functionalities) > 0
    for run in report.runs:
        hits = decode_hits(run.hits)
        assert hits.shape == (len(report.test_ids),)
        # the hits give back the run's pass rates (Eq. 7) and its i.i.d. score
        by_functionality: dict[str, list[float]] = {}
        for value, key in zip(hits, report.test_functionalities, strict=True):
            by_functionality.setdefault(key, []).append(value)
        assert {k: float(np.mean(v)) for k, v in by_functionality.items()} == pytest.approx(
            run.pass_rates
        )
        assert float(np.mean(run.iid_hits)) == pytest.approx(run.iid_score)


def test_a_clearly_better_pair_is_marked_above_the_baseline_and_an_equal_one_is_not(compared):
    seq, same, forget = compared.pairs
    seen = seq.scenarios["seen"].versus_baseline
    assert seen is not None
    # IID->T knows every functionality seen (s_T 1 vs the baseline's 3/5)
    assert seen.g_difference > 0 and seen.g_p < 0.01 and seen.g_mark == "above"
    # same i.i.d. predictions as the baseline: no i.i.d. difference to mark
    assert seen.iid_difference == 0 and seen.iid_mark == ""
    # the IID configuration with vanilla is the baseline model itself: nothing to mark
    for name in ("seen", "func"):
        equal = same.scenarios[name].versus_baseline
        assert equal is not None
        assert equal.g_difference == 0 and equal.g_p == 1.0 and equal.g_mark == ""
    worse = forget.scenarios["seen"].versus_baseline
    assert worse.g_mark == "below" and worse.iid_mark == "below"


def test_unseen_functionalities_give_no_significant_gain_in_the_constructed_case(compared):
    # func-out: every functionality is unseen, so IID->T predicts as the baseline does
    func = compared.pairs[0].scenarios["func"].versus_baseline
    assert func.g_difference == pytest.approx(0) and func.g_mark == ""


def test_comparisons_survive_the_json_round_trip(compared, tmp_path):
    path = tmp_path / "crossfunctional.json"
    write_report(path, compared)
    again = read_report(path)
    assert again == compared
    assert again.pairs[0].scenarios["seen"].versus_baseline.g_mark == "above"


class PaceLearner(Learner):
    """Learns the trained functionalities only at a learning rate of 1e-3 or more."""

    def train(self, material: TrainingRequest, seed: int):
        known, mixed, s = super().train(material, seed)
        fast = material.setting is not None and material.setting.learning_rate >= 1e-3
        return (known if fast else set()), mixed, s


def test_selection_on_t_val_picks_the_setting_that_learns_and_uses_it_everywhere():
    learner = PaceLearner()
    grid = [
        TrainingSetting(learning_rate=1e-5, epochs=1, batch_size=16),
        TrainingSetting(learning_rate=1e-3, epochs=1, batch_size=16),
    ]
    report = run_crossfunctional(
        big_suite(),
        iid_train=IID,
        iid_test=IID,
        pairs=[("IID->T", "vanilla")],
        train=learner.train,
        predict=learner.predict,
        scenarios=("seen",),
        grid=grid,
        significance_trials=200,
    )
    selection = report.pairs[0].selection
    assert selection is not None
    assert selection.chosen == grid[1]
    slow, fast = (score.val_score for score in selection.scores)
    assert fast == 1.0 and slow < fast
    # selected on T_val: the grid's models never see T_test, and T_val is disjoint from both
    split = suite_split(big_suite(), seed=123, test_fraction=0.5, val_fraction=0.5)
    assert split.val and not split.val & (split.train | split.test)
    assert {f.n_val for f in report.functionalities} != {0}
    assert set(report.test_ids) == split.test
    # the pair's scenario runs train with the chosen setting
    runs = [m for m in learner.calls if m.configuration == "IID->T" and m.scenario == "seen"]
    assert [m.setting for m in runs] == [*grid, grid[1]]
    assert report.pairs[0].scenarios["seen"].pass_rates["neg"].mean == 1.0


def test_a_split_without_validation_keeps_t_train_and_t_test_as_before():
    plain = suite_split(big_suite(), seed=123, test_fraction=0.5)
    with_val = suite_split(big_suite(), seed=123, test_fraction=0.5, val_fraction=0.5)
    assert not plain.val
    assert with_val.train == plain.train
    assert with_val.val | with_val.test == plain.test


def test_selection_needs_validation_tests():
    with pytest.raises(TestAugError, match="T_val"):
        run_crossfunctional(
            big_suite(),
            iid_train=IID,
            iid_test=IID,
            pairs=[("IID->T", "vanilla")],
            train=PaceLearner().train,
            predict=Learner.predict,
            grid=[TrainingSetting(learning_rate=1e-3, epochs=1, batch_size=16)],
            val_fraction=0.0,
        )
