"""Annotation plans and records: which ranked candidates people review, which the ranker
accepts, and the annotations file that collects every verdict of a run."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from testaug.errors import InputError, Problem
from testaug.jsonl import read_jsonl, write_jsonl
from testaug.records import Annotation, InvalidReason, RankedCandidate

# The paper's three criteria (TestAug, section 5.4.2 and Figure 4), plus malformed text.
INVALID_REASONS: dict[InvalidReason, str] = {
    "capability": "does not show the capability of the description",
    "label": "does not have the right label",
    "private_or_offensive": "includes private information or offensive content",
    "malformed": "is malformed (not a sentence, broken pair, cut off)",
}

GUIDELINES = """\
Label each generated case as valid or invalid. A case is invalid if it
(1) does not show the linguistic capability in the description, or
(2) does not have the correct label, or
(3) includes private information or offensive content.
Cases that are not well-formed sentences (or pairs) are invalid too.
If only the label is wrong, you may give the correct label instead."""


def review_count(n: int, *, top: float | None = None, budget: int | None = None) -> int:
    """How many of n ranked candidates people review: the top fraction, capped by a budget."""
    if top is None and budget is None:
        raise InputError(Problem("give the fraction to review (top) or a budget", field="top"))
    if top is not None and not 0.0 <= top <= 1.0:
        raise InputError(Problem(f"must be between 0 and 1, got {top}", field="top"))
    if budget is not None and budget < 0:
        raise InputError(Problem(f"must be 0 or more, got {budget}", field="budget"))
    count = n if top is None else math.ceil(round(top * n, 9))
    return count if budget is None else min(count, budget)


def review_rule(count: int, n: int, *, top: float | None, budget: int | None) -> str:
    """The rule, in words, that accepted every candidate below the top `count` of n."""
    asked = [f"top {top:.0%}" if top is not None else None, f"budget {budget}" if budget else None]
    why = " and ".join(part for part in asked if part)
    return f"ranked below the {count} of {n} candidates sent for review ({why})"


@dataclass(frozen=True)
class ReviewPlan:
    """Ranked candidates split into those people review and those the ranker accepts."""

    review: list[RankedCandidate]
    accepted: list[Annotation]


def plan_review(
    ranked: Sequence[RankedCandidate], *, top: float | None = None, budget: int | None = None
) -> ReviewPlan:
    """Send the top of the ranking to people; record the rest as accepted by the ensemble."""
    ordered = sorted(ranked, key=lambda item: item.rank)
    count = review_count(len(ordered), top=top, budget=budget)
    rule = review_rule(count, len(ordered), top=top, budget=budget)
    accepted = [
        Annotation(
            candidate_id=item.candidate.id,
            valid=True,
            annotator=f"ensemble {item.ensemble_version or 'unversioned'}",
            origin="ranker",
            rule=f"rank {item.rank}: {rule}",
        )
        for item in ordered[count:]
    ]
    return ReviewPlan(review=list(ordered[:count]), accepted=accepted)


AUTO_NOTE = "annotation mode auto: the ranker ensemble's verdict alone, no person reviewed it"


def auto_review(
    ranked: Sequence[RankedCandidate], *, top: float | None = None, budget: int | None = None
) -> list[Annotation]:
    """Annotation mode `auto`, for unattended runs: the ensemble rejects the top of the
    ranking (the candidates people would have reviewed) and accepts the rest."""
    ordered = sorted(ranked, key=lambda item: item.rank)
    count = review_count(len(ordered), top=top, budget=budget)
    share = f"top {count} of {len(ordered)}"
    records = []
    for index, item in enumerate(ordered):
        doubtful = index < count
        where = f"in the {share}" if doubtful else f"below the {share}"
        records.append(
            Annotation(
                candidate_id=item.candidate.id,
                valid=not doubtful,
                annotator=f"ensemble {item.ensemble_version or 'unversioned'}",
                origin="ranker",
                rule=f"rank {item.rank}: {where} most likely invalid; {AUTO_NOTE}",
            )
        )
    return records


def invalidity_score(item: RankedCandidate, n: int) -> float:
    """The ensemble's Borda points as a score in [0, 1]: 1 is ranked first by every member."""
    most = (n - 1) * max(len(item.scores), 1)
    return 1.0 if most <= 0 else round(item.borda_points / most, 6)


def annotation_key(annotation: Annotation) -> tuple[str, str, str]:
    """Who said what about which candidate: one record per key in an annotations file."""
    return (annotation.candidate_id, annotation.origin, annotation.annotator)


def read_annotations(path: Path) -> list[Annotation]:
    """The annotations collected so far; none when the file does not exist yet."""
    return list(read_jsonl(path, Annotation)) if path.exists() else []


@dataclass(frozen=True)
class AnnotationUpdate:
    """An annotations file after new records came in: what was added and what changed."""

    annotations: list[Annotation]
    added: int
    changed: int
    withdrawn: int = 0


def merge_annotations(
    existing: Iterable[Annotation],
    incoming: Iterable[Annotation],
    *,
    withdraw_ranker_for: Iterable[str] = (),
) -> AnnotationUpdate:
    """Add incoming records to existing ones, never dropping a person's verdict.

    A record with the key of an existing one replaces it (an edited annotation).
    `withdraw_ranker_for` names candidates now sent to people: the ranker's
    acceptance of them is withdrawn.
    """
    withdraw = set(withdraw_ranker_for)
    merged: dict[tuple[str, str, str], Annotation] = {}
    withdrawn = 0
    for record in existing:
        if record.origin == "ranker" and record.candidate_id in withdraw:
            withdrawn += 1
            continue
        merged[annotation_key(record)] = record
    added = changed = 0
    for record in incoming:
        key = annotation_key(record)
        old = merged.get(key)
        if old is None:
            added += 1
        elif _verdict_fields(old) != _verdict_fields(record):
            changed += 1
        else:
            continue
        merged[key] = record
    return AnnotationUpdate(list(merged.values()), added, changed, withdrawn)


def save_annotations(path: Path, annotations: Sequence[Annotation]) -> None:
    """Write the annotations file atomically, grouped by candidate."""
    write_jsonl(path, sorted(annotations, key=annotation_key))


def add_annotations(
    path: Path, incoming: Iterable[Annotation], *, withdraw_ranker_for: Iterable[str] = ()
) -> AnnotationUpdate:
    """Merge records into the annotations file at `path` (see `merge_annotations`)."""
    update = merge_annotations(
        read_annotations(path), incoming, withdraw_ranker_for=withdraw_ranker_for
    )
    save_annotations(path, update.annotations)
    return update


def record_plan(path: Path, plan: ReviewPlan) -> AnnotationUpdate:
    """Write the ranker's acceptances under this plan, replacing any earlier ranker record
    of the same candidates (a candidate now sent to people loses its acceptance)."""
    planned = [item.candidate.id for item in plan.review] + [a.candidate_id for a in plan.accepted]
    return add_annotations(path, plan.accepted, withdraw_ranker_for=planned)


def _verdict_fields(record: Annotation) -> tuple[object, ...]:
    return (record.valid, record.reason, record.corrected_label, record.rule)
