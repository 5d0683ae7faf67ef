"""Records of BeLUGA's cross-functional analysis: what a training
run gets, what one scenario run scores (with its per-example hits), the summaries over seeds
with their comparison to the IID baseline, the T_val selection, and crossfunctional.json."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from testaug.core.jsonl import read_json
from testaug.core.records import Record, TestCase, TestType
from testaug.core.runs import write_json
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.fixing.finetune import LabelledInput
from testaug.fixing.patching.protocol import IidExample
from testaug.fixing.patching.report import Stat
from testaug.fixing.significance import ALPHA

Scenario = Literal["standard", "seen", "func", "class", "type"]
SCENARIOS: tuple[Scenario, ...] = ("standard", "seen", "func", "class", "type")
# The scenarios a configuration-method pair is evaluated in (standard is the IID model's).
PAIR_SCENARIOS: tuple[Scenario, ...] = ("seen", "func", "class", "type")
CONFIGURATIONS = ("IID", "IID->T", "IID+T", "IID->(IID+T)")
# Configurations whose suite training keeps the i.i.d. training data.
WITH_IID = frozenset({"IID+T", "IID->(IID+T)"})
DEFAULT_SPLIT_SEED = 123  # BeLUGA's random_state for the suite split
CROSSFUNCTIONAL_FILE = "crossfunctional.json"
# Per-example hits of a scenario run, one character per T_test test (report.test_ids).
PASS, FAIL, UNSCORED = "1", "0", "-"


class TrainingSetting(Record):
    """The suite step's hyper-parameters (BeLUGA's grid: learning rate, epochs, batch size)."""

    learning_rate: float
    epochs: int
    batch_size: int

    @property
    def name(self) -> str:
        """`lr 2e-05, 3 epochs, batch 16`."""
        return f"lr {self.learning_rate:g}, {self.epochs} epochs, batch {self.batch_size}"


@dataclass(frozen=True)
class TrainingRequest:
    """What one training run gets: the configuration and method, the suite cases it may
    learn from (T_train, or T_train \\ U_i) and the i.i.d. training examples (D_train).

    `cases` is empty for the IID configuration. `iid` is always D_train: a multi-step
    configuration trains on it first; IID+T and IID->(IID+T) also mix it with the cases.
    `setting` (when not None) overrides the suite step's hyper-parameters.
    """

    configuration: str
    method: str
    cases: tuple[TestCase, ...]
    iid: tuple[IidExample, ...]
    scenario: Scenario
    held_out: str | None = None
    perturbed: tuple[PerturbedCase, ...] = ()  # INV and DIR tests (T_train's, \\ U_i)
    setting: TrainingSetting | None = None


Item = TestCase | PerturbedCase
Train = Callable[[TrainingRequest, int], Any]
Predict = Callable[[Any, Sequence[LabelledInput]], list[str]]
# Whether a model passes each perturbation test; None where the test cannot fail.
Check = Callable[[Any, Sequence[PerturbedCase]], list[bool | None]]
Progress = Callable[[str], None]


class Functionality(Record):
    """A functionality (a suite description), its class and test type, and its split sizes."""

    id: str
    description: str
    capability: str
    test_type: TestType
    n_train: int
    n_test: int
    n_val: int = 0


class LeaveOutModel(Record):
    """One model of a scenario: what it left out, its training size and i.i.d. accuracy."""

    held_out: str | None = None
    n_train: int
    iid_score: float


class ScenarioRun(Record):
    """One scenario of one pair under one seed: a pass rate per functionality (Eq. 7),
    the suite score, the i.i.d. score (mean over the scenario's models) and G (Eq. 8).

    `hits` holds each T_test test's outcome in the report's `test_ids` order ("1" pass,
    "0" fail, "-" not scored: a DIR that cannot fail); `iid_hits` each i.i.d. test
    example's share of the scenario's models that got it right (1 or 0 with one model)."""

    configuration: str
    method: str
    scenario: Scenario
    seed: int
    pass_rates: dict[str, float]  # functionality id -> pass rate
    suite_score: float
    iid_score: float
    g: float
    models: tuple[LeaveOutModel, ...]
    hits: str = ""
    iid_hits: tuple[float, ...] = ()


class Comparison(Record):
    """A scenario against the IID baseline, from the per-example hits averaged over
    seeds: the G difference and its randomization-test p-value, the i.i.d. accuracy
    difference and its two-tailed binomial p-value."""

    g_difference: float
    g_p: float
    iid_difference: float
    iid_p: float
    alpha: float = ALPHA

    @property
    def g_mark(self) -> Literal["above", "below", ""]:
        """Whether G is significantly above or below the baseline's (at `alpha`)."""
        return _mark(self.g_difference, self.g_p, self.alpha)

    @property
    def iid_mark(self) -> Literal["above", "below", ""]:
        """Whether the i.i.d. score is significantly above or below the baseline's."""
        return _mark(self.iid_difference, self.iid_p, self.alpha)


def _mark(difference: float, p: float, alpha: float) -> Literal["above", "below", ""]:
    if p >= alpha or difference == 0:
        return ""
    return "above" if difference > 0 else "below"


class ScenarioSummary(Record):
    """A scenario of one pair over seeds: mean and deviation of every score, and (for a
    pair's scenario, when the baseline ran) the comparison with the IID baseline."""

    scenario: Scenario
    pass_rates: dict[str, Stat]
    suite_score: Stat
    iid_score: Stat
    g: Stat
    versus_baseline: Comparison | None = None


class SettingScore(Record):
    """One setting of the grid and its suite score on T_val."""

    setting: TrainingSetting
    val_score: float


class Selection(Record):
    """the grid tried for a pair's suite step (trained on T_train with the first
    seed, scored by the suite score on T_val) and the setting chosen (the best; the first
    in grid order on a tie), used for every scenario and seed of the pair."""

    chosen: TrainingSetting
    scores: tuple[SettingScore, ...]


class PairSummary(Record):
    """A configuration-method pair: its scenarios over seeds and the mean G of the four
    generalization scenarios (BeLUGA's Avg column, per pair)."""

    configuration: str
    method: str
    scenarios: dict[str, ScenarioSummary]  # seen, func, class, type
    g_average: Stat
    selection: Selection | None = None

    @property
    def name(self) -> str:
        """`configuration / method`, as the table and heat map label the pair."""
        return f"{self.configuration} / {self.method}"


class CrossFunctionalReport(Record):
    """Every run of the analysis and its summaries (crossfunctional.json holds it).

    `test_ids` are T_test's tests in the order of every run's `hits`, and
    `test_functionalities` their functionalities; `val_fraction` is the share of each
    functionality's held-out tests that went to T_val (0 without selection);
    `significance_trials` the randomization trials of the tests against the baseline
    (None in reports written before it was recorded)."""

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
    test_ids: tuple[str, ...] = ()
    test_functionalities: tuple[str, ...] = ()
    val_fraction: float = 0.0
    significance_trials: int | None = None

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
