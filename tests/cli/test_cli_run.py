"""`testaug run`, the main job, as a user runs it: a subprocess with its own Prefect home."""

from __future__ import annotations

import json

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from tests.cli_runner import HANG_TIMEOUT, spawn_testaug
from tests.flow_helpers import PREFECT_ENV, lexical_config


def prefect_home(tmp_path) -> dict[str, str]:
    return {**PREFECT_ENV, "PREFECT_HOME": str(tmp_path / "prefect")}


@pytest.mark.slow
def test_run_with_the_embedded_generator_writes_the_report_and_is_faster_the_second_time(
    tmp_path,
):
    args = (
        "run",
        "--size",
        "small",
        "--rankers",
        str(lexical_config(tmp_path)),
        "--capability",
        "Negation",
        "--capability",
        "Temporal",
        "--run-dir",
        "runs/small",
    )
    env = prefect_home(tmp_path)
    first = spawn_testaug(
        tmp_path, *args, env=env, without_env=["PREFECT_API_URL"], timeout=HANG_TIMEOUT
    )
    assert first.returncode == 0, first.stderr[-4000:]

    run_dir = tmp_path / "runs" / "small"
    report = run_dir / "report.html"
    assert f"report: {report.relative_to(tmp_path)}" in first.stdout.replace("\n", "")
    assert "annotation mode auto" in first.stdout and "wait for people" in first.stdout
    suite = list(read_jsonl(run_dir / "suite.jsonl", TestCase))
    assert "template" in {case.source for case in suite}  # llm cases only where a rule vouches
    models = [m["model"] for m in json.loads((run_dir / "evaluation.json").read_text())["models"]]
    assert models == ["vader", "spacy:eng_spacysentiment"]
    manifest = json.loads((run_dir / "candidates.jsonl").with_name("manifest.json").read_text())
    assert manifest["arguments"]["generator"]["kind"] == "local"
    html = report.read_text()
    assert "Annotation mode auto" in html and "Models under test" in html

    second = spawn_testaug(
        tmp_path, *args, env=env, without_env=["PREFECT_API_URL"], timeout=HANG_TIMEOUT
    )
    assert second.returncode == 0, second.stderr[-4000:]
    assert "Cached" in second.stderr  # the second run reads its tasks from the cache


def test_run_rejects_an_unknown_annotation_mode_before_starting_prefect(tmp_path):
    done = spawn_testaug(tmp_path, "run", "--annotation", "crowd", env=prefect_home(tmp_path))
    assert done.returncode == 1
    assert "--annotation" in done.stderr and "auto, label-studio, terminal" in done.stderr
    assert not (tmp_path / "prefect").exists()


def test_run_rejects_an_accept_precision_outside_zero_to_one_before_starting_prefect(tmp_path):
    done = spawn_testaug(tmp_path, "run", "--accept-precision", "1.5", env=prefect_home(tmp_path))
    assert done.returncode == 1
    assert "--accept-precision: must be a precision in (0, 1], got 1.5" in done.stderr
    assert not (tmp_path / "prefect").exists()


def test_run_rejects_an_unknown_size(tmp_path):
    done = spawn_testaug(tmp_path, "run", "--size", "huge", env=prefect_home(tmp_path))
    assert done.returncode == 1
    assert "unknown size" in done.stderr and "small, default, large" in done.stderr


@pytest.mark.slow
def test_run_in_terminal_mode_asks_a_person_about_the_top_of_the_ranking(tmp_path, lexical_rankers):
    from testaug.core.records import Annotation
    from testaug.review.label_studio_server import free_port
    from testaug.review.verdicts import Verdict
    from testaug.testing.openai_server import ScriptedOpenAIServer
    from tests.flow_helpers import echo_seed_reply

    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as llm:
        done = spawn_testaug(
            tmp_path,
            "run",
            "--annotation",
            "terminal",
            "--size",
            "small",
            "--backend",
            "openai",
            "--base-url",
            llm.base_url,
            "--llm",
            "scripted",
            "--rankers",
            str(lexical_rankers),
            "--capability",
            "Negation",
            "--model",
            "vader",
            "--run-dir",
            "runs/terminal",
            input="n\n" * 200,  # every case shown: not valid, reason capability
            env={**prefect_home(tmp_path), "OPENAI_API_KEY": "test-key"},
            without_env=["PREFECT_API_URL"],
            timeout=HANG_TIMEOUT,
        )
    assert done.returncode == 0, done.stderr[-4000:]
    run_dir = tmp_path / "runs" / "terminal"
    people = [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin == "terminal"
    ]
    ranked = (run_dir / "ranked.jsonl").read_text().splitlines()
    ranker = [
        a for a in read_jsonl(run_dir / "annotations.jsonl", Annotation) if a.origin == "ranker"
    ]
    left = len(ranked) - len(ranker)  # what the ranker's rule did not accept
    assert len(people) == -(-left * 3 // 10)  # the top 30% of it, rounded up
    assert {(a.valid, a.reason) for a in people} == {(False, "capability")}
    verdicts = list(read_jsonl(run_dir / "verdicts.jsonl", Verdict))
    assert sum(v.status == "rejected" and v.decided_by == "people" for v in verdicts) == len(people)
    assert "Annotation mode auto" not in (run_dir / "report.html").read_text()


def test_run_says_when_the_suite_is_not_of_the_task_asked_for(tmp_path):
    done = spawn_testaug(
        tmp_path, "run", "--task", "nli", "--suite", "sentiment", env=prefect_home(tmp_path)
    )
    assert done.returncode == 1
    assert "sentiment is a sentiment suite, not nli" in done.stderr
