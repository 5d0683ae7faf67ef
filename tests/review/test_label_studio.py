"""`testaug annotate push|pull` against a real Label Studio server on 127.0.0.1.

The server runs from the venv that `testaug annotate install-server` creates (the
README's install command does it); one server with a temporary data directory serves
the whole module. The tests run in order, as a project's life goes: push, annotate as
two people, pull and merge, push and pull again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, TestCase
from tests.cli_runner import HANG_TIMEOUT, run_testaug
from tests.label_studio_live import API_KEY
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

pytestmark = [pytest.mark.label_studio, pytest.mark.slow]

PROJECT = "validity of tiny candidates"
RECORD = "label-studio-projects.json"  # beside the annotations, in the run folder


@pytest.fixture(scope="module")
def server(label_studio_server) -> object:
    """The session's Label Studio server (tests/conftest.py), shared by every module."""
    return label_studio_server


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory with ranked.jsonl (10 candidates; the last three, at P(valid) 0.9 and
    more, clear the rule of ranked.calibration.json at precision 0.9) and cases.jsonl."""
    texts = [f"Candidate number {i} was lovely." for i in range(10)]
    return write_ranked_run(
        tmp_path_factory.mktemp("run"),
        texts,
        version="v-test",
        p_valid=[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95],
        calibration=make_calibration("v-test", m=VOUCHED_CURVE),
    )


def annotate(
    server, run_dir: Path, *args: str, api_key: str = API_KEY
) -> subprocess.CompletedProcess:
    done = run_testaug(
        run_dir,
        "annotate",
        *args,
        env={"LABEL_STUDIO_URL": server.url, "LABEL_STUDIO_API_KEY": api_key},
        timeout=HANG_TIMEOUT,
    )
    assert api_key not in done.stdout + done.stderr  # the key never reaches the screen
    return done


def client(server):
    from label_studio_sdk.client import LabelStudio

    return LabelStudio(base_url=server.url, api_key=API_KEY)


def project_tasks(server, title: str = PROJECT) -> list[dict]:
    sdk = client(server)
    project = next(p for p in sdk.projects.list(title=title) if p.title == title)
    payload = b"".join(
        sdk.projects.exports.download_sync(
            id=project.id, export_type="JSON", download_all_tasks=True
        )
    )
    return json.loads(payload)


def choice(name: str, value: str) -> dict:
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": [value]}}


def test_push_records_what_the_rule_accepts_and_imports_the_top_of_the_rest(server, run_dir):
    done = annotate(server, run_dir, "push", "ranked.jsonl", "--top", "0.3", "--project", PROJECT)
    assert done.returncode == 0, done.stderr
    assert "3 imported" in done.stdout  # 30% of the 7 the ranker does not accept
    assert "the ranker accepted 3 candidates under its rules for precision 90%" in done.stdout
    assert "4 more wait for people" in done.stdout

    tasks = project_tasks(server)
    ranked = [json.loads(line) for line in (run_dir / "ranked.jsonl").read_text().splitlines()]
    assert [t["data"]["candidate_id"] for t in tasks] == [r["candidate"]["id"] for r in ranked[:3]]
    first = tasks[0]["data"]
    assert first["seeds"].startswith("The seat was great.")
    assert first["label"] == "positive"
    sdk = client(server)
    prediction = sdk.predictions.get(id=tasks[0]["predictions"][0])
    assert prediction.model_version == "v-test"
    assert prediction.score == pytest.approx(1.0)

    accepted = list(read_jsonl(run_dir / "annotations.jsonl", Annotation))
    ranked_ids = [r["candidate"]["id"] for r in ranked]
    assert sorted(a.candidate_id for a in accepted) == sorted(ranked_ids[7:])
    assert {a.origin for a in accepted} == {"ranker"}
    assert all(a.rule.startswith("P(valid) >= 0.900") and a.acceptance for a in accepted)


def test_pushing_again_imports_nothing_twice(server, run_dir):
    again = annotate(server, run_dir, "push", "ranked.jsonl", "--top", "0.3", "--project", PROJECT)
    assert again.returncode == 0, again.stderr
    assert "0 imported, 3 already there" in again.stdout
    more = annotate(server, run_dir, "push", "ranked.jsonl", "--budget", "4", "--project", PROJECT)
    assert "1 imported, 3 already there" in more.stdout
    assert len(project_tasks(server)) == 4
    records = list(read_jsonl(run_dir / "annotations.jsonl", Annotation))
    assert len(records) == 3  # the fourth was pending, now sent; the rule's three stay


def test_pull_takes_the_majority_reports_kappa_and_merges_into_the_suite(server, run_dir):
    sdk = client(server)
    second = sdk.users.create(username="second", email="second@example.com", password="pw-second-1")
    tasks = project_tasks(server)
    first, second_task, third, fourth = (t["id"] for t in tasks)
    # Both people: agree valid, agree invalid, disagree; one corrects a label; one skips.
    sdk.annotations.create(id=first, result=[choice("validity", "valid")])
    sdk.annotations.create(id=first, result=[choice("validity", "valid")], completed_by=second.id)
    sdk.annotations.create(
        id=second_task,
        result=[
            choice("validity", "invalid"),
            choice("reason", "is malformed (not a sentence, broken pair, cut off)"),
        ],
    )
    sdk.annotations.create(
        id=second_task, result=[choice("validity", "invalid")], completed_by=second.id
    )
    sdk.annotations.create(id=third, result=[choice("validity", "valid")])
    sdk.annotations.create(id=third, result=[choice("validity", "invalid")], completed_by=second.id)
    sdk.annotations.create(
        id=fourth,
        result=[
            choice("validity", "invalid"),
            choice("reason", "does not have the right label"),
            choice("corrected_label", "negative"),
        ],
    )
    sdk.annotations.create(id=fourth, result=[], was_cancelled=True, completed_by=second.id)

    done = annotate(
        server,
        run_dir,
        "pull",
        "-o",
        "annotations.jsonl",
        "--project",
        PROJECT,
        "--suite-cases",
        "cases.jsonl",
    )
    assert done.returncode == 0, done.stderr
    assert "7 verdicts (7 new" in done.stdout
    assert "1 skipped or cancelled" in done.stdout
    assert "disagreements" in done.stdout
    assert "0.400" in done.stdout  # kappa over the three tasks both judged

    people = [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin != "ranker"
    ]
    assert len(people) == 7
    assert {a.annotator for a in people} == {"admin@localhost.localdomain", "second@example.com"}
    malformed = [a for a in people if a.reason == "malformed"]
    assert len(malformed) == 1
    accepted = {c.id: c for c in read_jsonl(run_dir / "accepted.jsonl", TestCase)}
    ranked_ids = [json.loads(line)["candidate"]["id"] for line in (run_dir / "ranked.jsonl").open()]
    assert (
        ranked_ids[0] in accepted
        and ranked_ids[1] not in accepted
        and ranked_ids[2] not in accepted
    )
    assert accepted[ranked_ids[3]].label == "negative"
    assert accepted[ranked_ids[3]].meta["proposed_label"] == "positive"
    assert len(accepted) == 2 + 3  # and the three the ranker's rule accepted
    assert {c.source for c in accepted.values()} == {"llm"}
    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    assert len(suite) == 2 + len(accepted)


def test_pulling_again_adds_nothing_and_keeps_annotations_deleted_on_the_server(server, run_dir):
    sdk = client(server)
    task = project_tasks(server)[0]
    for annotation in task["annotations"]:
        sdk.annotations.delete(id=annotation["id"])
    before = (run_dir / "annotations.jsonl").read_text()
    done = annotate(server, run_dir, "pull", "-o", "annotations.jsonl", "--project", PROJECT)
    assert done.returncode == 0, done.stderr
    assert "(0 new, 0 changed)" in done.stdout
    assert (run_dir / "annotations.jsonl").read_text() == before


def test_wrong_key_down_server_and_deleted_project_are_clear_errors_that_lose_nothing(
    server, run_dir
):
    before = (run_dir / "annotations.jsonl").read_text()
    wrong = annotate(
        server,
        run_dir,
        "pull",
        "-o",
        "annotations.jsonl",
        "--project",
        PROJECT,
        api_key="not-the-key-0000",
    )
    assert wrong.returncode == 1
    assert "refused the API key (HTTP 401)" in wrong.stderr
    assert "not-the-key" not in wrong.stderr + wrong.stdout

    down = annotate(
        server,
        run_dir,
        "pull",
        "-o",
        "annotations.jsonl",
        "--project",
        PROJECT,
        "--url",
        "http://127.0.0.1:9",
    )
    assert down.returncode == 1
    assert "cannot reach Label Studio at http://127.0.0.1:9" in down.stderr

    sdk = client(server)
    project = next(p for p in sdk.projects.list(title=PROJECT) if p.title == PROJECT)
    sdk.projects.delete(id=project.id)
    gone = annotate(server, run_dir, "pull", "-o", "annotations.jsonl", "--project", PROJECT)
    assert gone.returncode == 1
    recorded = f"Label Studio project {project.id} ({PROJECT!r}), recorded in {RECORD}"
    assert recorded in gone.stderr  # the recorded project, not another of its title
    assert f"delete {RECORD}" in gone.stderr
    assert (run_dir / "annotations.jsonl").read_text() == before


def test_the_api_key_reaches_no_file_of_the_run_and_no_output(server, run_dir):
    assert (run_dir / RECORD).is_file()  # the project record is among the files checked
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(errors="replace"), path
    assert API_KEY not in server.log_path.read_text(errors="replace")


@pytest.mark.usefixtures("prefect_harness")
def test_the_pipeline_sends_the_doubtful_to_people_and_collect_brings_their_verdicts(
    server, tmp_path, monkeypatch, lexical_rankers
):
    from flows.collect import collect
    from flows.pipeline import pipeline
    from testaug.generation.backend_config import BackendConfig
    from testaug.review.label_studio_server import free_port
    from testaug.review.verdicts import Verdict
    from testaug.steps.config import RunConfig
    from testaug.testing.openai_server import ScriptedOpenAIServer
    from tests.flow_helpers import echo_seed_reply

    for name, value in {
        "LABEL_STUDIO_URL": server.url,
        "LABEL_STUDIO_API_KEY": API_KEY,
        "TESTAUG_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": "test-key",
    }.items():
        monkeypatch.setenv(name, value)
    run_dir, project = tmp_path / "run", "flow run"
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as llm:
        first = pipeline(
            RunConfig(
                run_dir=run_dir,
                size="small",
                generator=BackendConfig(kind="openai", base_url=llm.base_url, model="scripted"),
                rankers=str(lexical_rankers),
                annotation="label-studio",
                project=project,
                models=("vader",),
                capabilities=("Negation",),
            )
        )
    sent = first.augmented.annotations.summary.sent
    assert sent > 0 and first.collected.pulled.summary.pending == sent
    verdicts = {v.candidate_id: v for v in read_jsonl(run_dir / "verdicts.jsonl", Verdict)}
    waiting = first.augmented.annotations.summary.pending  # never sent: not waited for
    assert sum(v.status == "pending" for v in verdicts.values()) == sent + waiting

    sdk = client(server)
    tasks = project_tasks(server, project)
    assert len(tasks) == sent
    for task in tasks:
        sdk.annotations.create(id=task["id"], result=[choice("validity", "invalid")])

    later = collect(
        RunConfig(run_dir=run_dir, annotation="label-studio", project=project, models=())
    )
    assert later.pulled.summary.verdicts == sent and later.pulled.summary.pending == 0
    verdicts = {v.candidate_id: v for v in read_jsonl(run_dir / "verdicts.jsonl", Verdict)}
    rejected = [v for v in verdicts.values() if v.status == "rejected"]
    assert len(rejected) == sent and {v.decided_by for v in rejected} == {"people"}
    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    assert not {v.candidate_id for v in rejected} & {case.id for case in suite}
