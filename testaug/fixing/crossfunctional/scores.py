"""BeLUGA's scores and their significance: pass rates (Eq. 7), the suite
score, s_iid, G (Eq. 8), the summaries over seeds, per-example hits, and the comparison of a
pair's scenario with the IID baseline."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import numpy as np

from testaug.core.errors import TestAugError
from testaug.core.records import label_options
from testaug.fixing.crossfunctional.records import (
    FAIL,
    PAIR_SCENARIOS,
    PASS,
    UNSCORED,
    Comparison,
    Item,
    PairSummary,
    ScenarioRun,
    ScenarioSummary,
    SettingScore,
    TrainingSetting,
)
from testaug.fixing.crossfunctional.splits import functionality_id
from testaug.fixing.finetune import LabelledInput
from testaug.fixing.patching.protocol import g_score, stat
from testaug.fixing.significance import (
    SEED,
    TRIALS,
    binomial_test_two_sided,
    randomization_test_g,
)


def passed(predicted: str, case: LabelledInput) -> bool:
    """Whether a prediction passes a case: it is one of the acceptable labels."""
    return predicted in label_options(case.label)


def pass_rates(items: Sequence[Item], passes: Sequence[bool | None]) -> dict[str, float]:
    """Eq. 7: the share of each functionality's tests that pass, keyed by functionality id;
    a test that cannot fail (None: a filtered DIR) does not count."""
    hits: dict[str, list[bool]] = {}
    for item, ok in zip(items, passes, strict=True):
        if ok is not None:
            hits.setdefault(functionality_id(item), []).append(ok)
    return {key: sum(flags) / len(flags) for key, flags in hits.items()}


def suite_score(rates: dict[str, float]) -> float:
    """The aggregate suite score: the arithmetic mean of the functionality pass rates."""
    if not rates:
        raise TestAugError("no functionality pass rates to aggregate")
    return statistics.fmean(rates.values())


def accuracy(examples: Sequence[LabelledInput], predicted: Sequence[str]) -> float:
    """s_iid: the share of i.i.d. examples predicted right (0 for none)."""
    if not examples:
        return 0.0
    return sum(passed(p, e) for p, e in zip(predicted, examples, strict=True)) / len(examples)


def encode_hits(test_ids: Sequence[str], found: dict[str, bool | None]) -> str:
    """Per-test outcomes in `test_ids` order: "1" pass, "0" fail, "-" not scored."""
    return "".join(
        PASS if found.get(key) is True else FAIL if found.get(key) is False else UNSCORED
        for key in test_ids
    )


def decode_hits(hits: str) -> np.ndarray:
    """`encode_hits`' string as floats: 1, 0, and NaN where not scored."""
    table = {PASS: 1.0, FAIL: 0.0, UNSCORED: np.nan}
    return np.array([table[c] for c in hits], dtype=float)


def summarize_scenario(runs: Sequence[ScenarioRun]) -> ScenarioSummary:
    """Mean and deviation over seeds of one scenario's scores."""
    keys = sorted({key for run in runs for key in run.pass_rates})
    return ScenarioSummary(
        scenario=runs[0].scenario,
        pass_rates={
            key: stat([run.pass_rates[key] for run in runs if key in run.pass_rates])
            for key in keys
        },
        suite_score=stat([run.suite_score for run in runs]),
        iid_score=stat([run.iid_score for run in runs]),
        g=stat([run.g for run in runs]),
    )


def summarize_pair(runs: Sequence[ScenarioRun]) -> PairSummary:
    """A pair's scenarios over seeds, and per seed the mean G of its scenarios, over seeds."""
    by_scenario: dict[str, list[ScenarioRun]] = {}
    by_seed: dict[int, list[float]] = {}
    for run in runs:
        by_scenario.setdefault(run.scenario, []).append(run)
        by_seed.setdefault(run.seed, []).append(run.g)
    return PairSummary(
        configuration=runs[0].configuration,
        method=runs[0].method,
        scenarios={
            name: summarize_scenario(by_scenario[name])
            for name in PAIR_SCENARIOS
            if name in by_scenario
        },
        g_average=stat([statistics.fmean(values) for _, values in sorted(by_seed.items())]),
    )


def _mean_hits(runs: Sequence[ScenarioRun]) -> tuple[np.ndarray, np.ndarray]:
    """Suite and i.i.d. hits averaged over the runs (seeds): NaN where a run did not score."""
    with np.errstate(all="ignore"):
        suite = np.mean([decode_hits(run.hits) for run in runs], axis=0)
    iid = np.mean([np.asarray(run.iid_hits, dtype=float) for run in runs], axis=0)
    return suite, iid


def compare_to_baseline(
    runs: Sequence[ScenarioRun],
    baseline: Sequence[ScenarioRun],
    test_functionalities: Sequence[str],
    *,
    trials: int = TRIALS,
    seed: int = SEED,
) -> Comparison | None:
    """The significance test for one scenario of a pair against the IID baseline (the standard runs), both
    averaged over seeds per example: G by paired randomization over the tests both scored
    and the i.i.d. examples (s_T as the mean of functionality pass rates), the i.i.d.
    accuracy by a two-tailed binomial test against the baseline's accuracy. None when a
    side kept no hits (a report written before hits were kept)."""
    if not runs or not baseline or any(not r.hits or not r.iid_hits for r in [*runs, *baseline]):
        return None
    suite_a, iid_a = _mean_hits(runs)
    suite_b, iid_b = _mean_hits(baseline)
    if suite_a.shape != suite_b.shape or iid_a.shape != iid_b.shape:
        raise TestAugError("a scenario and the baseline scored different tests")
    keep = ~(np.isnan(suite_a) | np.isnan(suite_b))
    if not keep.any() or not iid_a.size:
        return None
    groups = np.asarray(test_functionalities)[keep]
    names, index, sizes = np.unique(groups, return_inverse=True, return_counts=True)
    weights = 1 / (sizes[index] * len(names))
    a, b = suite_a[keep], suite_b[keep]
    s_a, s_b = float(weights @ a), float(weights @ b)
    iid_score_a, iid_score_b = float(iid_a.mean()), float(iid_b.mean())
    correct = round(float(iid_a.sum()))
    return Comparison(
        g_difference=g_score(s_a, iid_score_a) - g_score(s_b, iid_score_b),
        g_p=randomization_test_g(a, b, iid_a, iid_b, weights=weights, trials=trials, seed=seed),
        iid_difference=iid_score_a - iid_score_b,
        iid_p=binomial_test_two_sided(correct, iid_a.size, min(1.0, max(0.0, iid_score_b))),
    )


def select_setting(scores: Sequence[SettingScore]) -> TrainingSetting:
    """The setting with the best T_val score (the first in grid order on a tie)."""
    if not scores:
        raise TestAugError("no settings to select from")
    best = max(range(len(scores)), key=lambda i: (scores[i].val_score, -i))
    return scores[best].setting
