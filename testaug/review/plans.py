"""Annotation plans and records: which ranked candidates the ranker accepts under a stated
precision, which people review, and the annotations file that collects every verdict."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.file_lock import locked
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Annotation, Calibration, InvalidReason, RankedCandidate
from testaug.core.runs import remove_stale_temporaries, sibling, write_json
from testaug.review.acceptance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_TARGET,
    RuleAcceptance,
    accept_by_rule,
)
from testaug.review.selection import (
    DEFAULT_CALIBRATION_SIZE,
    DEFAULT_UNCERTAIN_UNTIL,
    Draw,
    draws_of,
    order_for_people,
)

# The share of the candidates the ranker leaves that people review, unless told otherwise
# (TestAug's annotators checked the top 30% of the ranking).
DEFAULT_REVIEW_FRACTION = 0.3

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


@dataclass(frozen=True)
class ReviewPlan:
    """Ranked candidates split three ways: those the ranker accepts under the rule for a
    precision target, those people review (the top of the ranking among the rest), and
    those that stay pending. `acceptance` holds the rules and what they accepted."""

    review: list[RankedCandidate]
    accepted: list[Annotation]
    pending: list[RankedCandidate]
    acceptance: RuleAcceptance
    draws: list[Draw] = field(default_factory=list)  # how each reviewed candidate was drawn

    @property
    def candidate_ids(self) -> list[str]:
        """Every candidate the plan covers."""
        return [
            *(item.candidate.id for item in self.review),
            *(record.candidate_id for record in self.accepted),
            *(item.candidate.id for item in self.pending),
        ]


def plan_review(
    ranked: Sequence[RankedCandidate],
    calibration: Calibration | None,
    *,
    top: float | None = None,
    budget: int | None = None,
    target: float = DEFAULT_TARGET,
    confidence: float = DEFAULT_CONFIDENCE,
    judged: Collection[str] = (),
    note: str | None = None,
    source: Path | None = None,
    pooled: bool = False,
    drawn: Mapping[str, Draw] | None = None,
    calibration_size: int = DEFAULT_CALIBRATION_SIZE,
    uncertain_until: int = DEFAULT_UNCERTAIN_UNTIL,
) -> ReviewPlan:
    """The ranker accepts what the rule for `target` vouches for (see `accept_by_rule`);
    people review `top` of the rest (capped by `budget`), in the order `order_for_people`
    gives: a random calibration sample and then the most uncertain candidates for a
    generator without its own precision curve, the top of the ranking for one with it.
    The remainder stays pending. `judged` names candidates a person already judged: the
    ranker never accepts them; `drawn` holds the earlier draws."""
    acceptance = accept_by_rule(
        ranked,
        calibration,
        target=target,
        confidence=confidence,
        judged=judged,
        note=note,
        source=source,
        pooled=pooled,
    )
    count = review_count(len(acceptance.rest), top=top, budget=budget)
    chosen = order_for_people(
        acceptance.rest,
        count,
        calibration=calibration,
        drawn=drawn or {},
        calibration_size=calibration_size,
        uncertain_until=uncertain_until,
    )
    picked = {item.candidate.id for item, _ in chosen}
    return ReviewPlan(
        review=[item for item, _ in chosen],
        accepted=acceptance.accepted,
        pending=[item for item in acceptance.rest if item.candidate.id not in picked],
        acceptance=acceptance,
        draws=draws_of(chosen),
    )


AUTO_NOTE = "annotation mode auto: the ranker ensemble's verdict alone, no person reviewed it"


def people_judged(annotations: Iterable[Annotation]) -> set[str]:
    """The candidates some person has given a verdict on."""
    return {record.candidate_id for record in annotations if record.origin != "ranker"}


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
    """Merge records into the annotations file at `path` (see `merge_annotations`), read
    and rewritten while holding its write lock, so that concurrent reviewers lose nothing;
    what killed writes left in its folder is removed."""
    incoming = list(incoming)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        remove_stale_temporaries(path.parent)
        update = merge_annotations(
            read_annotations(path), incoming, withdraw_ranker_for=withdraw_ranker_for
        )
        save_annotations(path, update.annotations)
    return update


def record_plan(path: Path, plan: ReviewPlan, *, mode: str | None = None) -> AnnotationUpdate:
    """Write the ranker's acceptances under this plan, replacing every earlier ranker record
    of the candidates it covers: one now sent to people, or left pending, loses an earlier
    acceptance (or an older auto mode's rejection); people's verdicts stay. The plan's
    rules and counts, with the annotation `mode`, go beside the annotations
    (`acceptance_path`)."""
    update = add_annotations(path, plan.accepted, withdraw_ranker_for=plan.candidate_ids)
    write_json(
        acceptance_path(path),
        {
            "mode": mode,
            **plan.acceptance.summary().model_dump(mode="json"),
            "sent_to_people": len(plan.review),
            "pending": len(plan.pending),
        },
    )
    return update


def acceptance_path(annotations_path: Path) -> Path:
    """Where `record_plan` states the latest plan's rules and counts, beside the annotations
    (`annotations.acceptance.json`): the target it used, even where it accepted nothing."""
    return sibling(annotations_path, "acceptance", ".json")


def _verdict_fields(record: Annotation) -> tuple[object, ...]:
    return (record.valid, record.reason, record.corrected_label, record.rule)
