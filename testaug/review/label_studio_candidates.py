"""Label Studio projects for the doubtful candidates: the labeling interface, tasks with the
ensemble's predictions, and verdicts read back from a JSON export.

The connection to the server is testaug.review.label_studio's `LabelStudio`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import quoteattr

from pydantic import ValidationError

from testaug.core.records import Annotation, Candidate, RankedCandidate, TestCase, label_options
from testaug.review.kernel import Flawed, LabelStudioReading, Problem, push_items
from testaug.review.kernel import read_export as read_kernel_export
from testaug.review.label_studio_tasks import annotator_of, answered_at
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


@dataclass(frozen=True)
class CandidateTask:
    """What an exported candidate task carries for its verdicts: the candidate's id, the
    task's id and the candidate itself (None when it could not be read)."""

    candidate_id: str
    task_id: int
    candidate: Candidate | None


@dataclass(frozen=True)
class CandidatesInLabelStudio:
    """Candidates as a kind of item of the review kernel: one task per ranked candidate,
    with the ensemble's score as a prediction (scaled over the `n` candidates of the
    plan), its seed cases beside it, and corrected labels among `labels`."""

    labels: Sequence[str] = ()
    seeds: Mapping[str, TestCase] = field(default_factory=dict)
    n: int = 0
    task_key: str = "candidate_id"
    description: str = DESCRIPTION

    @property
    def label_config(self) -> str:
        return labeling_config(self.labels)

    @property
    def instructions(self) -> str:
        return instructions_html()

    def task(self, item: RankedCandidate, rank: int) -> dict[str, Any]:
        return task_for(item, self.n, self.seeds)

    def read_task(self, task: Mapping[str, Any]) -> CandidateTask | Flawed[CandidateTask] | Problem:
        data = task.get("data") or {}
        cid = data.get("candidate_id")
        if not isinstance(cid, str):
            return Problem("no candidate_id in its data")
        try:
            candidate = Candidate.model_validate(data.get("candidate"))
        except ValidationError as exc:
            problem = Problem(f"data.candidate: {exc.errors()[0]['msg']}")
            return Flawed(CandidateTask(cid, task.get("id", 0), None), problem)
        return CandidateTask(cid, task.get("id", 0), candidate)

    def verdict(
        self, context: CandidateTask, answer: Mapping[str, Any], users: Mapping[int, str]
    ) -> Annotation | None:
        return _annotation(context.candidate_id, answer, users)


@dataclass
class ExportReading:
    """Verdicts read from an export, and what could not become one."""

    annotations: list[Annotation] = field(default_factory=list)
    candidates: dict[str, Candidate] = field(default_factory=dict)
    task_ids: dict[str, int] = field(default_factory=dict)
    cancelled: int = 0
    unanswered: int = 0
    problems: list[str] = field(default_factory=list)


def _export_reading(reading: LabelStudioReading[CandidateTask, Annotation]) -> ExportReading:
    """The kernel's reading of candidate tasks, with each task's candidate and id by
    candidate id, and the candidates that could not be read among the problems."""
    contexts = reading.contexts.values()
    return ExportReading(
        annotations=reading.verdicts,
        candidates={c.candidate_id: c.candidate for c in contexts if c.candidate is not None},
        task_ids={c.candidate_id: c.task_id for c in contexts},
        cancelled=reading.cancelled,
        unanswered=reading.unanswered,
        problems=reading.problems,
    )


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
    kind = CandidatesInLabelStudio(labels, seeds, len(plan.candidate_ids))
    pushed = push_items(studio, project, kind, plan.review, record=record)
    return PushResult(
        pushed.project_id, pushed.created, plan, pushed.imported, pushed.already_present
    )


def pull_verdicts(
    studio: LabelStudio, project: str, *, record: Path | None = None
) -> ExportReading:
    """Every verdict people gave in the project so far (with a `record`, the one it names)."""
    return _export_reading(
        read_kernel_export(studio, project, CandidatesInLabelStudio(), record=record)
    )
