"""Steps from ranked candidates to verdicts: the ranker accepts what its rule for a stated
precision vouches for (alone in mode `auto`), people review the top of the rest in Label
Studio (push, then pull or wait) or the terminal, and accepted cases merge into the suite."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Candidate, RankedCandidate, TestCase
from testaug.review.acceptance import (
    DEFAULT_TARGET,
    AcceptanceSummary,
    calibration_beside,
    read_calibration,
)
from testaug.review.plans import (
    AUTO_NOTE,
    ReviewPlan,
    add_annotations,
    people_judged,
    plan_review,
    read_annotations,
    record_plan,
)
from testaug.review.selection import (
    DEFAULT_SELECTION,
    SelectionConfig,
    draws_beside,
    read_draws,
    record_draws,
)
from testaug.review.verdicts import check_corrections, decide, merge_verdicts, status_counts
from testaug.steps import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.review.label_studio import ExportReading, LabelStudio
    from testaug.review.terminal import KeyReader, TerminalSession

logger = logging.getLogger(__name__)

AnnotationMode = Literal["auto", "label-studio", "terminal"]
ANNOTATION_MODES: tuple[AnnotationMode, ...] = ("auto", "label-studio", "terminal")


class AnnotateSummary(StepSummary):
    """An annotation mode's review: the Label Studio push (`label-studio`) or the terminal
    session (`terminal`), the candidates left pending, and what the ranker accepted."""

    kind: Literal["annotate"] = "annotate"
    mode: AnnotationMode
    project: str | None = None
    project_id: int | None = None
    created: bool | None = None
    sent: int | None = None
    imported: int | None = None
    already_present: int | None = None
    annotated: int | None = None
    valid: int | None = None
    invalid: int | None = None
    skipped: int | None = None
    remaining: int | None = None
    pending: int
    acceptance: AcceptanceSummary


class PullSummary(StepSummary):
    """People's verdicts pulled from a Label Studio project (`pending`: those sent that
    still wait, where the pull waited for them)."""

    kind: Literal["pull"] = "pull"
    project: str
    verdicts: int
    added: int
    changed: int
    cancelled: int
    unanswered: int
    pending: int | None = None


class MergeSummary(StepSummary):
    """Every candidate decided (`status_counts`), and with a suite its size and the cases
    it gained."""

    kind: Literal["merge"] = "merge"
    accepted_by_people: int
    accepted_by_ranker: int
    rejected_by_people: int
    rejected_by_ranker: int
    disputed: int
    pending: int
    suite: int | None = None
    added: int | None = None


def read_ranked(path: Path) -> list[RankedCandidate]:
    """Ranked candidates; an error naming the file when it has none or a label outside its
    task's labels."""
    from testaug.suites.task_labels import check_labels

    ranked = list(read_jsonl(path, RankedCandidate))
    if not ranked:
        raise InputError(Problem("no ranked candidates in the file", file=path))
    check_labels([item.candidate for item in ranked], file=path, field="candidate.label")
    return ranked


def task_labels(ranked: Sequence[RankedCandidate], cases: Iterable[TestCase]) -> list[str]:
    """The labels annotators may correct to: the labels of the bundled suite of the task,
    and every label of the candidates and seed cases."""
    from testaug.suites.task_labels import task_labels as labels_of_tasks

    return labels_of_tasks(
        (item.candidate.task for item in ranked),
        [*(item.candidate.label for item in ranked), *(case.label for case in cases)],
    )


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


def review_automatically(
    ranked_path: Path,
    annotations_path: Path,
    *,
    calibration_path: Path | None = None,
    target: float = DEFAULT_TARGET,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> StepOutput:
    """Mode `auto`: the ranker accepts only what its rule for precision `target` vouches for
    (a generator without random labels of its own only with `selection.pooled_rule`),
    every record saying that no person reviewed it; it rejects nothing, and every other
    candidate stays pending for people."""
    plan = review_plan(
        read_ranked(ranked_path),
        annotations_path,
        calibration_path or calibration_beside(ranked_path),
        top=0.0,
        target=target,
        note=AUTO_NOTE,
        selection=selection,
    )
    update = record_plan(annotations_path, plan, mode="auto")
    logger.info(
        "annotation mode auto: the ranker accepted %d candidates under its rules for "
        "precision %.0f%%; %d wait for people",
        len(plan.accepted),
        100 * target,
        len(plan.pending),
    )
    return step_output(
        "annotate",
        annotations_path,
        len(update.annotations),
        summary=AnnotateSummary(
            mode="auto", pending=len(plan.pending), acceptance=plan.acceptance.summary()
        ),
    )


def push_to_label_studio(
    ranked_path: Path,
    annotations_path: Path,
    *,
    studio: LabelStudio,
    project: str,
    seeds: dict[str, TestCase],
    top: float | None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    calibration_path: Path | None = None,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> StepOutput:
    """The ranker accepts what its rule for `target` vouches for; the top of the rest goes
    into a Label Studio project (nothing imported twice); the remainder stays pending."""
    from testaug.review.label_studio import push_for_review

    check_output_folder(annotations_path)
    ranked = read_ranked(ranked_path)
    check_corrections(
        read_annotations(annotations_path),
        {item.candidate.id: item.candidate for item in ranked},
        file=annotations_path,
    )
    plan = review_plan(
        ranked,
        annotations_path,
        calibration_path or calibration_beside(ranked_path),
        top=top,
        budget=budget,
        target=target,
        selection=selection,
    )
    result = push_for_review(
        studio, project, plan, seeds=seeds, labels=task_labels(ranked, seeds.values())
    )
    update = record_plan(annotations_path, plan, mode="label-studio")
    return step_output(
        "annotate",
        annotations_path,
        len(update.annotations),
        summary=AnnotateSummary(
            mode="label-studio",
            project=project,
            project_id=result.project_id,
            created=result.created,
            sent=len(plan.review),
            imported=result.imported,
            already_present=result.already_present,
            pending=len(plan.pending),
            acceptance=plan.acceptance.summary(),
        ),
    )


def check_output_folder(path: Path) -> None:
    """An error naming `path` when it cannot be written: its folder is missing or it is a
    folder itself (checked before a step changes anything elsewhere)."""
    if path.is_dir():
        raise InputError(Problem("is a folder, not a file", file=path))
    if not path.parent.is_dir():
        raise InputError(Problem(f"its folder {path.parent} does not exist", file=path))


def pull_from_label_studio(
    annotations_path: Path, *, studio: LabelStudio, project: str
) -> StepOutput:
    """Bring people's verdicts so far into the annotations file (nothing already there lost)."""
    return pull_verdicts_into(annotations_path, studio, project)[0]


def pull_verdicts_into(
    annotations_path: Path, studio: LabelStudio, project: str
) -> tuple[StepOutput, ExportReading]:
    """Bring people's verdicts so far into the annotations file: the step's record and
    what the export held (the tasks sent, the candidates in them)."""
    from testaug.review.label_studio import pull_verdicts

    reading = pull_verdicts(studio, project)
    update = add_annotations(annotations_path, reading.annotations)
    for problem in reading.problems:
        logger.warning("skipped %s", problem)
    output = step_output(
        "pull",
        annotations_path,
        len(update.annotations),
        summary=PullSummary(
            project=project,
            verdicts=len(reading.annotations),
            added=update.added,
            changed=update.changed,
            cancelled=reading.cancelled,
            unanswered=reading.unanswered,
        ),
    )
    return output, reading


def pending_count(
    annotations_path: Path, ranked_path: Path, among: Iterable[str] | None = None
) -> int:
    """Candidates of the ranking that nobody has decided yet (only those `among`, if given)."""
    candidates = {item.candidate.id: item.candidate for item in read_ranked(ranked_path)}
    verdicts = decide(read_annotations(annotations_path), candidates)
    ids = verdicts.keys() if among is None else set(among) & verdicts.keys()
    return sum(verdicts[cid].status == "pending" for cid in ids)


def wait_for_label_studio(
    annotations_path: Path,
    ranked_path: Path,
    *,
    studio: LabelStudio,
    project: str,
    timeout: float,
    poll_seconds: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> StepOutput:
    """Pull verdicts until no candidate sent to people (a task of the project) is pending,
    or until `timeout` seconds have passed; whatever came back by then is in the
    annotations file. Candidates never sent stay pending and are not waited for."""
    deadline = time.monotonic() + timeout
    while True:
        pulled, reading = pull_verdicts_into(annotations_path, studio, project)
        pending = pending_count(annotations_path, ranked_path, among=reading.task_ids)
        if pending == 0 or time.monotonic() + poll_seconds > deadline:
            break
        logger.info("%d candidates still wait for people in %r", pending, project)
        sleep(poll_seconds)
    summary = pulled.summary.model_copy(update={"pending": pending})
    return pulled.model_copy(update={"summary": summary})


def merge_reviewed(
    annotations_path: Path,
    ranked_path: Path | None,
    out_dir: Path,
    *,
    suite_path: Path | None = None,
    candidates: Mapping[str, Candidate] | None = None,
) -> StepOutput:
    """Decide every candidate (the ranked ones and those given); write verdicts.jsonl and the
    accepted candidates as suite cases (accepted.jsonl, source `llm`) into `out_dir`, and
    with `suite_path` the suite with them added (suite.jsonl)."""
    known = dict(candidates or {})
    if ranked_path is not None:
        known.update({item.candidate.id: item.candidate for item in read_ranked(ranked_path)})
    suite = list(read_jsonl(suite_path, TestCase)) if suite_path is not None else []
    annotations = read_annotations(annotations_path)
    check_corrections(annotations, known, file=annotations_path)
    merge = merge_verdicts(annotations, known, suite)
    files = {"verdicts": out_dir / "verdicts.jsonl"}
    accepted_path = out_dir / "accepted.jsonl"
    write_jsonl(files["verdicts"], merge.verdicts.values())
    write_jsonl(accepted_path, merge.accepted)
    if suite_path is not None:
        files["suite"] = out_dir / "suite.jsonl"
        write_jsonl(files["suite"], merge.suite)
    counts = status_counts(merge.verdicts)
    logger.info("accepted %d of %d candidates", len(merge.accepted), len(known))
    summary = MergeSummary(
        **{key.replace(" ", "_"): value for key, value in counts.items()},
        suite=len(merge.suite) if suite_path is not None else None,
        added=merge.added if suite_path is not None else None,
    )
    return step_output("merge", accepted_path, len(merge.accepted), files=files, summary=summary)


@dataclass(frozen=True)
class TerminalReview:
    """A terminal session and the plan it followed (what the ranker accepted, what waits)."""

    plan: ReviewPlan
    session: TerminalSession


def review_in_terminal(
    ranked_path: Path,
    annotations_path: Path,
    *,
    seeds: dict[str, TestCase],
    annotator: str,
    read_key: KeyReader,
    console: Console,
    top: float | None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    calibration_path: Path | None = None,
    selection: SelectionConfig = DEFAULT_SELECTION,
) -> TerminalReview:
    """Ask a person in the terminal about the top of the ranking among the candidates the
    ranker's rule does not accept; each verdict is saved at once, and a second session goes
    on where one stopped. The remainder stays pending."""
    from testaug.review.terminal import annotate_in_terminal

    ranked = read_ranked(ranked_path)
    plan = review_plan(
        ranked,
        annotations_path,
        calibration_path or calibration_beside(ranked_path),
        top=top,
        budget=budget,
        target=target,
        selection=selection,
    )
    record_plan(annotations_path, plan, mode="terminal")
    done = {
        a.candidate_id
        for a in read_annotations(annotations_path)
        if a.origin == "terminal" and a.annotator == annotator
    }
    session = annotate_in_terminal(
        plan.review,
        seeds=seeds,
        labels=task_labels(ranked, seeds.values()),
        annotator=annotator,
        done=done,
        read_key=read_key,
        console=console,
        save=lambda record: add_annotations(annotations_path, [record]),
    )
    return TerminalReview(plan, session)
