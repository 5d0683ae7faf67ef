"""The review step, from ranked candidates to verdicts, one function per action on one
`ReviewConfig`: the ranker accepts what its rule for a stated precision vouches for (alone
in `review_automatically`), people review the top of the rest in Label Studio (push, then
pull or wait) or the terminal, and accepted cases merge into the suite. `testaug review candidates`,
`testaug run` and the flows call these with a run's files."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import SecretStr

from testaug.core.errors import InputError, Problem
from testaug.core.file_lock import locked
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Candidate, RankedCandidate, TestCase
from testaug.core.run_folder import RunFolder
from testaug.core.settings import Settings
from testaug.review.acceptance import AcceptanceSummary
from testaug.review.plans import (
    AUTO_NOTE,
    ReviewPlan,
    add_annotations,
    read_annotations,
    record_plan,
)
from testaug.review.run_files import (
    ReviewConfig,
    check_output_folder,
    pending_count,
    read_ranked,
    review_plan,
    seed_cases,
    task_labels,
)
from testaug.review.verdicts import check_corrections, merge_verdicts, status_counts
from testaug.steps.contract import StepOutput, StepSummary, step_output

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.review.label_studio import LabelStudio
    from testaug.review.label_studio_candidates import ExportReading
    from testaug.review.terminal import KeyReader

logger = logging.getLogger(__name__)

AnnotationMode = Literal["auto", "label-studio", "terminal"]
ANNOTATION_MODES: tuple[AnnotationMode, ...] = ("auto", "label-studio", "terminal")

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"connect_label_studio"})


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
    """People's verdicts pulled from a Label Studio project (`annotations`: records in the
    file after the pull; `pending`: those sent that still wait, where the pull waited)."""

    kind: Literal["pull"] = "pull"
    project: str
    verdicts: int
    added: int
    changed: int
    cancelled: int
    unanswered: int
    annotations: int | None = None
    pending: int | None = None


class MergeSummary(StepSummary):
    """Every candidate decided (`status_counts`), with a suite its size and the cases it
    gained, and the pull the merge followed (`pull_and_merge`)."""

    kind: Literal["merge"] = "merge"
    accepted_by_people: int
    accepted_by_ranker: int
    rejected_by_people: int
    rejected_by_ranker: int
    disputed: int
    pending: int
    suite: int | None = None
    added: int | None = None
    pulled: PullSummary | None = None


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


def review_automatically(config: ReviewConfig) -> StepOutput:
    """Mode `auto`: the ranker accepts only what its rule for precision `config.accept_precision`
    vouches for (a generator without random labels of its own only with
    `selection.pooled_rule`), every record saying that no person reviewed it; it rejects
    nothing, and every other candidate stays pending for people."""
    annotations_path = config.annotations_path()
    plan = review_plan(
        read_ranked(config.ranked),
        annotations_path,
        config.calibration_path(),
        top=0.0,
        target=config.accept_precision,
        note=AUTO_NOTE,
        selection=config.selection,
    )
    update = record_plan(annotations_path, plan, mode="auto")
    logger.info(
        "annotation mode auto: the ranker accepted %d candidates under its rules for "
        "precision %.0f%%; %d wait for people",
        len(plan.accepted),
        100 * config.accept_precision,
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


def push_to_label_studio(config: ReviewConfig, *, studio: LabelStudio) -> StepOutput:
    """The ranker accepts what its rule for `config.accept_precision` vouches for; the top of the
    rest goes into the Label Studio project (nothing imported twice), shown with the seed
    cases; the remainder stays pending. Every local file is read and checked first. The
    project is the one recorded beside the annotations (found by title, or created, and
    recorded there on the first push)."""
    from testaug.review.label_studio_candidates import push_for_review

    annotations_path = config.annotations_path()
    check_output_folder(annotations_path)
    ranked = read_ranked(config.ranked)
    check_corrections(
        read_annotations(annotations_path),
        {item.candidate.id: item.candidate for item in ranked},
        file=annotations_path,
    )
    seeds = seed_cases(config.cases, config.ranked)
    plan = _people_plan(config, ranked)
    project = config.project_name()
    result = push_for_review(
        studio,
        project,
        plan,
        seeds=seeds,
        labels=task_labels(ranked, seeds.values()),
        record=config.project_record(),
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


def _people_plan(config: ReviewConfig, ranked: list[RankedCandidate]) -> ReviewPlan:
    """The plan of a review by people: the top of the ranking (within the budget) among what
    the ranker's rule does not accept, the rest pending."""
    return review_plan(
        ranked,
        config.annotations_path(),
        config.calibration_path(),
        top=config.people_top(),
        budget=config.budget,
        target=config.accept_precision,
        selection=config.selection,
    )


def review_in_terminal(
    config: ReviewConfig, *, read_key: KeyReader, console: Console
) -> StepOutput:
    """Mode `terminal`: ask a person (`config.annotator`, default: the login) about the top
    of the ranking among the candidates the ranker's rule does not accept; each verdict is
    saved at once, and a second session goes on where one stopped. The remainder stays
    pending."""
    import getpass

    from testaug.review.terminal import annotate_in_terminal

    annotator = config.annotator or getpass.getuser()
    annotations_path = config.annotations_path()
    ranked = read_ranked(config.ranked)
    seeds = seed_cases(config.cases, config.ranked)
    plan = _people_plan(config, ranked)
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
            pending=len(plan.pending),
            acceptance=plan.acceptance.summary(),
        ),
    )


def pull_from_label_studio(config: ReviewConfig, *, studio: LabelStudio) -> StepOutput:
    """Bring people's verdicts so far into the annotations file (nothing already there lost)."""
    return _pull(config, studio)[0]


def _pull(config: ReviewConfig, studio: LabelStudio) -> tuple[StepOutput, ExportReading]:
    """The pull's record and what the export held (the tasks sent, the candidates in them)."""
    from testaug.review.label_studio_candidates import pull_verdicts

    annotations_path, project = config.annotations_path(), config.project_name()
    reading = pull_verdicts(studio, project, record=config.project_record())
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
            annotations=len(update.annotations),
        ),
    )
    return output, reading


def wait_for_label_studio(
    config: ReviewConfig, *, studio: LabelStudio, sleep: Callable[[float], None] = time.sleep
) -> StepOutput:
    """Pull verdicts until no candidate sent to people (a task of the project) is pending,
    or until `config.wait_seconds` have passed, asking every `config.poll_seconds`;
    whatever came back by then is in the annotations file. Candidates never sent stay
    pending and are not waited for."""
    poll_seconds = config.poll_seconds
    deadline = time.monotonic() + config.wait_seconds
    while True:
        pulled, reading = _pull(config, studio)
        pending = pending_count(config.annotations_path(), config.ranked, among=reading.task_ids)
        if pending == 0 or time.monotonic() + poll_seconds > deadline:
            break
        logger.info("%d candidates still wait for people in %r", pending, config.project_name())
        sleep(poll_seconds)
    summary = pulled.summary.model_copy(update={"pending": pending})
    return pulled.model_copy(update={"summary": summary})


def merge_reviewed(config: ReviewConfig) -> StepOutput:
    """Decide every ranked candidate; write verdicts.jsonl and the accepted candidates as
    suite cases (accepted.jsonl, source `llm`) into `config.out` (default: the annotations'
    folder), and with `config.suite` the suite with them added (suite.jsonl)."""
    return _merge(config, ranked=config.ranked)


def pull_and_merge(config: ReviewConfig, *, studio: LabelStudio) -> StepOutput:
    """Bring people's verdicts into the annotations file, then decide every candidate (those
    ranked and those sent to Label Studio) and write the accepted ones beside it, as
    `merge_reviewed` does; without the ranking, only candidates sent there are merged. The
    merge's record, with the pull in its summary."""
    pulled, reading = _pull(config, studio)
    ranked: Path | None = config.ranked
    if not config.ranked.exists():
        logger.warning(
            "no %s: only candidates sent to Label Studio can be merged (pass --ranked)",
            config.ranked,
        )
        ranked = None
    merged = _merge(config, ranked=ranked, candidates=reading.candidates)
    assert isinstance(pulled.summary, PullSummary) and isinstance(merged.summary, MergeSummary)
    summary = merged.summary.model_copy(update={"pulled": pulled.summary})
    files = {**merged.files, "annotations": pulled.path}
    return merged.model_copy(update={"summary": summary, "files": files})


def _merge(
    config: ReviewConfig,
    *,
    ranked: Path | None,
    candidates: Mapping[str, Candidate] | None = None,
) -> StepOutput:
    annotations_path = config.annotations_path()
    out_dir = config.out or annotations_path.parent
    known = dict(candidates or {})
    if ranked is not None:
        known.update({item.candidate.id: item.candidate for item in read_ranked(ranked)})
    written = RunFolder(out_dir)
    files = {"verdicts": written.verdicts}
    accepted_path = written.accepted
    out_dir.mkdir(parents=True, exist_ok=True)
    # The suite read may be the one written (a run's suite merged into again): one at a time.
    with locked(written.suite) if config.suite is not None else nullcontext():
        suite = list(read_jsonl(config.suite, TestCase)) if config.suite is not None else []
        annotations = read_annotations(annotations_path)
        check_corrections(annotations, known, file=annotations_path)
        merge = merge_verdicts(annotations, known, suite)
        write_jsonl(files["verdicts"], merge.verdicts.values())
        write_jsonl(accepted_path, merge.accepted)
        if config.suite is not None:
            files["suite"] = written.suite
            write_jsonl(files["suite"], merge.suite)
    counts = status_counts(merge.verdicts)
    logger.info("accepted %d of %d candidates", len(merge.accepted), len(known))
    summary = MergeSummary(
        **{key.replace(" ", "_"): value for key, value in counts.items()},
        suite=len(merge.suite) if config.suite is not None else None,
        added=merge.added if config.suite is not None else None,
    )
    return step_output("merge", accepted_path, len(merge.accepted), files=files, summary=summary)
