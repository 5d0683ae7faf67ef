"""The steps' contract (testaug/steps/contract.py), walked over every step module.

The rule: a step module's public functions (defined in it, not starting with `_`) are its
steps, and each is annotated to return a `StepOutput`; a public function that is not a
step is named in the module's `HELPERS` (a frozenset), and none of those returns a
`StepOutput`. Every module of `testaug.steps` but the contract itself and the run
configuration (`config`) has at least one step. Every kind of summary comes back from JSON
(as Prefect persists a task's StepOutput and reads it in a later process) as the same
record, and a summary of an unknown kind, or without a kind, is refused."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Literal

import numpy as np
import pytest
from pydantic import ValidationError

import testaug.steps
from rankers.evaluation.report import evaluate_scores
from testaug.adaptive.retest import TopicChange
from testaug.adaptive.suggestions import RoundCounts, SuggestionRoundConfig
from testaug.core.records import AcceptanceRule
from testaug.editor.lexicon_writer import FileUpdate
from testaug.fixing.debugging.records import FixLoop, LoopStop
from testaug.review.acceptance import AcceptanceSummary, GroupAcceptance
from testaug.steps.adapt import AdaptSummary
from testaug.steps.augment import CombineSummary, ExpandSummary, GenerateSummary
from testaug.steps.contract import (
    StepOutput,
    StepSummary,
    step_output,
    summary_class,
    summary_kinds,
)
from testaug.steps.fix import FixSummary
from testaug.steps.generalize import GeneralizeSummary
from testaug.steps.grow import ExpandInducedSummary, InduceSummary, SuiteSummary
from testaug.steps.lexicon_review import (
    LexiconApplySummary,
    LexiconPullSummary,
    LexiconPushSummary,
    LexiconReviewSummary,
    LexiconWrite,
)
from testaug.steps.measure import (
    CombineEvaluationsSummary,
    DiversityStepSummary,
    EvaluateSummary,
    HeadlineSummary,
    PerturbSummary,
    ReportSummary,
)
from testaug.steps.patch import PatchSummary
from testaug.steps.rank import RankSummary
from testaug.steps.rankers import HardCasesSummary, RankersEvaluationSummary, RankersSummary
from testaug.steps.retest import RetestSummary
from testaug.steps.review import AnnotateSummary, MergeSummary, PullSummary
from testaug.steps.suggest import SuggestSummary
from testaug.steps.suggestion_review import (
    RoundsSummary,
    SuggestionAddSummary,
    SuggestionPullSummary,
    SuggestionPushSummary,
    SuggestionReviewSummary,
    TreeUpdate,
)
from tests.fixing.test_debugging_loop import _round
from tests.tiny_models import make_labelled

NOT_STEP_MODULES = {"testaug.steps.contract", "testaug.steps.config"}


def step_modules() -> list[ModuleType]:
    """Every module of the testaug.steps package but the contract and the configuration."""
    names = [m.name for m in pkgutil.iter_modules(testaug.steps.__path__, "testaug.steps.")]
    return [importlib.import_module(name) for name in sorted(names) if name not in NOT_STEP_MODULES]


def public_functions(module: ModuleType) -> dict[str, object]:
    """The public functions defined in the module itself (not those it imports), and the
    verbs of a kind of review it defines, offered by name (`TESTS.push` as
    `push_suggestions_file`)."""
    return {
        name: value
        for name, value in vars(module).items()
        if defined_in(value, module.__name__) and not name.startswith("_")
    }


def defined_in(value: object, module: str) -> bool:
    if inspect.ismethod(value):
        return type(value.__self__).__module__ == module
    return inspect.isfunction(value) and value.__module__ == module


def returns_step_output(function: object) -> bool:
    annotation = inspect.signature(function).return_annotation  # type: ignore[arg-type]
    return annotation in ("StepOutput", StepOutput)


def steps_of(module: ModuleType) -> list[str]:
    """The module's steps: its public functions less its HELPERS."""
    helpers = getattr(module, "HELPERS", frozenset())
    return sorted(set(public_functions(module)) - helpers)


MODULES = step_modules()


def test_the_walk_finds_every_step_module():
    names = {module.__name__.rpartition(".")[2] for module in MODULES}
    assert {"adapt", "fix", "generalize", "lexicon_review", "review", "suggest"} <= names
    assert "annotate" not in names  # merged into the review step


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__.rpartition(".")[2])
def test_every_public_function_of_a_step_module_is_a_step_or_a_named_helper(module):
    functions = public_functions(module)
    helpers = getattr(module, "HELPERS", frozenset())
    assert isinstance(helpers, frozenset)
    assert helpers <= set(functions), f"HELPERS names no function: {helpers - set(functions)}"
    steps = steps_of(module)
    assert steps, f"{module.__name__} has no step"
    not_steps = [name for name in steps if not returns_step_output(functions[name])]
    assert not not_steps, f"public functions that return no StepOutput: {not_steps}"
    helpers_steps = [name for name in helpers if returns_step_output(functions[name])]
    assert not helpers_steps, f"helpers that are steps: {helpers_steps}"


def test_every_summary_class_of_a_step_module_is_recorded_under_its_kind():
    kinds = summary_kinds()
    for module in MODULES:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, StepSummary)
                and value is not StepSummary
                and value.__module__ == module.__name__
            ):
                assert kinds[value.model_fields["kind"].default] is value


def test_a_summary_must_declare_one_literal_kind_and_no_other_class_may_take_it():
    with pytest.raises(TypeError, match="must declare its kind"):

        class Loose(StepSummary):  # no Literal
            kind: str = "loose"

    with pytest.raises(TypeError, match="'rank'"):

        class Impostor(StepSummary):
            kind: Literal["rank"] = "rank"

    assert summary_class("rank") is RankSummary


FIX_ROUND = _round({"/A": 10.0}, before={"/A": 40.0})
TREE = TreeUpdate(tree=Path("tree.jsonl"), accepted=2, added=1, rows=9)
WRITTEN = LexiconWrite(
    files=(
        FileUpdate(
            path=Path("lexicons.yaml"),
            added={"positive_verb": ["adore", "cherish"]},
            created=["positive_verb"],
            already_there=1,
        ),
    )
)
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
    RankersSummary(
        version="v3", trained_on=40, invalid=12, train_seconds={"m": 1.5, "adaptation": 0.3}
    ),
    RankersEvaluationSummary(
        triage=evaluate_scores(make_labelled(["a", "b"], ["c"]), {"m": np.array([0.1, 0.2, 0.9])})
    ),
    HardCasesSummary(kinds={"label": 3, "other_template": 4}, valid=4),
    PullSummary(
        project="p", verdicts=2, added=2, changed=0, cancelled=0, unanswered=0, annotations=5
    ),
    MergeSummary(
        accepted_by_people=1,
        accepted_by_ranker=0,
        rejected_by_people=0,
        rejected_by_ranker=0,
        disputed=0,
        pending=3,
        pulled=PullSummary(
            project="p", verdicts=1, added=1, changed=0, cancelled=0, unanswered=1, annotations=1
        ),
    ),
    AdaptSummary(
        topic="/Negation",
        target="vader",
        models=["vader", "empty"],
        backend="openai",
        model="scripted",
        round=1,
        settings=SuggestionRoundConfig(suggestions=20),
        counts=RoundCounts(
            prompts=2,
            prompt_sizes=(7, 7),
            per_prompt=10,
            requested=20,
            completions=20,
            malformed={"no_input": 1},
            duplicates=2,
            in_tree=1,
            in_subtopic=0,
            kept=16,
            generation={"requests": 2},
        ),
        ensemble="v1",
        failing=5,
    ),
    FixSummary(
        loop=FixLoop(
            work="work", rounds=(FIX_ROUND,), stop=LoopStop(reason="rounds", message="done")
        )
    ),
    GeneralizeSummary(
        model="minilm",
        seeds=(42, 43),
        cases=40,
        iid_train=10,
        iid_test=10,
        g_standard=0.61,
        g={"IID+T vanilla": {"seen": 0.7, "func": 0.5}},
        g_p={"IID+T vanilla": {"seen": 0.01}},
        selected={"IID+T vanilla": "lr 2e-05, 3 epochs, batch 16"},
    ),
    GeneralizeSummary(
        model="minilm", seeds=(42,), cases=4, iid_train=2, iid_test=2, g_standard=None, g={}
    ),
    SuggestSummary(text="I {mask} it.", suggestions=3, candidates=120, seconds=0.5),
    SuggestSummary(text="I {mask} it.", suggestions=0, notes=("no WordNet",)),
    SuggestionAddSummary(tree=TREE),
    SuggestionReviewSummary(
        judged=3, accepted=2, invalid=1, off_topic=0, skipped=1, remaining=0, tree=TREE
    ),
    SuggestionPushSummary(project="s", project_id=4, created=True, imported=3, already_present=0),
    SuggestionPullSummary(
        project="s",
        verdicts=3,
        added=3,
        changed=0,
        cancelled=1,
        unanswered=0,
        problems=("task 7: no choice",),
        tree=TREE,
    ),
    RoundsSummary(
        rounds=2,
        verdicts=3,
        new_verdicts=1,
        latest_suggestions=2,
        latest_verdicts=1,
        accepted=2,
        added=1,
        tree_rows=9,
    ),
    LexiconReviewSummary(
        judged=4, kept=2, dropped=1, skipped=1, remaining=0, already_in=3, written=WRITTEN
    ),
    LexiconPushSummary(
        project="w", project_id=5, created=False, imported=2, already_present=1, already_in=3
    ),
    LexiconPullSummary(
        project="w", verdicts=2, fresh=2, cancelled=0, unanswered=0, written=LexiconWrite()
    ),
    LexiconApplySummary(written=WRITTEN),
    RetestSummary(model="vader", tests=12, failing=3, failure_rate=25.0, topics=4),
    RetestSummary(
        model="vader",
        tests=12,
        failing=0,
        failure_rate=None,
        topics=4,
        previous=Path("tree.reports/tree_report.1.json"),
        changes=(TopicChange(topic="/A", kind="newly failing", before=0.0, after=20.0),),
    ),
]


def output_of(summary: StepSummary, tmp_path: Path) -> StepOutput:
    main = tmp_path / "out.jsonl"
    main.write_text("{}\n", encoding="utf-8")
    files = {"rejects": tmp_path / "out.rejects.jsonl"}
    return step_output("step", main, 1, files=files, summary=summary)


def test_every_recorded_kind_of_summary_has_an_example_here():
    recorded = {
        kind for kind, cls in summary_kinds().items() if cls.__module__.startswith("testaug.")
    }
    assert recorded == {summary.kind for summary in SUMMARIES}


@pytest.mark.parametrize("summary", SUMMARIES, ids=lambda s: f"{s.kind}")
def test_a_step_output_comes_back_from_json_as_the_same_record(summary, tmp_path):
    output = output_of(summary, tmp_path)
    persisted = json.dumps(output.model_dump(mode="json"))  # what Prefect's serializer writes
    again = StepOutput.model_validate(json.loads(persisted))
    assert again == output
    assert type(again.summary) is type(summary)
    from_json = StepOutput.model_validate_json(output.model_dump_json())
    assert from_json == output and type(from_json.summary) is type(summary)


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
    with pytest.raises(ValidationError, match="unknown step summary kind 'teleport'"):
        StepOutput.model_validate(data)
    with pytest.raises(ValidationError, match="teleport"):
        StepOutput.model_validate_json(json.dumps(data))
    del data["summary"]["kind"]
    with pytest.raises(ValidationError, match="kind"):
        StepOutput.model_validate(data)


def test_a_summary_that_is_not_a_recorded_kind_is_refused(tmp_path):
    main = tmp_path / "out.jsonl"
    main.write_text("", encoding="utf-8")
    with pytest.raises(ValidationError, match="not the summary of a kind of step"):
        step_output("step", main, summary=StepSummary(kind="rank"))


def test_a_summary_that_leaves_out_a_field_its_kind_needs_is_refused(tmp_path):
    data = dumped(SUMMARIES[1], tmp_path)
    del data["summary"]["requests"]
    with pytest.raises(ValidationError, match="requests"):
        StepOutput.model_validate(data)
