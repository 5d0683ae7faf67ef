"""The cross-functional analysis refuses a suite split with an empty side instead of training
on nothing and reporting a G score of 100."""

from __future__ import annotations

import pytest

from testaug.core.errors import TestAugError
from testaug.fixing.crossfunctional.analysis import run_crossfunctional
from tests.fixing.test_crossfunctional import IID, Learner, suite


@pytest.mark.parametrize("test_fraction", [0.5, 0.0, 1.0])
def test_one_case_or_an_extreme_fraction_is_an_error_naming_the_empty_side(test_fraction):
    cases = suite(("food",))[:1] if test_fraction == 0.5 else suite()
    learner = Learner()
    with pytest.raises(TestAugError, match=r"leaves T_(train|test)( and T_test)? empty"):
        run_crossfunctional(
            cases,
            iid_train=IID,
            iid_test=IID,
            pairs=[("IID->T", "vanilla")],
            train=learner.train,
            predict=learner.predict,
            test_fraction=test_fraction,
            significance_trials=10,
        )
    assert learner.calls == []  # nothing was trained
