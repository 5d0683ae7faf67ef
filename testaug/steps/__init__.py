"""The pipeline's steps as functions from files to files, shared by `testaug run`, the
Prefect flows and the stage commands.

Each step reads the files it is given, writes its outputs atomically into a run
folder, and returns a small `StepOutput` naming its main file with the file's
SHA-256 and a typed summary (one record per kind of step, defined beside the step,
told apart by its `kind`). Flows pass these records between tasks, never the records
inside the files, and a cached step whose file has gone or changed is run again
(`is_current`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Annotated

from pydantic import Field

from testaug.core.records import Record


class StepSummary(Record):
    """Base of the steps' summaries: which kind of step wrote it, and the numbers worth
    reporting, by field (optional where a mode of the step leaves them out)."""

    kind: str


class StepOutput(Record):
    """What a step wrote: its main file (with the file's SHA-256), how many records it
    holds, the other files it wrote by role, and its summary."""

    step: str
    path: Path
    sha256: str
    records: int = 0
    files: dict[str, Path] = Field(default_factory=dict)
    summary: AnySummary


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def step_output(
    step: str,
    path: Path,
    records: int = 0,
    *,
    files: dict[str, Path] | None = None,
    summary: StepSummary,
) -> StepOutput:
    """The record of a step that wrote `path` (and maybe other files)."""
    return StepOutput(
        step=step,
        path=path,
        sha256=file_sha256(path),
        records=records,
        files=files or {},
        summary=summary,
    )


def is_current(output: StepOutput) -> bool:
    """Whether the step's main file is still there with the content it wrote."""
    return output.path.is_file() and file_sha256(output.path) == output.sha256


# The step modules define their summaries and import the names above, so they come last.
from testaug.steps import annotate, augment, grow, measure, rank, rankers, review  # noqa: E402

AnySummary = Annotated[
    augment.ExpandSummary
    | augment.GenerateSummary
    | augment.CombineSummary
    | rank.RankSummary
    | review.AnnotateSummary
    | review.PullSummary
    | review.MergeSummary
    | grow.InduceSummary
    | grow.ExpandInducedSummary
    | grow.SuiteSummary
    | measure.DiversityStepSummary
    | measure.PerturbSummary
    | measure.EvaluateSummary
    | measure.CombineEvaluationsSummary
    | measure.PatchSummary
    | measure.ReportSummary
    | rankers.RankersSummary,
    Field(discriminator="kind"),
]
StepOutput.model_rebuild()

__all__ = [
    "AnySummary",
    "StepOutput",
    "StepSummary",
    "annotate",
    "augment",
    "file_sha256",
    "grow",
    "is_current",
    "measure",
    "rank",
    "rankers",
    "review",
    "step_output",
]
