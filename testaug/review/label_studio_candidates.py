"""Label Studio projects for the doubtful candidates: the labeling interface, tasks with the
ensemble's predictions, and verdicts read back from a JSON export.

The connection to the server is testaug.review.label_studio's `LabelStudio`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from pydantic import ValidationError

from testaug.core.records import Annotation, Candidate, RankedCandidate, TestCase, label_options
from testaug.review.label_studio_tasks import (
    annotator_of,
    answered_at,
    pull_export,
    push_tasks,
    tally_answers,
)
from testaug.review.plans import GUIDELINES, INVALID_REASONS, ReviewPlan, invalidity_score

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

VALIDITY = "validity"
REASON = "reason"
CORRECTED_LABEL = "corrected_label"
# What annotators see for each reason code.
REASON_CHOICES = {text: code for code, text in INVALID_REASONS.items()}
DESCRIPTION = "Validity of generated test cases (testaug)"
# When an answer whose export gives no time was given.
EPOCH = datetime.fromisoformat("1970-01-01T00:00:00+00:00")


def labeling_config(labels: Sequence[str]) -> str:
    """The labeling interface: description, seed examples, the candidate and its proposed
    label; valid or invalid, a reason for invalid, and an optional corrected label."""
    reasons = "\n".join(f"      <Choice value={quoteattr(text)}/>" for text in REASON_CHOICES)
    corrections = "\n".join(f"    <Choice value={quoteattr(label)}/>" for label in labels)
    return f"""<View>
  <Header value="Test-case description"/>
  <Text name="description" value="$description"/>
  <Header value="Examples from the template suite"/>
  <Text name="seeds" value="$seeds"/>
  <Header value="Generated case"/>
  <Text name="text" value="$text"/>
  <Text name="text_pair" value="$text_pair"/>
  <Header value="Proposed label: $label"/>
  <Choices name="{VALIDITY}" toName="text" choice="single" required="true" showInLine="true">
    <Choice value="valid"/>
    <Choice value="invalid"/>
  </Choices>
  <View visibleWhen="choice-selected" whenTagName="{VALIDITY}" whenChoiceValue="invalid">
    <Header value="Why is it invalid?"/>
    <Choices name="{REASON}" toName="text" choice="single">
{reasons}
    </Choices>
  </View>
  <Header value="Corrected label (only if the proposed label is wrong)"/>
  <Choices name="{CORRECTED_LABEL}" toName="text" choice="single" showInLine="true">
{corrections}
  </Choices>
</View>"""


def instructions_html() -> str:
    """The annotation guidelines as the project's instructions."""
    return "<p>" + GUIDELINES.replace("\n", "<br/>") + "</p>"


def task_for(item: RankedCandidate, n: int, seeds: Mapping[str, TestCase]) -> dict[str, Any]:
    """A Label Studio task for a ranked candidate, with the ensemble's score as a prediction."""
    candidate = item.candidate
    examples = [_case_line(seeds[i]) for i in candidate.seed_case_ids if i in seeds]
    score = invalidity_score(item, n)
    return {
        "data": {
            "candidate_id": candidate.id,
            "description": f"{candidate.capability}: {candidate.description}",
            "seeds": "\n".join(examples) or "(seed cases not available)",
            "text": candidate.text,
            "text_pair": candidate.text_pair or "",
            "label": " or ".join(label_options(candidate.label)),
            "rank": item.rank,
            "candidate": candidate.model_dump(mode="json"),
        },
        "predictions": [
            {
                "model_version": item.ensemble_version or "unversioned",
                "score": score,
                "result": [_choice(VALIDITY, "invalid" if score >= 0.5 else "valid")],
            }
        ],
    }


def _case_line(case: TestCase) -> str:
    text = case.text if case.text_pair is None else f"{case.text} || {case.text_pair}"
    return f"{text}  ({' or '.join(label_options(case.label))})"


def _choice(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": [value]}}


@dataclass
class ExportReading:
    """Verdicts read from an export, and what could not become one."""

    annotations: list[Annotation] = field(default_factory=list)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    task_ids: dict[str, int] = field(default_factory=dict)
    cancelled: int = 0
    unanswered: int = 0
    problems: list[str] = field(default_factory=list)


def read_export(tasks: Iterable[Mapping[str, Any]], users: Mapping[int, str]) -> ExportReading:
    """Annotation records from a Label Studio JSON export.

    Skipped (cancelled) annotations and ones without a valid/invalid choice are counted,
    not turned into verdicts, so their candidates stay pending.
    """
    reading = ExportReading()
    for task in tasks:
        data = task.get("data") or {}
        cid = data.get("candidate_id")
        if not isinstance(cid, str):
            reading.problems.append(f"task {task.get('id')}: no candidate_id in its data")
            continue
        reading.task_ids[cid] = task.get("id", 0)
        try:
            reading.candidates[cid] = Candidate.model_validate(data.get("candidate"))
        except ValidationError as exc:
            reading.problems.append(
                f"task {task.get('id')}: data.candidate: {exc.errors()[0]['msg']}"
            )
        cancelled, unanswered = tally_answers(
            task, partial(_annotation, cid, users=users), reading.annotations
        )
        reading.cancelled += cancelled
        reading.unanswered += unanswered
    return reading


def _annotation(cid: str, answer: Mapping[str, Any], users: Mapping[int, str]) -> Annotation | None:
    choices = {
        item.get("from_name"): (item.get("value") or {}).get("choices") or []
        for item in answer.get("result") or []
        if item.get("type") == "choices"
    }
    validity = choices.get(VALIDITY) or []
    if len(validity) != 1 or validity[0] not in ("valid", "invalid"):
        return None
    valid = validity[0] == "valid"
    reason = next(iter(choices.get(REASON) or []), None)
    corrected = next(iter(choices.get(CORRECTED_LABEL) or []), None)
    return Annotation(
        candidate_id=cid,
        valid=valid,
        reason=None if valid else REASON_CHOICES.get(reason or "", "capability"),
        corrected_label=corrected,
        annotator=annotator_of(answer, users),
        origin="label-studio",
        created_at=answered_at(answer, EPOCH),
    )


@dataclass(frozen=True)
class PushResult:
    """What a push did: the project, how many candidates went to people, how many were new."""

    project_id: int
    created: bool
    plan: ReviewPlan
    imported: int
    already_present: int


def push_for_review(
    studio: LabelStudio,
    project: str,
    plan: ReviewPlan,
    *,
    seeds: Mapping[str, TestCase],
    labels: Sequence[str],
    record: Path | None = None,
) -> PushResult:
    """Import the candidates a plan sends to people into a project (created if needed),
    skipping candidates it already has, so pushing twice imports nothing twice. With a
    `record`, the project is the one it names, and one found or created is recorded there."""
    n = len(plan.candidate_ids)
    tasks = [task_for(item, n, seeds) for item in plan.review]
    pushed = push_tasks(studio, project, tasks, key="candidate_id", labels=labels, record=record)
    return PushResult(
        pushed.project_id, pushed.created, plan, pushed.imported, pushed.already_present
    )


def pull_verdicts(
    studio: LabelStudio, project: str, *, record: Path | None = None
) -> ExportReading:
    """Every verdict people gave in the project so far (with a `record`, the one it names)."""
    return pull_export(studio, project, read_export, record=record)
