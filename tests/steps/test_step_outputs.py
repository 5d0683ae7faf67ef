"""Step outputs as the flows keep them: every kind of summary survives JSON (Prefect persists
a task's StepOutput with its JSON serializer and reads it back in a later process) as the
same record, and a summary that is not one of the steps' records is refused."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from pydantic import ValidationError

from testaug.core.records import AcceptanceRule
from testaug.review.acceptance import AcceptanceSummary, GroupAcceptance
from testaug.steps import AnySummary, StepOutput, StepSummary, step_output
from testaug.steps.augment import CombineSummary, ExpandSummary, GenerateSummary
from testaug.steps.grow import ExpandInducedSummary, InduceSummary, SuiteSummary
from testaug.steps.measure import (
    CombineEvaluationsSummary,
    DiversityStepSummary,
    EvaluateSummary,
    HeadlineSummary,
    PatchSummary,
    PerturbSummary,
    ReportSummary,
)
from testaug.steps.rank import RankSummary
from testaug.steps.rankers import RankersSummary
from testaug.steps.review import AnnotateSummary, MergeSummary, PullSummary

RULE = AcceptanceRule(
    group="m",
    target=0.9,
    confidence=0.95,
    threshold=0.92,
    precision_estimate=0.97,
    precision_lower_bound=0.91,
    accepted=40,
    calibration_n=60,
)
ACCEPTANCE = AcceptanceSummary(
    accept_precision=0.9,
    confidence=0.95,
    accepted_by_ranker=3,
    groups={
        "m": GroupAcceptance(candidates=10, accepted=3, rule=RULE),
        "other": GroupAcceptance(candidates=2, accepted=0, rule=None),
    },
    no_rule=None,
)
SUMMARIES: list[StepSummary] = [
    ExpandSummary(suite="sentiment", task="sentiment"),
    GenerateSummary(
        prompts=4,
        rejects=1,
        requests=5,
        retries=1,
        cached_samples=2,
        fresh_samples=3,
        prompt_tokens=120,
        completion_tokens=80,
    ),
    CombineSummary(rejects=2, prompts=8, requests=9, cached_samples=2, fresh_samples=7),
    RankSummary(ensemble="v1"),
    RankSummary(ensemble="v2", from_people=8, from_extra=0),
    AnnotateSummary(mode="auto", pending=7, acceptance=ACCEPTANCE),
    AnnotateSummary(
        mode="label-studio",
        project="testaug run",
        project_id=3,
        created=True,
        sent=3,
        imported=3,
        already_present=0,
        pending=4,
        acceptance=ACCEPTANCE.model_copy(update={"no_rule": "the ranker accepts nothing"}),
    ),
    AnnotateSummary(
        mode="terminal",
        annotated=2,
        valid=1,
        invalid=1,
        skipped=1,
        remaining=1,
        pending=4,
        acceptance=ACCEPTANCE,
    ),
    PullSummary(project="p", verdicts=3, added=3, changed=0, cancelled=1, unanswered=0),
    PullSummary(project="p", verdicts=1, added=1, changed=0, cancelled=0, unanswered=0, pending=2),
    MergeSummary(
        accepted_by_people=2,
        accepted_by_ranker=3,
        rejected_by_people=1,
        rejected_by_ranker=0,
        disputed=1,
        pending=4,
    ),
    MergeSummary(
        accepted_by_people=2,
        accepted_by_ranker=0,
        rejected_by_people=0,
        rejected_by_ranker=0,
        disputed=0,
        pending=0,
        suite=8,
        added=2,
    ),
    InduceSummary(
        from_cases=3, fills=3, per_capability={"Negation": 1}, skipped={"no_slot_word": 2}
    ),
    ExpandInducedSummary(templates=1, provenance={"expansion-verified": 2}),
    SuiteSummary(added=5, by_source={"template": 8, "llm": 5}, by_provenance={"people": 5}),
    DiversityStepSummary(self_bleu=0.42, dependency_paths=17, n_cases=11),
    PerturbSummary(),
    EvaluateSummary(model="vader", error_rate=25.0, evidence="verified"),
    EvaluateSummary(model="empty", error_rate=None, evidence=None),
    CombineEvaluationsSummary(
        error_rates={"vader": 25.0, "empty": None},
        evidence="verified",
        headline={
            "vader": HeadlineSummary(evidence="verified", fallback=False, left_out=4, note="n"),
            "empty": HeadlineSummary(evidence="all", fallback=True, left_out=0, note="none"),
        },
    ),
    PatchSummary(suite_names=("template", "augmented")),
    ReportSummary(sections=("Run", "Diversity")),
    RankersSummary(version="v1", trained_on=120),
    RankersSummary(version="v2", trained_on=124, from_people=4, shipped=120),
]


def output_of(summary: StepSummary, tmp_path: Path) -> StepOutput:
    main = tmp_path / "out.jsonl"
    main.write_text("{}\n", encoding="utf-8")
    files = {"rejects": tmp_path / "out.rejects.jsonl"}
    return step_output("step", main, 1, files=files, summary=summary)


def test_every_kind_of_summary_has_an_example_here():
    members = typing.get_args(typing.get_args(AnySummary)[0])
    kinds = {member.model_fields["kind"].default for member in members}
    assert len(kinds) == len(members)  # each kind once
    assert kinds == {summary.kind for summary in SUMMARIES}


@pytest.mark.parametrize("summary", SUMMARIES, ids=lambda s: f"{s.kind}")
def test_a_step_output_comes_back_from_json_as_the_same_record(summary, tmp_path):
    output = output_of(summary, tmp_path)
    persisted = json.dumps(output.model_dump(mode="json"))  # what Prefect's serializer writes
    again = StepOutput.model_validate(json.loads(persisted))
    assert again == output
    assert type(again.summary) is type(summary)
    assert StepOutput.model_validate_json(output.model_dump_json()) == output


def test_prefects_json_serializer_gives_back_the_typed_summary(tmp_path):
    serializers = pytest.importorskip("prefect.serializers")
    serializer = serializers.JSONSerializer()
    for summary in SUMMARIES:
        output = output_of(summary, tmp_path)
        again = serializer.loads(serializer.dumps(output))
        assert again == output and type(again.summary) is type(summary)


def test_summaries_read_by_attribute_with_the_acceptance_nested_in_the_annotate_one(tmp_path):
    output = output_of(SUMMARIES[5], tmp_path)
    again = StepOutput.model_validate_json(output.model_dump_json())
    assert again.summary.pending == 7 and again.summary.sent is None
    assert again.summary.acceptance.groups["m"].rule == RULE
    assert again.summary.acceptance.groups["other"].rule is None


def dumped(summary: StepSummary, tmp_path: Path) -> dict:
    return output_of(summary, tmp_path).model_dump(mode="json")


def test_a_summary_with_an_unknown_field_is_refused(tmp_path):
    data = dumped(SUMMARIES[1], tmp_path)
    data["summary"]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        StepOutput.model_validate(data)


def test_a_nested_acceptance_with_an_unknown_field_is_refused(tmp_path):
    data = dumped(SUMMARIES[5], tmp_path)
    data["summary"]["acceptance"]["groups"]["m"]["surprise"] = 1
    with pytest.raises(ValidationError, match="surprise"):
        StepOutput.model_validate(data)


def test_a_summary_of_an_unknown_kind_or_without_a_kind_is_refused(tmp_path):
    data = dumped(SUMMARIES[0], tmp_path)
    data["summary"]["kind"] = "teleport"
    with pytest.raises(ValidationError, match="teleport"):
        StepOutput.model_validate(data)
    del data["summary"]["kind"]
    with pytest.raises(ValidationError, match="kind"):
        StepOutput.model_validate(data)


def test_a_summary_that_leaves_out_a_field_its_kind_needs_is_refused(tmp_path):
    data = dumped(SUMMARIES[1], tmp_path)
    del data["summary"]["requests"]
    with pytest.raises(ValidationError, match="requests"):
        StepOutput.model_validate(data)
