"""The flows under Prefect's test harness, against our OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, TestCase
from testaug.review.label_studio_server import free_port
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.flow_helpers import echo_seed_reply, lexical_config, run_pipeline

pytestmark = pytest.mark.usefixtures("prefect_harness")


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as running:
        yield running


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return tmp_path / "cache"


@dataclass(frozen=True)
class FinishedRun:
    """One pipeline run in auto mode, shared by the tests that only read what it wrote."""

    run_dir: Path
    result: object
    requests: int


@pytest.fixture(scope="module")
def auto_run(prefect_harness, tmp_path_factory, calibrated_rankers) -> FinishedRun:
    folder = tmp_path_factory.mktemp("auto-run")
    with (
        pytest.MonkeyPatch.context() as patch,
        ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as server,
    ):
        patch.setenv("TESTAUG_CACHE_DIR", str(folder / "cache"))
        patch.setenv("OPENAI_API_KEY", "test-key")
        result = run_pipeline(server, folder / "run", calibrated_rankers)
        return FinishedRun(folder / "run", result, server.request_count)


def task_states(since_flow_run: object) -> dict[str, list[str]]:
    """The state names of the task runs of a flow run and its subflows, by task name."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId

    with get_client(sync_client=True) as client:
        children = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(
                parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[since_flow_run])
            )
        )
        states: dict[str, list[str]] = {}
        for child in children:
            for run in client.read_task_runs(
                flow_run_filter=FlowRunFilter(id={"any_": [child.id]})
            ):
                if run.flow_run_id == child.id and run.state is not None:
                    states.setdefault(run.name.rsplit("-", 1)[0], []).append(run.state.name)
    return states


def test_pipeline_in_auto_mode_writes_every_stage_and_marks_the_ranker_verdicts(auto_run):
    from testaug.review.plans import AUTO_NOTE
    from testaug.review.verdicts import Verdict

    run_dir, result = auto_run.run_dir, auto_run.result

    for name in (
        "cases.jsonl",
        "candidates.jsonl",
        "ranked.jsonl",
        "ranked.calibration.json",
        "annotations.jsonl",
        "verdicts.jsonl",
        "accepted.jsonl",
        "templates.yaml",
        "expanded.jsonl",
        "suite.jsonl",
        "diversity.json",
        "evaluation.json",
        "report.html",
        "manifest.json",
    ):
        assert (run_dir / name).is_file(), name
    augmented, collected = result.augmented, result.collected
    assert augmented.candidates.records > 0
    assert auto_run.requests == augmented.candidates.summary.prompts
    # The ranker only accepts, under its rule for 90% precision; the rest waits for people.
    annotations = list(read_jsonl(run_dir / "annotations.jsonl", Annotation))
    assert annotations  # the generator's own calibration sample vouches for some
    assert all(
        a.origin == "ranker" and a.valid and AUTO_NOTE in (a.rule or "") for a in annotations
    )
    summary = augmented.annotations.summary
    acceptance = summary.acceptance
    assert acceptance.accept_precision == 0.9 and acceptance.accepted_by_ranker == len(annotations)
    assert summary.pending == augmented.ranked.records - len(annotations)
    verdicts = list(read_jsonl(run_dir / "verdicts.jsonl", Verdict))
    assert sum(v.status == "pending" for v in verdicts) == summary.pending
    assert not any(v.status == "rejected" for v in verdicts)
    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    llm = [case for case in suite if case.source == "llm"]
    assert len(llm) == len(annotations) and all(c.meta["accepted_by"] == "ranker" for c in llm)
    assert collected.expanded.records == sum(case.source == "expansion" for case in suite)
    assert "template" in {case.source for case in suite}
    evaluation = json.loads((run_dir / "evaluation.json").read_text())
    assert [model["model"] for model in evaluation["models"]] == ["vader"]
    assert evaluation["n_cases"] == len(suite)
    html = (run_dir / "report.html").read_text()
    assert "Annotation mode auto" in html and "Acceptance by the ranker" in html
    assert "Diversity" in html
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["arguments"]["annotation"] == "auto"
    assert manifest["arguments"]["accept_precision"] == 0.9


def test_each_flow_run_publishes_a_summary_table_and_a_link_to_the_report(auto_run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    keys = ["testaug-augment-summary", "testaug-collect-summary", "testaug-collect-report"]
    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    by_key = {artifact.key: artifact for artifact in artifacts}
    assert set(by_key) == set(keys)
    assert by_key["testaug-collect-report"].type == "markdown"  # how Prefect stores a link
    assert "report.html" in str(by_key["testaug-collect-report"].data)
    table = by_key["testaug-augment-summary"]
    assert table.type == "table" and "ranked.jsonl" in str(table.data)


def test_a_second_run_takes_every_step_from_the_cache_and_asks_the_llm_nothing(
    server, cache_dir, tmp_path, lexical_rankers
):
    run_dir, rankers = tmp_path / "run", lexical_rankers
    run_pipeline(server, run_dir, rankers)
    asked = server.request_count
    suite_before = (run_dir / "suite.jsonl").read_bytes()

    second = run_pipeline(server, run_dir, rankers, return_state=True)

    assert server.request_count == asked
    assert (run_dir / "suite.jsonl").read_bytes() == suite_before
    states = task_states(second.state_details.flow_run_id)
    assert states["generate Negation"] == ["Cached"]
    assert states["prepare rankers"] == ["Cached"]
    assert states["evaluate vader"] == ["Cached"]
    assert states["write report"] == ["Completed"]  # the report is always written anew


def test_a_cached_step_whose_file_was_deleted_runs_again_from_the_response_cache(
    server, cache_dir, tmp_path, lexical_rankers
):
    run_dir, rankers = tmp_path / "run", lexical_rankers
    run_pipeline(server, run_dir, rankers)
    asked = server.request_count
    (run_dir / "candidates.jsonl").unlink()
    (run_dir / "generated" / "00.candidates.jsonl").unlink()

    result = run_pipeline(server, run_dir, rankers)

    assert (run_dir / "candidates.jsonl").is_file()
    assert result.augmented.candidates.records > 0
    assert server.request_count == asked  # the replies came from the response cache


def test_changing_a_seed_suite_file_invalidates_the_steps_that_read_it(tmp_path):
    from flows.caching import InputFiles
    from testaug.steps.measure import DiversityConfig

    cases, out = tmp_path / "cases.jsonl", tmp_path / "diversity.json"
    cases.write_text("one\n")
    policy = InputFiles()

    def key() -> str | None:
        return policy.compute_key(None, {"config": DiversityConfig(cases=cases, out=out)}, None)

    first = key()
    out.write_text("written by the step\n")
    assert key() == first  # what the step writes is not one of its inputs
    cases.write_text("two\n")
    assert key() != first


def test_only_network_faults_are_retried():
    from prefect.states import Failed

    from flows.tasks import transient_fault
    from testaug.generation.backends import BackendError, TransientBackendError

    assert transient_fault(None, None, Failed(data=TransientBackendError("503")))
    assert transient_fault(None, None, Failed(data=ConnectionError("refused")))
    assert not transient_fault(None, None, Failed(data=BackendError("401 bad key")))
    assert not transient_fault(None, None, Failed(data=InputError(Problem("bad", field="x"))))


def test_collect_names_the_files_an_unaugmented_run_folder_lacks(cache_dir, tmp_path):
    from flows.collect import collect
    from testaug.steps.config import RunConfig

    with pytest.raises(InputError) as caught:
        collect(RunConfig(run_dir=tmp_path / "empty", models=()))
    assert {Path(p.file).name for p in caught.value.problems} == {"cases.jsonl", "ranked.jsonl"}


def test_train_rankers_learns_from_the_verdicts_of_people_in_every_run(cache_dir, tmp_path):
    from flows.train_rankers import train_rankers
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import RankedCandidate
    from testaug.review.plans import save_annotations
    from testaug.steps.rankers import TrainRankersConfig
    from tests.tiny_models import make_candidate

    run = tmp_path / "runs" / "one"
    candidates = [make_candidate(f"case number {i}") for i in range(4)]
    write_jsonl(
        run / "ranked.jsonl",
        [
            RankedCandidate(candidate=c, scores={"m": 0.0}, borda_points=0, rank=i + 1)
            for i, c in enumerate(candidates)
        ],
    )
    save_annotations(
        run / "annotations.jsonl",
        [
            Annotation(candidate_id=c.id, valid=i % 2 == 0, annotator="ann", origin="terminal")
            for i, c in enumerate(candidates)
        ],
    )
    trained = train_rankers(
        TrainRankersConfig(
            runs=tmp_path / "runs", ensemble=str(lexical_config(tmp_path)), out=tmp_path / "r"
        )
    )
    assert trained.summary.from_people == 4
    assert trained.summary.trained_on > 4  # with the shipped labelled candidates
    assert trained.path.is_file() and trained.path.parent.parent == tmp_path / "r"


def test_the_training_progress_names_each_fold_then_the_final_model(monkeypatch):
    from flows import tasks

    lines: list[str] = []

    class Lines:
        def info(self, message: str, *args: object) -> None:
            lines.append(message % args)

    monkeypatch.setattr(tasks, "get_run_logger", Lines)
    for fold in range(3):
        tasks.log_training_progress("neighbours", fold, 2)
    assert lines == [
        "training ranker neighbours, fold 1 of 2 (first use only)",
        "training ranker neighbours, fold 2 of 2 (first use only)",
        "training ranker neighbours, its final model (first use only)",
    ]
