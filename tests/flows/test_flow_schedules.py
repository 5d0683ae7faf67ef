"""Deployments with cron schedules, registered by `testaug flows deploy` on a real local
Prefect server (`prefect server start` on 127.0.0.1), which then schedules their runs."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

from testaug.review.label_studio_server import free_port
from tests.cli_runner import HANG_TIMEOUT, spawn_testaug
from tests.flow_helpers import PREFECT_ENV

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Prefect server on a free port of 127.0.0.1, with a fresh SQLite database and a
    scheduler that looks for work every 2 s; yields its API URL."""
    home = tmp_path_factory.mktemp("prefect-server")
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
        **PREFECT_ENV,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "2",
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "prefect",
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=open(home / "server.log", "w"),  # noqa: SIM115  (closed with the process)
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/api"
    try:
        deadline = time.monotonic() + HANG_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((home / "server.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=HANG_TIMEOUT)


def scheduled_runs(url: str, deployment_name: str) -> list:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: url}), get_client(sync_client=True) as client:
        return client.read_flow_runs(
            deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[deployment_name]))
        )


def deployment_of(url: str, name: str):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: url}), get_client(sync_client=True) as client:
        return client.read_deployment_by_name(name)


def test_deploy_registers_a_cron_schedule_and_the_server_schedules_its_runs(
    prefect_server, tmp_path
):
    done = spawn_testaug(
        tmp_path,
        "flows",
        "deploy",
        "hourly-collect",
        "--pool",
        "test-pool",
        env={**PREFECT_ENV, "PREFECT_API_URL": prefect_server, "PREFECT_HOME": str(tmp_path)},
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "hourly-collect" in done.stdout and "test-pool" in done.stdout

    deadline = time.monotonic() + HANG_TIMEOUT
    runs = scheduled_runs(prefect_server, "hourly-collect")
    while not runs and time.monotonic() < deadline:
        time.sleep(1)
        runs = scheduled_runs(prefect_server, "hourly-collect")
    assert runs, "the scheduler created no run"
    assert {run.state.name for run in runs} == {"Scheduled"}
    assert {run.expected_start_time.minute for run in runs} == {15}  # cron "15 * * * *"
    assert runs[0].parameters["config"]["annotation"] == "label-studio"
    assert runs[0].work_pool_name == "test-pool"
    assert deployment_of(prefect_server, "collect/hourly-collect").job_variables == {
        "working_dir": str(tmp_path.resolve())
    }
    assert deployment_of(prefect_server, "collect/hourly-collect").entrypoint == (
        "flows.collect.collect"
    )


def test_deploy_without_a_server_says_how_to_start_one(tmp_path):
    done = spawn_testaug(
        tmp_path, "flows", "deploy", without_env=["PREFECT_API_URL"], env=PREFECT_ENV
    )
    assert done.returncode == 1
    assert "prefect server start" in done.stderr and "Traceback" not in done.stderr


def test_an_unknown_deployment_is_named_with_the_known_ones(tmp_path):
    done = spawn_testaug(
        tmp_path, "flows", "deploy", "nightly", env={**PREFECT_ENV, "PREFECT_API_URL": "http://x"}
    )
    assert done.returncode == 1
    assert "no deployment nightly" in done.stderr and "nightly-augment" in done.stderr


def test_a_broken_prefect_yaml_is_named_with_its_line_and_field(tmp_path):
    broken = tmp_path / "prefect.yaml"
    broken.write_text("deployments:\n  - name: x\n    schedules: []\n")
    done = spawn_testaug(tmp_path, "flows", "list", "--file", str(broken))
    assert done.returncode == 1
    assert f"{broken}:2" in done.stderr and "entrypoint" in done.stderr


def test_prefect_yaml_deployments_point_at_flows_that_load(tmp_path):
    from flows.deployments import PREFECT_YAML, read_deployments, runner_deployment

    specs = read_deployments(PREFECT_YAML)
    assert {s.name for s in specs} >= {"nightly-augment", "hourly-collect"}
    for spec in specs:
        deployment = runner_deployment(spec)
        module, _, name = deployment.entrypoint.rpartition(".")
        assert getattr(importlib.import_module(module), name).name == deployment.flow_name
        assert [s.schedule.cron for s in deployment.schedules] == [c.cron for c in spec.schedules]


def test_a_deployment_with_a_credential_in_its_parameters_is_refused_before_prefect_sees_it(
    tmp_path,
):
    risky = tmp_path / "prefect.yaml"
    risky.write_text(
        "deployments:\n"
        "  - name: leaky\n"
        "    entrypoint: flows/pipeline.py:pipeline\n"
        "    parameters:\n"
        "      config:\n"
        "        generator: {kind: openai, base_url: 'http://alice:s3cret@host/v1'}\n"
        "        api_key: hunter2\n"
    )
    # An unreachable server: reaching it would fail differently, after the credential.
    env = {**PREFECT_ENV, "PREFECT_API_URL": "http://127.0.0.1:9/api"}
    for command in (("deploy", "--file", str(risky)), ("list", "--file", str(risky))):
        done = spawn_testaug(tmp_path, "flows", *command, env=env)
        assert done.returncode == 1, done.stderr
        assert f"{risky}:6" in done.stderr and "credential" in done.stderr
        assert "parameters.config.generator.base_url" in done.stderr
        assert "1 more problem" in done.stderr  # config.api_key
        assert "s3cret" not in done.stderr + done.stdout and "hunter2" not in done.stderr
        assert "Traceback" not in done.stderr


def test_a_served_run_that_fails_on_bad_input_logs_one_line_and_no_traceback(
    prefect_server, tmp_path
):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.settings import PREFECT_API_URL, temporary_settings

    broken = tmp_path / "prefect.yaml"
    broken.write_text(
        "deployments:\n"
        "  - name: broken-pipeline\n"
        "    entrypoint: flows/pipeline.py:pipeline\n"
        "    parameters:\n"
        "      config: {suite: no-such-suite.yaml, run_dir: runs/broken}\n"
    )
    env = {
        **os.environ,
        **PREFECT_ENV,
        "PREFECT_API_URL": prefect_server,
        "PREFECT_HOME": str(tmp_path),
        "TESTAUG_CACHE_DIR": str(tmp_path / "cache"),
    }
    log = tmp_path / "serve.log"
    with open(log, "w") as sink:
        serving = subprocess.Popen(
            [sys.executable, "-m", "testaug", "flows", "serve", "--file", str(broken)],
            cwd=tmp_path,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + HANG_TIMEOUT
        with (
            temporary_settings({PREFECT_API_URL: prefect_server}),
            get_client(sync_client=True) as client,
        ):
            while True:
                try:
                    deployment = client.read_deployment_by_name("pipeline/broken-pipeline")
                    break
                except Exception:
                    assert serving.poll() is None, log.read_text()[-2000:]
                    assert time.monotonic() < deadline, log.read_text()[-2000:]
                    time.sleep(1)
            run = client.create_flow_run_from_deployment(deployment.id)
            while not client.read_flow_run(run.id).state.is_final():
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(1)
            assert client.read_flow_run(run.id).state.is_failed()
            while "no-such-suite" not in log.read_text():  # the runner's last log lines
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.2)
            # Stop the runner only once it has seen the run's process exit: a SIGTERM
            # while that process still holds the runner's control channel open makes
            # Prefect's own shutdown print a traceback that is not the run's.
            runner_saw_exit = LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id]))
            while not any("exited" in entry.message for entry in client.read_logs(runner_saw_exit)):
                assert time.monotonic() < deadline, log.read_text()[-2000:]
                time.sleep(0.5)
    finally:
        os.killpg(serving.pid, signal.SIGTERM)
        serving.wait(timeout=HANG_TIMEOUT)
    output = log.read_text()
    assert "no-such-suite" in output, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
