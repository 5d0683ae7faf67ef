"""BeLUGA's cross-functional analysis for configuration-method pairs.

The suite T is split once (seeded, stratified by functionality; suite cases exactly as
`splits.random_split_ids`) into T_train and T_test (and, with hyper-parameter selection,
half of the held-out part into T_val). For one configuration-method pair and one seed:

- seen: train on all of T_train, pass rates on T_test;
- func, class, type: for each subset U_i of a partition of the functionalities (one
  description, one capability, one test type), train on T_train \\ U_i and take the pass
  rates on T_test ∩ U_i; the partition gives every functionality exactly one unseen rate.
  In the IID+T and IID->(IID+T) configurations the i.i.d. training data stays in.
- standard: the IID model (trained on the i.i.d. data only), pass rates on T_test.

A functionality is a suite description; with perturbation tests, each perturbation of a
description is one more (`desc|INV|typos`), of that test type. Its pass rate (Eq. 7) is the
share of its tests that pass: a suite case when the prediction is one of its acceptable
labels, a perturbation test by CheckList's expectation (one that cannot fail does not
count). The suite score s_T is the mean of the functionality pass rates; s_iid is accuracy
on the i.i.d. test set (for a leave-out scenario, the mean over its models);
G = 2·s_T·s_iid / (s_T + s_iid) (Eq. 8). Everything is a fraction in [0, 1]; every
aggregate is a mean and sample deviation over the seeds.

Every run keeps its per-example hits (each T_test test, each i.i.d. test example), so each
pair's scenario is compared with the IID baseline (G by paired randomization, s_iid
by a binomial test). With a grid of settings, each pair's suite step is first tuned on T_val
and the chosen setting is used in every scenario and seed.

Training is a parameter: `Train` maps the material of one training run (configuration,
method, cases, perturbation tests, i.i.d. examples, setting) and a seed to a model,
`Predict` gives a model's labels for inputs and `Check` its verdicts on perturbation tests,
so the analysis does not depend on how models are trained (`crossfunctional_trainer`'s
`behaviour_trainer` trains with `behaviour_training`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.crossfunctional.records import (
    CONFIGURATIONS,
    CROSSFUNCTIONAL_FILE,
    DEFAULT_SPLIT_SEED,
    PAIR_SCENARIOS,
    SCENARIOS,
    WITH_IID,
    Check,
    Comparison,
    CrossFunctionalReport,
    Functionality,
    Item,
    LeaveOutModel,
    PairSummary,
    Predict,
    Progress,
    Scenario,
    ScenarioRun,
    ScenarioSummary,
    Selection,
    SettingScore,
    Train,
    TrainingRequest,
    TrainingSetting,
    read_report,
    write_report,
)
from testaug.fixing.crossfunctional.scores import (
    accuracy,
    compare_to_baseline,
    encode_hits,
    pass_rates,
    passed,
    select_setting,
    suite_score,
    summarize_pair,
    summarize_scenario,
)
from testaug.fixing.crossfunctional.splits import (
    configuration_name,
    functionalities,
    functionality_id,
    held_out_value,
    iid_halves,
    partition,
    sample_per_functionality,
    suite_split,
)
from testaug.fixing.crossfunctional.trainer import (
    Timings,
    behaviour_trainer,
    classifier_check,
    classifier_predict,
)
from testaug.fixing.patching.protocol import IidExample, g_score
from testaug.fixing.splits import dedupe

__all__ = [
    "CONFIGURATIONS",
    "CROSSFUNCTIONAL_FILE",
    "DEFAULT_SPLIT_SEED",
    "PAIR_SCENARIOS",
    "SCENARIOS",
    "WITH_IID",
    "Comparison",
    "CrossFunctionalReport",
    "Functionality",
    "PairSummary",
    "Scenario",
    "ScenarioRun",
    "ScenarioSummary",
    "Selection",
    "Timings",
    "TrainingRequest",
    "TrainingSetting",
    "behaviour_trainer",
    "classifier_check",
    "classifier_predict",
    "configuration_name",
    "functionalities",
    "iid_halves",
    "read_report",
    "run_crossfunctional",
    "sample_per_functionality",
    "select_setting",
    "write_report",
]


@dataclass
class _Analysis:
    """What every run of one analysis shares."""

    items: list[Item]
    iid_train: tuple[IidExample, ...]
    iid_test: tuple[IidExample, ...]
    train: Train
    predict: Predict
    check: Check | None
    split_seed: int
    test_fraction: float
    val_fraction: float
    progress: Progress

    def __post_init__(self) -> None:
        split = suite_split(
            self.items,
            seed=self.split_seed,
            test_fraction=self.test_fraction,
            val_fraction=self.val_fraction,
        )
        self.train_ids, self.val_ids, self.test_ids = split.train, split.val, split.test
        empty = [
            name for name, ids in (("T_train", split.train), ("T_test", split.test)) if not ids
        ]
        if empty:
            raise TestAugError(
                f"the suite split of {len(self.items)} tests leaves {' and '.join(empty)} "
                f"empty (test fraction {self.test_fraction:g}): the analysis needs tests on "
                "both sides; give more cases (at least two of a description) or another "
                "test fraction"
            )
        self.test_order = [item.id for item in self.items if item.id in self.test_ids]
        self.test_groups = [functionality_id(i) for i in self.items if i.id in self.test_ids]

    def split(self, scenario: Scenario, held_out: str | None) -> tuple[list[Item], list[Item]]:
        """T_train (\\ U_i) and T_test (∩ U_i) of one model of a scenario."""

        def inside(item: Item) -> bool:
            return held_out is not None and held_out_value(item, scenario) == held_out

        train = [i for i in self.items if i.id in self.train_ids and not inside(i)]
        test = [i for i in self.items if i.id in self.test_ids and (held_out is None or inside(i))]
        return train, test

    def passes(self, model: Any, test: Sequence[Item]) -> list[bool | None]:
        """Whether the model passes each test (None: cannot fail), in order."""
        cases = [item for item in test if isinstance(item, TestCase)]
        perturbed = [item for item in test if isinstance(item, PerturbedCase)]
        found: dict[str, bool | None] = {}
        if cases:
            labels = self.predict(model, cases)
            found.update((c.id, passed(p, c)) for c, p in zip(cases, labels, strict=True))
        if perturbed:
            if self.check is None:
                raise TestAugError("perturbation tests need a check function")
            found.update(zip((p.id for p in perturbed), self.check(model, perturbed), strict=True))
        return [found[item.id] for item in test]

    def request(
        self,
        configuration: str,
        method: str,
        scenario: Scenario,
        train: Sequence[Item],
        held_out: str | None = None,
        setting: TrainingSetting | None = None,
    ) -> TrainingRequest:
        """The material of one training run."""
        return TrainingRequest(
            configuration,
            method,
            tuple(i for i in train if isinstance(i, TestCase)),
            self.iid_train,
            scenario,
            held_out,
            tuple(i for i in train if isinstance(i, PerturbedCase)),
            setting,
        )

    def run(
        self,
        configuration: str,
        method: str,
        scenario: Scenario,
        seed: int,
        setting: TrainingSetting | None = None,
    ) -> ScenarioRun:
        """Train the scenario's models (one per U_i) and score them on their test cases."""
        rates: dict[str, float] = {}
        models: list[LeaveOutModel] = []
        found: dict[str, bool | None] = {}
        iid_right = [0] * len(self.iid_test)
        for held_out in partition(self.items, scenario):
            train, test = self.split(scenario, held_out)
            if not test:
                continue  # a lone case that fell in train: no unseen rate to give
            if scenario == "standard":
                train = []
            where = f"{configuration} / {method} {scenario} {held_out or 'all'} seed {seed}"
            self.progress(f"{where}: training on {len(train)} tests")
            material = self.request(configuration, method, scenario, train, held_out, setting)
            model = self.train(material, seed)
            outcomes = self.passes(model, test)
            found.update(zip((item.id for item in test), outcomes, strict=True))
            scored = pass_rates(test, outcomes)
            overlap = set(scored) & set(rates)
            if overlap:
                raise TestAugError(f"functionality {sorted(overlap)[0]!r} scored twice")
            rates.update(scored)
            predicted = self.predict(model, self.iid_test)
            for index, (label, example) in enumerate(zip(predicted, self.iid_test, strict=True)):
                iid_right[index] += passed(label, example)
            iid = accuracy(self.iid_test, predicted)
            models.append(LeaveOutModel(held_out=held_out, n_train=len(train), iid_score=iid))
        s_t = suite_score(rates)
        s_iid = statistics.fmean(m.iid_score for m in models)
        return ScenarioRun(
            configuration=configuration,
            method=method,
            scenario=scenario,
            seed=seed,
            pass_rates=dict(sorted(rates.items())),
            suite_score=s_t,
            iid_score=s_iid,
            g=g_score(s_t, s_iid),
            models=tuple(models),
            hits=encode_hits(self.test_order, found),
            iid_hits=tuple(round(right / len(models), 6) for right in iid_right),
        )

    def select(
        self, configuration: str, method: str, grid: Sequence[TrainingSetting], seed: int
    ) -> Selection:
        """train on all of T_train with each setting, keep the best suite score on T_val."""
        train = [i for i in self.items if i.id in self.train_ids]
        val = [i for i in self.items if i.id in self.val_ids]
        if not val:
            raise TestAugError("hyper-parameter selection needs T_val: no validation tests")
        scores: list[SettingScore] = []
        for setting in grid:
            self.progress(f"{configuration} / {method} selection: {setting.name}")
            material = self.request(configuration, method, "seen", train, setting=setting)
            model = self.train(material, seed)
            score = suite_score(pass_rates(val, self.passes(model, val)))
            scores.append(SettingScore(setting=setting, val_score=score))
        return Selection(chosen=select_setting(scores), scores=tuple(scores))


def run_crossfunctional(
    cases: Sequence[TestCase],
    *,
    iid_train: Sequence[IidExample],
    iid_test: Sequence[IidExample],
    pairs: Sequence[tuple[str, str]],
    train: Train,
    predict: Predict,
    perturbed: Sequence[PerturbedCase] = (),
    check: Check | None = None,
    base_model: str = "",
    labels: Sequence[str] = (),
    seeds: Sequence[int] = (42,),
    scenarios: Sequence[Scenario] = PAIR_SCENARIOS,
    standard: bool = True,
    split_seed: int = DEFAULT_SPLIT_SEED,
    test_fraction: float = 0.5,
    grid: Sequence[TrainingSetting] = (),
    val_fraction: float | None = None,
    significance_trials: int = 10_000,
    on_progress: Progress | None = None,
) -> CrossFunctionalReport:
    """BeLUGA's cross-functional analysis of configuration-method pairs, over seeds.

    Each pair is evaluated in `scenarios` (seen, func, class, type); with `standard` the
    IID model (configuration "IID", method "vanilla") gives the standard evaluation once
    per seed, and each pair's scenarios are compared with it (by paired randomization,
    `significance_trials` randomization trials). `train(material, seed)` returns a model
    and `predict(model, inputs)` its labels; `perturbed` adds INV and DIR tests (a run's
    perturbed.jsonl), scored by `check(model, tests)` (each perturbation of a description
    is one functionality). The suite split is the same for every pair and seed
    (`split_seed`). With a `grid` of settings, `val_fraction` (default 0.5, BeLUGA's
    50/25/25) of the held-out tests form T_val, and each pair other than IID trains its
    suite step with the setting that scores best on T_val (first seed, seen training set).
    """
    if not seeds:
        raise TestAugError("the cross-functional analysis needs at least one seed")
    if not iid_test:
        raise TestAugError("the cross-functional analysis needs i.i.d. test examples (s_iid)")
    unique: list[Item] = [*dedupe(cases), *{p.id: p for p in perturbed}.values()]
    if not unique:
        raise TestAugError("no suite cases to analyse")
    if perturbed and check is None:
        raise TestAugError("perturbation tests need a check function")
    pairs = [(configuration_name(configuration), method) for configuration, method in pairs]
    for scenario in scenarios:
        if scenario not in PAIR_SCENARIOS:
            raise TestAugError(f"unknown scenario {scenario!r}: {', '.join(PAIR_SCENARIOS)}")
    validation = (0.5 if val_fraction is None else val_fraction) if grid else 0.0
    analysis = _Analysis(
        unique,
        tuple(iid_train),
        tuple(iid_test),
        train,
        predict,
        check,
        split_seed,
        test_fraction,
        validation,
        on_progress or (lambda message: None),
    )
    runs: list[ScenarioRun] = []
    standard_runs = (
        [analysis.run("IID", "vanilla", "standard", s) for s in seeds] if standard else []
    )
    runs += standard_runs
    summaries: list[PairSummary] = []
    for configuration, method in pairs:
        selection = (
            analysis.select(configuration, method, grid, seeds[0])
            if grid and configuration != "IID"
            else None
        )
        setting = selection.chosen if selection is not None else None
        pair_runs = [
            analysis.run(configuration, method, scenario, seed, setting)
            for seed in seeds
            for scenario in scenarios
        ]
        runs += pair_runs
        summary = summarize_pair(pair_runs)
        compared = {
            name: scenario.model_copy(
                update={
                    "versus_baseline": compare_to_baseline(
                        [r for r in pair_runs if r.scenario == name],
                        standard_runs,
                        analysis.test_groups,
                        trials=significance_trials,
                    )
                }
            )
            for name, scenario in summary.scenarios.items()
        }
        summaries.append(summary.model_copy(update={"scenarios": compared, "selection": selection}))
    return CrossFunctionalReport(
        base_model=base_model,
        labels=tuple(labels),
        seeds=tuple(seeds),
        split_seed=split_seed,
        test_fraction=test_fraction,
        n_cases=len(unique),
        n_iid_train=len(iid_train),
        n_iid_test=len(iid_test),
        functionalities=functionalities(
            unique, split_seed=split_seed, test_fraction=test_fraction, val_fraction=validation
        ),
        standard=summarize_scenario(standard_runs) if standard_runs else None,
        pairs=tuple(summaries),
        runs=tuple(runs),
        test_ids=tuple(analysis.test_order),
        test_functionalities=tuple(analysis.test_groups),
        val_fraction=validation,
        significance_trials=significance_trials,
    )
