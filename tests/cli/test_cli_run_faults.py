"""`testaug run` when things go wrong: a server that always fails, a home that does not
exist, temporary files a killed write left behind. A subprocess with its own Prefect home."""

from __future__ import annotations

import os
import time

import pytest

from tests.cli_runner import HANG_TIMEOUT, spawn_testaug
from tests.flow_helpers import PREFECT_ENV

# A stale temporary file of the atomic writers, as a kill in the middle of a write leaves it.
STALE = ".candidates.jsonl.0123456789abcdef0123456789abcdef.tmp"


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory, lexical_rankers):
    """`testaug run` against a server that answers every request with 500, in a run folder
    holding an hour-old temporary file of an interrupted write and a fresh one."""
    from testaug.review.label_studio_server import free_port
    from testaug.testing.openai_server import ScriptedOpenAIServer

    folder = tmp_path_factory.mktemp("failing")
    run_dir = folder / "runs" / "failing"
    run_dir.mkdir(parents=True)
    stale = run_dir / STALE
    stale.write_bytes(b"x" * 100_000)
    hours_ago = time.time() - 2 * 3600
    os.utime(stale, (hours_ago, hours_ago))
    fresh = run_dir / ".ranked.jsonl.fedcba9876543210fedcba9876543210.tmp"
    fresh.write_text("being written\n")
    env = {
        **PREFECT_ENV,
        "PREFECT_HOME": str(folder / "prefect"),
        "OPENAI_API_KEY": "test-key",
        "PREFECT_TASKS_DEFAULT_RETRY_DELAY_SECONDS": "0",
        "COLUMNS": "400",  # a log record on one line
    }
    with ScriptedOpenAIServer(port=free_port()) as llm:
        llm.fail_next(1_000_000, 500, retry_after=0)
        done = spawn_testaug(
            folder,
            "run",
            "--size",
            "small",
            "--backend",
            "openai",
            "--base-url",
            llm.base_url,
            "--generator-model",
            "scripted",
            "--rankers",
            str(lexical_rankers),
            "--capability",
            "Negation",
            "--model",
            "vader",
            "--run-dir",
            "runs/failing",
            env=env,
            without_env=["PREFECT_API_URL"],
            timeout=HANG_TIMEOUT,
        )
    return done, run_dir


@pytest.mark.slow
def test_run_against_a_failing_server_ends_with_one_line_and_prints_no_traceback(failed_run):
    done, _ = failed_run
    assert done.returncode == 1, done.stderr[-4000:]
    assert "Traceback" not in done.stderr, done.stderr[:4000]
    lines = done.stderr.strip().splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("error:")]
    assert len(errors) == 1 and "HTTP 500" in lines[errors[0]], lines[-5:]
    after = lines[errors[0] + 1 :]  # Prefect stops its temporary server at exit
    assert all("Stopping temporary server" in line for line in after), after
    # one line per failed request (the generation stage's retries), few lines besides
    retried = [line for line in lines if line.startswith("WARNING") and "HTTP 500" in line]
    assert len(lines) - len(retried) < 60, done.stderr


@pytest.mark.slow
def test_run_removes_the_stale_temporary_files_an_interrupted_write_left(failed_run):
    done, run_dir = failed_run
    assert not (run_dir / STALE).exists()
    assert (run_dir / ".ranked.jsonl.fedcba9876543210fedcba9876543210.tmp").exists()
    assert "removed 1 stale temporary file" in done.stderr, done.stderr[-4000:]


def test_run_with_a_home_that_does_not_exist_fails_fast_naming_the_directory(tmp_path):
    env = {**PREFECT_ENV, "HOME": "/nonexistent/home"}
    done = spawn_testaug(
        tmp_path,
        "run",
        "--size",
        "small",
        env=env,
        without_env=["PREFECT_API_URL", "PREFECT_HOME", "TESTAUG_CACHE_DIR", "XDG_CACHE_HOME"],
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr[-4000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) <= 3, done.stderr[-4000:]
    assert "/nonexistent/home" in lines[-1] and "PREFECT_HOME" in lines[-1], lines[-1]
    assert not list(tmp_path.rglob("*.jsonl")), "it failed only after writing files"
