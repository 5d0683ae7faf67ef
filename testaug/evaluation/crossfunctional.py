"""BeLUGA's cross-functional analysis (BL-9, BL-10) for configuration-method pairs.

The suite T is split once (seeded, stratified by functionality; suite cases exactly as
`splits.random_split_ids`) into T_train and T_test. For one configuration-method pair and one training seed:

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
count). The suite score s_T is the mean of the functionality pass rates; s_iid is accuracy on the i.i.d. test set (for a leave-out scenario, the mean over
its models); G = 2·s_T·s_iid / (s_T + s_iid) (Eq. 8). Everything is a fraction in [0, 1];
every aggregate is a mean and sample deviation over the seeds.

Training is a parameter: `Train` maps the material of one training run (configuration,
method, cases, perturbation tests, i.i.d. examples) and a seed to a model, `Predict`
gives a model's labels for inputs and `Check` its verdicts on perturbation tests, so the
analysis does not depend on how models are trained (`behaviour_trainer` trains with
`behaviour_training`).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from testaug.core.errors import TestAugError
from testaug.core.jsonl import read_json
from testaug.core.records import Record, TestCase, TestType, label_options
from testaug.core.runs import write_json
from testaug.evaluation.finetune import (
    Classifier,
    FineTuneConfig,
    LabelledInput,
    load_classifier,
    predict_labels,
    predict_proba,
)
from testaug.evaluation.patching import IidExample, g_score, stat
from testaug.evaluation.patching_report import Stat
from testaug.evaluation.perturbed_cases import PerturbedCase
from testaug.evaluation.splits import _test_count, dedupe, random_split_ids

Scenario = Literal["standard", "seen", "func", "class", "type"]
SCENARIOS: tuple[Scenario, ...] = ("standard", "seen", "func", "class", "type")
# The scenarios a configuration-method pair is evaluated in (standard is the IID model's).
PAIR_SCENARIOS: tuple[Scenario, ...] = ("seen", "func", "class", "type")
CONFIGURATIONS = ("IID", "IID->T", "IID+T", "IID->(IID+T)")
# Configurations whose suite training keeps the i.i.d. training data.
WITH_IID = frozenset({"IID+T", "IID->(IID+T)"})
DEFAULT_SPLIT_SEED = 123  # BeLUGA's random_state for the suite split
CROSSFUNCTIONAL_FILE = "crossfunctional.json"


@dataclass(frozen=True)
class TrainingRequest:
    """What one training run gets: the configuration and method, the suite cases it may
    learn from (T_train, or T_train \\ U_i) and the i.i.d. training examples (D_train).

    `cases` is empty for the IID configuration. `iid` is always D_train: a multi-step
    configuration trains on it first; IID+T and IID->(IID+T) also mix it with the cases.
    """

    configuration: str
    method: str
    cases: tuple[TestCase, ...]
    iid: tuple[IidExample, ...]
    scenario: Scenario
    held_out: str | None = None
    perturbed: tuple[PerturbedCase, ...] = ()  # INV and DIR tests (T_train's, \\ U_i)


Item = TestCase | PerturbedCase
Train = Callable[[TrainingRequest, int], Any]
Predict = Callable[[Any, Sequence[LabelledInput]], list[str]]
# Whether a model passes each perturbation test; None where the test cannot fail.
Check = Callable[[Any, Sequence[PerturbedCase]], list[bool | None]]
Progress = Callable[[str], None]


class Functionality(Record):
    """A functionality (a suite description), its class and test type, and its test size."""

    id: str
    description: str
    capability: str
    test_type: TestType
    n_train: int
    n_test: int


class LeaveOutModel(Record):
    """One model of a scenario: what it left out, its training size and i.i.d. accuracy."""

    held_out: str | None = None
    n_train: int
    iid_score: float


class ScenarioRun(Record):
    """One scenario of one pair under one seed: a pass rate per functionality (Eq. 7),
    the suite score, the i.i.d. score (mean over the scenario's models) and G (Eq. 8)."""

    configuration: str
    method: str
    scenario: Scenario
    seed: int
    pass_rates: dict[str, float]  # functionality id -> pass rate
    suite_score: float
    iid_score: float
    g: float
    models: tuple[LeaveOutModel, ...]


class ScenarioSummary(Record):
    """A scenario of one pair over seeds: mean and deviation of every score."""

    scenario: Scenario
    pass_rates: dict[str, Stat]
    suite_score: Stat
    iid_score: Stat
    g: Stat


class PairSummary(Record):
    """A configuration-method pair: its scenarios over seeds and the mean G of the four
    generalization scenarios (BeLUGA's Avg column, per pair)."""

    configuration: str
    method: str
    scenarios: dict[str, ScenarioSummary]  # seen, func, class, type
    g_average: Stat

    @property
    def name(self) -> str:
        """`configuration / method`, as the table and heat map label the pair."""
        return f"{self.configuration} / {self.method}"


class CrossFunctionalReport(Record):
    """Every run of the analysis and its summaries (crossfunctional.json holds it)."""

    base_model: str
    labels: tuple[str, ...]
    seeds: tuple[int, ...]
    split_seed: int
    test_fraction: float
    n_cases: int
    n_iid_train: int
    n_iid_test: int
    functionalities: tuple[Functionality, ...]
    standard: ScenarioSummary | None = None  # the IID model
    pairs: tuple[PairSummary, ...]
    runs: tuple[ScenarioRun, ...]

    def g_table(self) -> list[tuple[str, dict[str, Stat]]]:
        """Rows of the G table: the IID baseline (G_standard), then each pair's G per
        scenario and their average."""
        rows: list[tuple[str, dict[str, Stat]]] = []
        if self.standard is not None:
            rows.append(("IID (standard)", {"standard": self.standard.g}))
        for pair in self.pairs:
            cells = {name: summary.g for name, summary in pair.scenarios.items()}
            rows.append((pair.name, {**cells, "avg": pair.g_average}))
        return rows


def write_report(path: Path, report: CrossFunctionalReport) -> None:
    """Write the report as JSON (atomically)."""
    write_json(path, report.model_dump(mode="json"))


def read_report(path: Path) -> CrossFunctionalReport:
    """Read a report written by `write_report`."""
    return read_json(path, CrossFunctionalReport)


def passed(predicted: str, case: LabelledInput) -> bool:
    """Whether a prediction passes a case: it is one of the acceptable labels."""
    return predicted in label_options(case.label)


def functionality_id(item: Item) -> str:
    """The functionality a test belongs to: a suite case's description id; a perturbation
    test's description id, test type and perturbation (`desc|INV|typos`), so that each
    functionality has one test type as in BeLUGA."""
    if isinstance(item, PerturbedCase):
        return f"{item.description_id}|{item.test_type}|{item.perturbation}"
    return item.description_id


def functionality_name(item: Item) -> str:
    """A functionality's readable name: the description (with the perturbation test's
    type and perturbation)."""
    if isinstance(item, PerturbedCase):
        return f"{item.description} ({item.test_type}: {item.perturbation})"
    return item.description


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


def held_out_value(item: Item, scenario: Scenario) -> str:
    """The subset a leave-out scenario puts a test in: its functionality, class or type."""
    if scenario == "func":
        return functionality_id(item)
    if scenario == "class":
        return item.capability
    if scenario == "type":
        return item.test_type
    raise TestAugError(f"scenario {scenario!r} leaves nothing out")


def partition(items: Sequence[Item], scenario: Scenario) -> list[str | None]:
    """The subsets U_i a scenario trains without: None for seen and standard (nothing
    left out), else every functionality, class or test type, sorted."""
    if scenario in ("seen", "standard"):
        return [None]
    return sorted({held_out_value(item, scenario) for item in items})


def suite_split(
    items: Sequence[Item], *, seed: int, test_fraction: float
) -> tuple[set[str], set[str]]:
    """T_train and T_test ids: each functionality's tests split in the same proportion.

    Suite cases split exactly as `splits.random_split_ids` (TestAug's and patch-eval's
    split); perturbation tests the same way within their own functionality.
    """
    cases = [item for item in items if isinstance(item, TestCase)]
    train, test = random_split_ids(cases, test_fraction=test_fraction, seed=seed)
    by_functionality: dict[str, list[str]] = {}
    for item in items:
        if isinstance(item, PerturbedCase):
            by_functionality.setdefault(functionality_id(item), []).append(item.id)
    for key, ids in sorted(by_functionality.items()):
        rng = random.Random(f"{seed}:{key}")
        ordered = sorted(ids)
        rng.shuffle(ordered)
        count = _test_count(len(ordered), test_fraction, rng)
        test.update(ordered[:count])
        train.update(ordered[count:])
    return train, test


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
    progress: Progress

    def __post_init__(self) -> None:
        self.train_ids, self.test_ids = suite_split(
            self.items, seed=self.split_seed, test_fraction=self.test_fraction
        )

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

    def run(self, configuration: str, method: str, scenario: Scenario, seed: int) -> ScenarioRun:
        """Train the scenario's models (one per U_i) and score them on their test cases."""
        rates: dict[str, float] = {}
        models: list[LeaveOutModel] = []
        for held_out in partition(self.items, scenario):
            train, test = self.split(scenario, held_out)
            if not test:
                continue  # a lone case that fell in train: no unseen rate to give
            if scenario == "standard":
                train = []
            where = f"{configuration} / {method} {scenario} {held_out or 'all'} seed {seed}"
            self.progress(f"{where}: training on {len(train)} tests")
            material = TrainingRequest(
                configuration,
                method,
                tuple(i for i in train if isinstance(i, TestCase)),
                self.iid_train,
                scenario,
                held_out,
                tuple(i for i in train if isinstance(i, PerturbedCase)),
            )
            model = self.train(material, seed)
            found = pass_rates(test, self.passes(model, test))
            overlap = set(found) & set(rates)
            if overlap:
                raise TestAugError(f"functionality {sorted(overlap)[0]!r} scored twice")
            rates.update(found)
            iid = accuracy(self.iid_test, self.predict(model, self.iid_test))
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
        )


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


def functionalities(
    items: Sequence[Item], *, split_seed: int, test_fraction: float
) -> tuple[Functionality, ...]:
    """Every functionality of the suite, in suite order, with its train and test sizes."""
    _, test = suite_split(items, seed=split_seed, test_fraction=test_fraction)
    found: dict[str, Functionality] = {}
    counts: dict[str, list[int]] = {}
    for item in items:
        key = functionality_id(item)
        found.setdefault(
            key,
            Functionality(
                id=key,
                description=functionality_name(item),
                capability=item.capability,
                test_type=item.test_type,
                n_train=0,
                n_test=0,
            ),
        )
        count = counts.setdefault(key, [0, 0])
        count[item.id in test] += 1
    return tuple(
        f.model_copy(update={"n_train": counts[f.id][0], "n_test": counts[f.id][1]})
        for f in found.values()
    )


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
    on_progress: Progress | None = None,
) -> CrossFunctionalReport:
    """BeLUGA's cross-functional analysis of configuration-method pairs, over seeds.

    Each pair is evaluated in `scenarios` (seen, func, class, type); with `standard` the
    IID model (configuration "IID", method "vanilla") gives the standard evaluation once
    per seed. `train(material, seed)` returns a model and `predict(model, inputs)` its
    labels; `perturbed` adds INV and DIR tests (a run's perturbed.jsonl), scored by
    `check(model, tests)` (each perturbation of a description is one functionality). The suite split is
    the same for every pair and seed (`split_seed`).
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
    analysis = _Analysis(
        unique,
        tuple(iid_train),
        tuple(iid_test),
        train,
        predict,
        check,
        split_seed,
        test_fraction,
        on_progress or (lambda message: None),
    )
    runs: list[ScenarioRun] = []
    standard_runs = (
        [analysis.run("IID", "vanilla", "standard", s) for s in seeds] if standard else []
    )
    runs += standard_runs
    summaries: list[PairSummary] = []
    for configuration, method in pairs:
        pair_runs = [
            analysis.run(configuration, method, scenario, seed)
            for seed in seeds
            for scenario in scenarios
        ]
        runs += pair_runs
        summaries.append(summarize_pair(pair_runs))
    return CrossFunctionalReport(
        base_model=base_model,
        labels=tuple(labels),
        seeds=tuple(seeds),
        split_seed=split_seed,
        test_fraction=test_fraction,
        n_cases=len(unique),
        n_iid_train=len(iid_train),
        n_iid_test=len(iid_test),
        functionalities=functionalities(unique, split_seed=split_seed, test_fraction=test_fraction),
        standard=summarize_scenario(standard_runs) if standard_runs else None,
        pairs=tuple(summaries),
        runs=tuple(runs),
    )


def sample_per_functionality(cases: Sequence[TestCase], n: int, seed: int) -> list[TestCase]:
    """At most n cases of each functionality (description), drawn with the seed, in input order."""
    by_description: dict[str, list[TestCase]] = {}
    for case in cases:
        by_description.setdefault(case.description_id, []).append(case)
    kept: set[str] = set()
    for description, members in sorted(by_description.items()):
        ids = sorted(case.id for case in members)
        random.Random(f"{seed}:{description}").shuffle(ids)
        kept.update(ids[:n])
    return [case for case in cases if case.id in kept]


def iid_halves(
    examples: Sequence[IidExample], seed: int
) -> tuple[list[IidExample], list[IidExample]]:
    """The i.i.d. file split in two seeded halves: D_train and D_test."""
    order = list(range(len(examples)))
    random.Random(f"{seed}:iid").shuffle(order)
    half = len(order) // 2
    return [examples[i] for i in sorted(order[half:])], [examples[i] for i in sorted(order[:half])]


def configuration_name(text: str) -> str:
    """A configuration in BeLUGA's notation (IID->T), written in any case."""
    by_lower = {name.lower(): name for name in CONFIGURATIONS}
    key = text.strip().replace(" ", "").lower()
    if key not in by_lower:
        raise TestAugError(f"unknown configuration {text!r}: one of {', '.join(CONFIGURATIONS)}")
    return by_lower[key]


def behaviour_trainer(
    base_model: str,
    *,
    labels: Sequence[str],
    config: FineTuneConfig | None = None,
    iid_config: FineTuneConfig | None = None,
    model_labels: Sequence[str] | None = None,
    on_progress: Progress | None = None,
) -> Train:
    """A `Train` by BeLUGA's behavioural training (`behaviour_training`), suite cases read
    by their labels: the i.i.d.-only step (vanilla, `iid_config`, default `config`) is made
    once per seed and reused by IID, IID->T and IID->(IID+T); the method is applied in the
    suite step (IID: to the i.i.d. step itself, which is then not shared)."""
    import copy

    from testaug.evaluation import behaviour_training as bt

    config = config or FineTuneConfig()
    first_steps: dict[int, Any] = {}

    def fresh(seed: int) -> Classifier:
        return load_classifier(
            base_model,
            labels=labels,
            model_labels=model_labels,
            seed=seed,
            train=True,
            device=config.device,
        )

    def iid_model(material: TrainingRequest, seed: int) -> Classifier:
        classifier = fresh(seed)
        if seed not in first_steps:
            step = (iid_config or config).model_copy(update={"seed": seed})
            bt.train_behaviour(classifier, bt.TrainingMaterial(iid=material.iid), step)
            first_steps[seed] = copy.deepcopy(classifier.model.state_dict())
        classifier.model.load_state_dict(first_steps[seed])
        return classifier

    def train(material: TrainingRequest, seed: int) -> Classifier:
        if material.method not in bt.METHODS:
            raise TestAugError(
                f"unknown method {material.method!r}: one of {', '.join(bt.METHODS)}"
            )
        method: Any = material.method
        seeded = config.model_copy(update={"seed": seed})
        extra = {"method": method, "on_progress": on_progress}
        if material.configuration == "IID":
            if method == "vanilla":
                return iid_model(material, seed)
            return bt.train_behaviour(
                fresh(seed), bt.TrainingMaterial(iid=material.iid), seeded, **extra
            )
        iid = material.iid if material.configuration in WITH_IID else ()
        suite = bt.TrainingMaterial(cases=material.cases, perturbed=material.perturbed, iid=iid)
        classifier = fresh(seed) if material.configuration == "IID+T" else iid_model(material, seed)
        if not len(suite):
            return classifier  # everything left out (a suite of one test type): no suite step
        return bt.train_behaviour(classifier, suite, seeded, **extra)

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
        from testaug.evaluation.failures import evaluate_from_probabilities, needed_inputs

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
