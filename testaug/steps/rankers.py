"""The ranker ensemble as steps: a config trained on labelled candidates into a folder; a
trained folder as given, or a config trained the first time it is asked for (the folder
is named by the data's hash, so a second ask reuses it); retraining on every verdict
people gave so far; an ensemble evaluated on labelled candidates in the order people
review; and labelled hard cases made by rule from a suite."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from rankers.ensemble import MANIFEST, EnsembleManifest, ProgressCallback, load_config
from rankers.ensemble_training import trained_ensemble
from testaug.core.bundled import bundled_dir
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_json, read_jsonl_parts
from testaug.core.records import LabelledCandidate, Record
from testaug.core.triage import TriageSummary
from testaug.steps.contract import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from testaug.core.settings import Settings

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"default_training"})


class RankersSummary(StepSummary):
    """A trained ensemble: its version, how many labelled candidates it learnt from (how
    many of them invalid) and the seconds each member's training took; trained on runs,
    how many were people's verdicts and how many shipped."""

    kind: Literal["rankers"] = "rankers"
    version: str
    trained_on: int
    invalid: int | None = None
    train_seconds: dict[str, float] = Field(default_factory=dict)
    from_people: int | None = None
    shipped: int | None = None


class RankersEvaluationSummary(StepSummary):
    """An ensemble evaluated on labelled candidates: the triage summary (triage.json)."""

    kind: Literal["rankers evaluation"] = "rankers evaluation"
    triage: TriageSummary


class HardCasesSummary(StepSummary):
    """Hard cases made by rule: how many of each kind, and how many are valid."""

    kind: Literal["hard cases"] = "hard cases"
    kinds: dict[str, int]
    valid: int


class TrainEnsembleConfig(Record):
    """A training of an ensemble config (a shipped name or a YAML file, `ensemble`) on
    labelled candidates (`labelled`: a JSONL file or a folder of parts) into `out`."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    labelled: Path
    out: Path
    ensemble: str = "offline"


class EvaluateRankersConfig(Record):
    """An evaluation of a trained ensemble (`rankers`) on labelled candidates at a target
    accuracy: the seed cases neighbour members compare with (`cases`; default: the
    bundled suites'), where the ACC@k plot goes (default: `<rankers>/acc_curve.png`),
    where triage.json goes (`out`; none: not written) and whether each source gets its
    own row."""

    labelled: Path
    rankers: Path
    target: float = Field(default=0.9, ge=0.0, le=1.0)
    cases: Path | None = None
    plot: Path | None = None
    out: Path | None = None
    per_source: bool = False


class HardCasesConfig(Record):
    """Labelled hard cases made by rule from a suite (a file, folder or shipped name) into
    `out`: `per_description` valid ones per description and as many invalid."""

    suite: str
    out: Path
    per_description: int = Field(default=6, ge=1)
    seed: int = 0


def default_training() -> Path:
    """The shipped labelled candidates the offline ensemble trains on at first use: a
    folder of JSONL parts, read in name order."""
    return bundled_dir("data") / "validity" / "train"


class TrainRankersConfig(Record):
    """A retraining of the ranker ensemble (the train-rankers flow): the folder of run
    folders whose verdicts it learns from, the ensemble config (a shipped name or a YAML
    file), the labelled candidates it starts from (default: the shipped ones) and where the
    trained folder goes (default: the rankers cache)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    runs: Path = Path("runs")
    ensemble: str = "offline"
    base: Path | None = None
    out: Path | None = None


class PrepareRankersConfig(Record):
    """The ranker ensemble a step asks for (`rankers`): a trained folder, or a config (a
    shipped name or a YAML file) trained at first use on the labelled candidates in
    `training` (default: the shipped ones) into a folder under `cache_root` (the callers
    set it: the rankers cache, from the settings)."""

    WRITES: ClassVar[tuple[str, ...]] = ("cache_root",)

    rankers: str
    cache_root: Path
    training: Path = Field(default_factory=default_training)

    @classmethod
    def in_cache(cls, rankers: str | Path, settings: Settings) -> PrepareRankersConfig:
        """The ensemble `rankers` (a folder or a config), trained at first use into the
        settings' rankers cache: how the CLI, the API and the flows all ask for one."""
        return cls(rankers=str(rankers), cache_root=settings.rankers_cache_path)


class EnsembleFolderConfig(Record):
    """A trained ensemble's folder, and (trained on runs) how many of the labelled
    candidates it learnt from were people's verdicts (`from_people`) and how many shipped."""

    folder: Path
    from_people: int | None = None
    shipped: int | None = None


def prepare_rankers(
    config: PrepareRankersConfig, *, on_progress: ProgressCallback | None = None
) -> StepOutput:
    """A trained ensemble: a folder as given, or a config (shipped name or YAML file)
    trained on the labelled candidates in `config.training` the first time it is asked for."""
    given = Path(config.rankers)
    if (given / MANIFEST).is_file():
        return ensemble_output(EnsembleFolderConfig(folder=given))
    labelled = list(read_jsonl_parts(config.training, LabelledCandidate))
    folder = trained_ensemble(
        load_config(config.rankers), labelled, config.cache_root, on_progress=on_progress
    )
    return ensemble_output(EnsembleFolderConfig(folder=folder))


def train_rankers_on_labels(
    config: TrainEnsembleConfig, *, on_progress: ProgressCallback | None = None
) -> StepOutput:
    """The ensemble config trained on the labelled candidates into `config.out`; an input
    error naming the file when they are none, or all of one verdict."""
    from rankers.ensemble_training import train_ensemble

    items = list(read_jsonl_parts(config.labelled, LabelledCandidate))
    if not items:
        raise InputError(Problem("no labelled candidates to train on", file=config.labelled))
    if len({item.valid for item in items}) < 2:
        kind = "valid" if items[0].valid else "invalid"
        message = f"all {len(items):,} labelled candidates are {kind}; training needs both"
        raise InputError(Problem(message, file=config.labelled))
    train_ensemble(items, load_config(config.ensemble), config.out, on_progress=on_progress)
    return ensemble_output(EnsembleFolderConfig(folder=config.out))


def evaluate_rankers(config: EvaluateRankersConfig) -> StepOutput:
    """How the trained ensemble triages the labelled candidates, in the order `rank` gives
    them (rankers.evaluation.report): the ACC@k curves plotted, triage.json written where asked."""
    from rankers.ensemble import Ensemble
    from rankers.evaluation.report import evaluate_triage
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import TestCase
    from testaug.core.runs import write_text_atomic
    from testaug.reports.plots import plot_acc_curves

    items = list(read_jsonl_parts(config.labelled, LabelledCandidate))
    if not items:
        raise InputError(Problem("no labelled candidates to evaluate on", file=config.labelled))
    ensemble = Ensemble.load(config.rankers)
    reference = list(read_jsonl(config.cases, TestCase)) if config.cases else None
    plot = config.plot or config.rankers / "acc_curve.png"
    summary = evaluate_triage(
        ensemble,
        items,
        target=config.target,
        reference=reference,
        per_source=config.per_source,
        plot=str(plot),
    )
    curves = {TRIAGE_CURVE: summary.triage.curve}
    curves.update({name: report.curve for name, report in summary.parts.items()})
    curves.update(random=summary.random_curve, oracle=summary.oracle_curve)
    title = f"{config.labelled.name}: {summary.n} candidates, {summary.n_invalid} invalid"
    plot_acc_curves(curves, plot, target=config.target, title=title)
    files = {"plot": plot}
    if config.out is not None:
        write_text_atomic(config.out, summary.model_dump_json() + "\n")
        files["triage"] = config.out
    main = config.out or plot
    result = RankersEvaluationSummary(triage=summary)
    return step_output("rankers evaluate", main, summary.n, files=files, summary=result)


TRIAGE_CURVE = "triage"  # the curve of the order people review, drawn bold


def make_hard_cases(config: HardCasesConfig) -> StepOutput:
    """Labelled hard cases made by rule from the suite (rankers.hard_cases) into
    `config.out`: cases of other templates (valid), of sibling descriptions or other
    capabilities (invalid: capability) and under a wrong label (invalid: label)."""
    from collections import Counter

    from rankers.hard_cases import hard_cases
    from testaug.core.bundled import resolve_suite
    from testaug.core.jsonl import write_jsonl
    from testaug.suites.load import load_suite

    suite = load_suite(resolve_suite(config.suite))
    made = hard_cases(suite, per_description=config.per_description, seed=config.seed)
    write_jsonl(config.out, made)
    kinds = Counter(item.candidate.model.removeprefix("hard-cases:") for item in made)
    summary = HardCasesSummary(kinds=dict(sorted(kinds.items())), valid=sum(i.valid for i in made))
    return step_output("hard cases", config.out, len(made), summary=summary)


def train_from_runs(
    config: TrainRankersConfig, *, on_progress: ProgressCallback | None = None
) -> StepOutput:
    """An ensemble of `config.ensemble` trained on people's verdicts in the run folders
    under `config.runs` and the labelled candidates in `config.base` (a person's verdict
    wins over a shipped label), written under `config.out` (which the caller sets: the
    default, the rankers cache, comes from the settings)."""
    from rankers.active import labelled_from_runs

    if config.out is None:
        raise ValueError("train_from_runs needs config.out, the folder the ensemble goes in")
    runs = config.runs
    people = labelled_from_runs(p for p in runs.glob("*") if p.is_dir()) if runs.is_dir() else []
    judged = {item.candidate.id for item in people}
    base = config.base or default_training()
    shipped = [i for i in read_jsonl_parts(base, LabelledCandidate) if i.candidate.id not in judged]
    folder = trained_ensemble(
        load_config(config.ensemble), [*shipped, *people], config.out, on_progress=on_progress
    )
    trained = EnsembleFolderConfig(folder=folder, from_people=len(people), shipped=len(shipped))
    return ensemble_output(trained)


def ensemble_output(config: EnsembleFolderConfig) -> StepOutput:
    """The record of a trained ensemble folder: its manifest, members, version, data size
    (and, trained on runs, the verdicts of people and the shipped candidates among it)."""
    folder = config.folder
    manifest = read_json(folder / MANIFEST, EnsembleManifest)
    summary = RankersSummary(
        version=manifest.version,
        trained_on=manifest.trained_on,
        invalid=manifest.invalid,
        train_seconds=manifest.train_seconds,
        from_people=config.from_people,
        shipped=config.shipped,
    )
    return step_output("rankers", folder / MANIFEST, len(manifest.config.members), summary=summary)
