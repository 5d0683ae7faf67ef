"""The annotate step as `testaug annotate` and the flows call it: a run's files in (the
ranking, its seed cases, the annotations), one `StepOutput` out. The Label Studio
connection and project come from the settings and the run folder unless given."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import SecretStr

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import LabelledCandidate, TestCase
from testaug.core.settings import Settings
from testaug.review.acceptance import DEFAULT_TARGET
from testaug.review.plans import DEFAULT_REVIEW_FRACTION, read_annotations
from testaug.review.selection import DEFAULT_SELECTION, SelectionConfig
from testaug.steps import StepOutput, step_output
from testaug.steps.rank import RankSummary, basis_counts, write_calibration
from testaug.steps.review import (
    AnnotateSummary,
    merge_reviewed,
    pull_verdicts_into,
    push_to_label_studio,
    read_ranked,
    review_in_terminal,
)

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.review.label_studio import LabelStudio
    from testaug.review.terminal import KeyReader

logger = logging.getLogger(__name__)

# The share of the ranking people review when neither a share nor a budget is given.
DEFAULT_TOP = DEFAULT_REVIEW_FRACTION


def connect_label_studio(
    url: str | None = None,
    api_key: SecretStr | str | None = None,
    *,
    settings: Settings | None = None,
) -> LabelStudio:
    """A Label Studio connection; the URL and API key not given come from the settings
    (LABEL_STUDIO_URL, LABEL_STUDIO_API_KEY). An error naming `api_key` when there is none."""
    from testaug.review.label_studio import LabelStudio

    settings = settings or Settings()
    key = SecretStr(api_key) if isinstance(api_key, str) else api_key
    key = key or settings.label_studio_api_key
    if key is None:
        raise InputError(
            Problem("no Label Studio API key: set LABEL_STUDIO_API_KEY", field="api_key")
        )
    return LabelStudio(url or settings.label_studio_url, key)


def default_project(run_dir: Path) -> str:
    """The Label Studio project of a run folder: `testaug <folder name>`."""
    return f"testaug {run_dir.resolve().name}"


def default_top(top: float | None, budget: int | None) -> float | None:
    """The share of the ranking people review: `top`, else (with no budget either) the
    default share."""
    return DEFAULT_TOP if top is None and budget is None else top


def seed_cases(cases_path: Path | None, ranked_path: Path) -> dict[str, TestCase]:
    """The seed cases by id, from `cases_path` or else cases.jsonl beside the ranking;
    none (with a warning) when that is missing too: seed examples are then not shown."""
    path = cases_path or ranked_path.with_name("cases.jsonl")
    if cases_path is None and not path.exists():
        logger.warning("no %s: seed examples will not be shown (pass --cases)", path)
        return {}
    from testaug.suites.task_labels import check_labels

    cases = list(read_jsonl(path, TestCase))
    check_labels(cases, file=path)
    return {case.id: case for case in cases}


def push_run_to_label_studio(
    ranked_path: Path,
    annotations_path: Path,
    cases_path: Path | None,
    *,
    studio: LabelStudio,
    project: str | None = None,
    top: float | None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    calibration_path: Path | None = None,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> StepOutput:
    """`push_to_label_studio` for a run's files: the seed cases read from `cases_path` (or
    cases.jsonl beside the ranking, see `seed_cases`), the run folder's project unless one
    is named."""
    return push_to_label_studio(
        ranked_path,
        annotations_path,
        studio=studio,
        project=project or default_project(ranked_path.parent),
        seeds=seed_cases(cases_path, ranked_path),
        top=top,
        budget=budget,
        target=target,
        calibration_path=calibration_path,
        selection=selection,
    )


@dataclass(frozen=True)
class PullAndMerge:
    """A pull of people's verdicts and the merge of every verdict so far that followed it."""

    pulled: StepOutput
    merged: StepOutput


def pull_and_merge(
    annotations_path: Path,
    ranked_path: Path,
    *,
    studio: LabelStudio,
    project: str,
    suite_path: Path | None = None,
) -> PullAndMerge:
    """Bring people's verdicts into the annotations file, then decide every candidate (those
    ranked and those sent to Label Studio) and write the accepted ones beside it, as
    `merge_reviewed` does; without the ranking, only candidates sent there are merged."""
    pulled, reading = pull_verdicts_into(annotations_path, studio, project)
    if not ranked_path.exists():
        logger.warning(
            "no %s: only candidates sent to Label Studio can be merged (pass --ranked)",
            ranked_path,
        )
    merged = merge_reviewed(
        annotations_path,
        ranked_path if ranked_path.exists() else None,
        annotations_path.parent,
        suite_path=suite_path,
        candidates=reading.candidates,
    )
    return PullAndMerge(pulled, merged)


def review_run_in_terminal(
    ranked_path: Path,
    annotations_path: Path,
    cases_path: Path | None,
    *,
    annotator: str,
    read_key: KeyReader,
    console: Console,
    top: float | None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    calibration_path: Path | None = None,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> StepOutput:
    """Mode `terminal` for a run's files (`review_in_terminal` with the seed cases read as
    `seed_cases` does): what the session saved, what it left, and what the ranker accepted."""
    done = review_in_terminal(
        ranked_path,
        annotations_path,
        seeds=seed_cases(cases_path, ranked_path),
        annotator=annotator,
        read_key=read_key,
        console=console,
        top=top,
        budget=budget,
        target=target,
        calibration_path=calibration_path,
        selection=selection,
    )
    session = done.session
    return step_output(
        "annotate",
        annotations_path,
        session.annotated,
        summary=AnnotateSummary(
            mode="terminal",
            annotated=session.annotated,
            valid=session.valid,
            invalid=session.invalid,
            skipped=session.skipped,
            remaining=session.remaining,
            pending=len(done.plan.pending),
            acceptance=done.plan.acceptance.summary(),
        ),
    )


def retrain_ranking(
    ranked_path: Path,
    annotations_path: Path,
    out: Path,
    *,
    config: str,
    rankers_out: Path,
    extra_path: Path | None = None,
) -> StepOutput:
    """Active loop: retrain the ensemble (`config`: a shipped name or a YAML file) into
    `rankers_out` on every verdict of people so far (and the labelled candidates in
    `extra_path`), then re-rank what is pending into `out`, its calibration beside it."""
    from rankers.active import retrain_and_rerank
    from rankers.ensemble import load_config
    from testaug.review.selection import draws_beside, read_draws

    extra = list(read_jsonl(extra_path, LabelledCandidate)) if extra_path else []
    result = retrain_and_rerank(
        read_ranked(ranked_path),
        read_annotations(annotations_path),
        load_config(config),
        rankers_out,
        extra=extra,
        draws=read_draws(draws_beside(annotations_path)),
    )
    write_jsonl(out, result.reranked)
    return step_output(
        "rank",
        out,
        len(result.reranked),
        files=write_calibration(result.ensemble, out),
        summary=RankSummary(
            ensemble=result.ensemble.version,
            from_people=result.from_people,
            from_extra=result.from_extra,
            bases=basis_counts(result.reranked),
        ),
    )
