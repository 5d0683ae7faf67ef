"""The files of a ranking's review (a `ReviewConfig` names them), read and checked: the ranked candidates, the seed cases
they came from, the labels annotators may choose, and the plan for people (from the
calibration, the annotations so far and the draws beside them)."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import RankedCandidate, Record, TestCase
from testaug.core.run_folder import RunFolder
from testaug.review.acceptance import DEFAULT_TARGET, calibration_beside, read_calibration
from testaug.review.naming import project_title, verdicts_file
from testaug.review.plans import (
    DEFAULT_REVIEW_FRACTION,
    ReviewPlan,
    people_judged,
    plan_review,
    read_annotations,
)
from testaug.review.project_record import record_beside
from testaug.review.selection import (
    DEFAULT_SELECTION,
    SelectionConfig,
    draws_beside,
    read_draws,
    record_draws,
)
from testaug.review.verdicts import decide

logger = logging.getLogger(__name__)


class ReviewConfig(Record):
    """A ranking's review: its files (the annotations, seed cases and calibration beside
    the ranking unless named; the suite the accepted cases join, if any), the Label Studio
    project (default: `testaug <the ranking's folder>`; its id is recorded beside the
    annotations on the first push or pull), how much of the ranking people see
    (`top`, a share, and `budget`, a count; the top 30% when neither is given), the
    precision the ranker's rule must reach to accept a candidate (`accept_precision`, as
    `testaug run` and `--accept-precision` name it), who reviews at the
    terminal (`annotator`, default: the login), where the merge writes the verdicts, the
    accepted cases and the merged suite (`out`, default: the annotations' folder), and how
    long a pull waits for people (`wait_seconds`, asking every `poll_seconds`). Its steps
    write the annotations (a review) or into `out` (the merge, which reads them)."""

    WRITES: ClassVar[tuple[str, ...]] = ("annotations", "out")

    ranked: Path
    annotations: Path | None = None
    cases: Path | None = None
    calibration: Path | None = None
    suite: Path | None = None
    project: str | None = None
    top: float | None = Field(default=None, ge=0.0, le=1.0)
    budget: int | None = Field(default=None, ge=0)
    accept_precision: float = DEFAULT_TARGET
    selection: SelectionConfig = DEFAULT_SELECTION
    annotator: str | None = None
    out: Path | None = None
    wait_seconds: float = Field(default=0.0, ge=0.0)
    poll_seconds: float = Field(default=30.0, gt=0.0)

    def annotations_path(self) -> Path:
        return self.annotations or verdicts_file("candidates", self.ranked)

    def calibration_path(self) -> Path:
        return self.calibration or calibration_beside(self.ranked)

    def project_name(self) -> str:
        return self.project or project_title("candidates", self.ranked)

    def project_record(self) -> Path:
        """Where the Label Studio project's id is recorded: beside the annotations."""
        return record_beside(self.annotations_path())

    def people_top(self) -> float | None:
        """The share of the ranking people review: `top`, else (with no budget either) the
        default share."""
        return DEFAULT_REVIEW_FRACTION if self.top is None and self.budget is None else self.top


class SuggestionsReview(Record):
    """What a review of suggested items (tests of a tree, words of lexicons) is given: the
    suggestions file, the verdicts file, the Label Studio project and the file that
    records it, and who judges in the terminal. A kind of review names its default
    verdicts file and project after the suggestions (`default_verdicts`,
    `default_project`); a step refuses (ValueError) a config without a field it needs."""

    suggestions: Path | None = None
    verdicts: Path | None = None
    project: str | None = None
    record: Path | None = None
    annotator: str | None = None

    def default_verdicts(self, suggestions: Path) -> Path:
        """The verdicts file of a suggestions file when none is given."""
        raise NotImplementedError

    def default_project(self, suggestions: Path) -> str:
        """The Label Studio project of a suggestions file when none is given."""
        raise NotImplementedError

    def suggestions_file(self, step: str) -> Path:
        """The suggestions file, which `step` needs."""
        if self.suggestions is None:
            raise ValueError(f"{step} needs config.suggestions, the suggestions file")
        return self.suggestions

    def verdicts_file(self, step: str) -> Path:
        """The verdicts file: as given, else the default beside the suggestions."""
        if self.verdicts is not None:
            return self.verdicts
        if self.suggestions is None:
            raise ValueError(f"{step} needs config.verdicts, or config.suggestions beside it")
        return self.default_verdicts(self.suggestions)

    def project_name(self, step: str) -> str:
        """The Label Studio project: as given, else named after the suggestions."""
        if self.project is not None:
            return self.project
        if self.suggestions is None:
            raise ValueError(f"{step} needs config.project, or config.suggestions to name it")
        return self.default_project(self.suggestions)

    def push_target(self, step: str) -> tuple[Path, str, Path]:
        """What a push of `step` sends and where: the suggestions file, the project, and the
        file that records it (`record`, default: beside the suggestions)."""
        suggestions = self.suggestions_file(step)
        project = self.project_name(step)
        return suggestions, project, self.record or record_beside(suggestions)

    def pull_target(self, step: str) -> tuple[Path, str, Path]:
        """Where a pull of `step` reads and writes: the verdicts file, the project, and the
        file that records it (`record`, default: beside the suggestions, else the verdicts)."""
        verdicts = self.verdicts_file(step)
        project = self.project_name(step)
        return verdicts, project, self.record or record_beside(self.suggestions or verdicts)


def read_ranked(path: Path) -> list[RankedCandidate]:
    """Ranked candidates; an error naming the file when it has none or a label outside its
    task's labels."""
    from testaug.suites.task_labels import check_labels

    ranked = list(read_jsonl(path, RankedCandidate))
    if not ranked:
        raise InputError(Problem("no ranked candidates in the file", file=path))
    check_labels([item.candidate for item in ranked], file=path, field="candidate.label")
    return ranked


def seed_cases(cases_path: Path | None, ranked_path: Path) -> dict[str, TestCase]:
    """The seed cases by id, from `cases_path` or else cases.jsonl beside the ranking;
    none (with a warning) when that is missing too: seed examples are then not shown."""
    path = cases_path or RunFolder.of(ranked_path).cases
    if cases_path is None and not path.exists():
        logger.warning("no %s: seed examples will not be shown (pass --seed-cases)", path)
        return {}
    from testaug.suites.task_labels import check_labels

    cases = list(read_jsonl(path, TestCase))
    check_labels(cases, file=path)
    return {case.id: case for case in cases}


def task_labels(ranked: Sequence[RankedCandidate], cases: Iterable[TestCase]) -> list[str]:
    """The labels annotators may correct to: the labels of the bundled suite of the task,
    and every label of the candidates and seed cases."""
    from testaug.suites.task_labels import task_labels as labels_of_tasks

    return labels_of_tasks(
        (item.candidate.task for item in ranked),
        [*(item.candidate.label for item in ranked), *(case.label for case in cases)],
    )


def check_output_folder(path: Path) -> None:
    """An error naming `path` when it cannot be written: its folder is missing or it is a
    folder itself (checked before a step changes anything elsewhere)."""
    if path.is_dir():
        raise InputError(Problem("is a folder, not a file", file=path))
    if not path.parent.is_dir():
        raise InputError(Problem(f"its folder {path.parent} does not exist", file=path))


def review_plan(
    ranked: Sequence[RankedCandidate],
    annotations_path: Path,
    calibration_path: Path,
    *,
    top: float | None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    note: str | None = None,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> ReviewPlan:
    """The plan for a ranking: the ranker accepts what the rule for `target` vouches for
    (read from `calibration_path`; nothing when it is missing), never a candidate a person
    already judged in the annotations file; people review the rest in the order
    `order_for_people` gives, and how each was drawn is added to the draws file beside
    the annotations."""
    draws_path = draws_beside(annotations_path)
    plan = plan_review(
        ranked,
        read_calibration(calibration_path),
        top=top,
        budget=budget,
        target=target,
        judged=people_judged(read_annotations(annotations_path)),
        note=note,
        source=calibration_path,
        pooled=selection.pooled_rule,
        drawn=read_draws(draws_path),
        calibration_size=selection.calibration_sample,
        uncertain_until=selection.uncertain_until,
    )
    if plan.draws:
        record_draws(draws_path, plan.draws)
    return plan


def pending_count(
    annotations_path: Path, ranked_path: Path, among: Iterable[str] | None = None
) -> int:
    """Candidates of the ranking that nobody has decided yet (only those `among`, if given)."""
    candidates = {item.candidate.id: item.candidate for item in read_ranked(ranked_path)}
    verdicts = decide(read_annotations(annotations_path), candidates)
    ids = verdicts.keys() if among is None else set(among) & verdicts.keys()
    return sum(verdicts[cid].status == "pending" for cid in ids)
