"""The ranker ensemble as a step: a trained folder as given, or a config trained on labelled
candidates the first time it is asked for (the folder is named by the data's hash, so a
second ask reuses it), and retraining on every verdict people gave so far."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from rankers.ensemble import MANIFEST, EnsembleManifest, ProgressCallback, load_config
from rankers.ensemble_training import trained_ensemble
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_json, read_jsonl_parts
from testaug.core.records import LabelledCandidate, Record
from testaug.steps.contract import StepOutput, StepSummary, step_output

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"default_training"})


class RankersSummary(StepSummary):
    """A trained ensemble: its version and how many labelled candidates it learnt from;
    trained on runs, how many were people's verdicts and how many shipped."""

    kind: Literal["rankers"] = "rankers"
    version: str
    trained_on: int
    from_people: int | None = None
    shipped: int | None = None


def default_training() -> Path:
    """The shipped labelled candidates the offline ensemble trains on at first use: a
    folder of JSONL parts, read in name order."""
    return bundled_dir("data") / "validity" / "train"


class TrainRankersConfig(Record):
    """A retraining of the ranker ensemble (the train-rankers flow): the folder of run
    folders whose verdicts it learns from, the ensemble config (a shipped name or a YAML
    file), the labelled candidates it starts from (default: the shipped ones) and where the
    trained folder goes (default: the rankers cache)."""

    runs: Path = Path("runs")
    ensemble: str = "offline"
    base: Path | None = None
    out: Path | None = None


class PrepareRankersConfig(Record):
    """The ranker ensemble a step asks for (`rankers`): a trained folder, or a config (a
    shipped name or a YAML file) trained at first use on the labelled candidates in
    `training` (default: the shipped ones) into a folder under `cache_root` (the callers
    set it: the rankers cache, from the settings)."""

    rankers: str
    cache_root: Path
    training: Path = Field(default_factory=default_training)


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
        from_people=config.from_people,
        shipped=config.shipped,
    )
    return step_output("rankers", folder / MANIFEST, len(manifest.config.members), summary=summary)
