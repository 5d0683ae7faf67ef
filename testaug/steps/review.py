"""Steps from ranked candidates to verdicts: the ensemble alone (mode `auto`), people in
Label Studio (push, then pull or wait), and the merge of accepted cases into the suite."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from testaug.annotation import (
    add_annotations,
    auto_review,
    plan_review,
    read_annotations,
    record_plan,
)
from testaug.errors import InputError, Problem
from testaug.jsonl import read_jsonl, write_jsonl
from testaug.records import Candidate, RankedCandidate, TestCase, label_options
from testaug.steps import StepOutput, step_output
from testaug.verdicts import merge_verdicts, status_counts

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.label_studio import LabelStudio
    from testaug.terminal_annotation import KeyReader, TerminalSession

logger = logging.getLogger(__name__)

AnnotationMode = Literal["auto", "label-studio", "terminal"]
ANNOTATION_MODES: tuple[AnnotationMode, ...] = ("auto", "label-studio", "terminal")


def read_ranked(path: Path) -> list[RankedCandidate]:
    """Ranked candidates; an error naming the file when it has none."""
    ranked = list(read_jsonl(path, RankedCandidate))
    if not ranked:
        raise InputError(Problem("no ranked candidates in the file", file=path))
    return ranked


def task_labels(ranked: Sequence[RankedCandidate], cases: Iterable[TestCase]) -> list[str]:
    """The labels annotators may correct to: the labels of the bundled suite of the task,
    and every label of the candidates and seed cases."""
    from testaug.bundled import bundled_suites, resolve_suite
    from testaug.suites import load_suite

    labels = {option for item in ranked for option in label_options(item.candidate.label)}
    labels |= {option for case in cases for option in label_options(case.label)}
    for task in {item.candidate.task for item in ranked} & set(bundled_suites()):
        labels |= set(load_suite(resolve_suite(task)).labels)
    return sorted(labels)


def review_automatically(ranked_path: Path, annotations_path: Path, *, top: float) -> StepOutput:
    """Mode `auto`: the ensemble rejects the top fraction of the ranking and accepts the rest,
    every record saying that no person reviewed it."""
    records = auto_review(read_ranked(ranked_path), top=top)
    update = add_annotations(annotations_path, records)
    rejected = sum(not record.valid for record in records)
    logger.info(
        "annotation mode auto: the ensemble rejected %d and accepted %d candidates",
        rejected,
        len(records) - rejected,
    )
    return step_output(
        "annotate",
        annotations_path,
        len(update.annotations),
        mode="auto",
        rejected_by_ranker=rejected,
        accepted_by_ranker=len(records) - rejected,
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
) -> StepOutput:
    """Import the top of the ranking into a Label Studio project; the ranker accepts the rest."""
    from testaug.label_studio import push_for_review

    ranked = read_ranked(ranked_path)
    result = push_for_review(
        studio,
        project,
        ranked,
        seeds=seeds,
        labels=task_labels(ranked, seeds.values()),
        top=top,
        budget=budget,
    )
    update = record_plan(annotations_path, result.plan)
    return step_output(
        "annotate",
        annotations_path,
        len(update.annotations),
        mode="label-studio",
        project=project,
        project_id=result.project_id,
        created=result.created,
        sent=len(result.plan.review),
        imported=result.imported,
        already_present=result.already_present,
        accepted_by_ranker=len(result.plan.accepted),
    )


def pull_from_label_studio(
    annotations_path: Path, *, studio: LabelStudio, project: str
) -> StepOutput:
    """Bring people's verdicts so far into the annotations file (nothing already there lost)."""
    from testaug.label_studio import pull_verdicts

    reading = pull_verdicts(studio, project)
    update = add_annotations(annotations_path, reading.annotations)
    for problem in reading.problems:
        logger.warning("skipped %s", problem)
    return step_output(
        "pull",
        annotations_path,
        len(update.annotations),
        project=project,
        verdicts=len(reading.annotations),
        added=update.added,
        changed=update.changed,
        cancelled=reading.cancelled,
        unanswered=reading.unanswered,
    )


def pending_count(annotations_path: Path, ranked_path: Path) -> int:
    """Candidates of the ranking that nobody has decided yet."""
    from testaug.verdicts import decide

    candidates = {item.candidate.id: item.candidate for item in read_ranked(ranked_path)}
    verdicts = decide(read_annotations(annotations_path), candidates)
    return sum(v.status == "pending" for v in verdicts.values())


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
    """Pull verdicts until no candidate sent to people is pending, or until `timeout`
    seconds have passed; whatever came back by then is in the annotations file."""
    deadline = time.monotonic() + timeout
    while True:
        pulled = pull_from_label_studio(annotations_path, studio=studio, project=project)
        pending = pending_count(annotations_path, ranked_path)
        if pending == 0 or time.monotonic() + poll_seconds > deadline:
            break
        logger.info("%d candidates still wait for people in %r", pending, project)
        sleep(poll_seconds)
    return pulled.model_copy(update={"summary": {**pulled.summary, "pending": pending}})


def merge_reviewed(annotations_path: Path, ranked_path: Path, out_dir: Path) -> StepOutput:
    """Decide every ranked candidate; write verdicts.jsonl and the accepted candidates as
    suite cases (accepted.jsonl, source `llm`) into `out_dir`."""
    candidates: dict[str, Candidate] = {
        item.candidate.id: item.candidate for item in read_ranked(ranked_path)
    }
    merge = merge_verdicts(read_annotations(annotations_path), candidates)
    verdicts_path, accepted_path = out_dir / "verdicts.jsonl", out_dir / "accepted.jsonl"
    write_jsonl(verdicts_path, merge.verdicts.values())
    write_jsonl(accepted_path, merge.accepted)
    counts = status_counts(merge.verdicts)
    logger.info("accepted %d of %d candidates", len(merge.accepted), len(candidates))
    return step_output(
        "merge",
        accepted_path,
        len(merge.accepted),
        files={"verdicts": verdicts_path},
        **{key.replace(" ", "_"): value for key, value in counts.items()},
    )


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
) -> TerminalSession:
    """Ask a person in the terminal about the top of the ranking (the ranker accepts the
    rest); each verdict is saved at once, and a second session goes on where one stopped."""
    from testaug.terminal_annotation import annotate_in_terminal

    ranked = read_ranked(ranked_path)
    plan = plan_review(ranked, top=top, budget=budget)
    record_plan(annotations_path, plan)
    done = {
        a.candidate_id
        for a in read_annotations(annotations_path)
        if a.origin == "terminal" and a.annotator == annotator
    }
    return annotate_in_terminal(
        plan.review,
        seeds=seeds,
        labels=task_labels(ranked, seeds.values()),
        annotator=annotator,
        done=done,
        read_key=read_key,
        console=console,
        save=lambda record: add_annotations(annotations_path, [record]),
    )
