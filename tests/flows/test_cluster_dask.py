"""The pipeline flow on a real multi-process Dask cluster: `dask scheduler` and two
`dask worker` processes (one thread each) on 127.0.0.1, joined by address as
`testaug run --dask tcp://...` does. The scheduler's task stream says which worker ran
what; the outputs must be those of a run on Prefect's thread pool."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testaug.review.label_studio_server import free_port
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cluster_helpers import (
    Background,
    port_open,
    run_outputs,
    start,
    wait_until,
)
from tests.flow_helpers import PREFECT_ENV, echo_seed_reply, run_pipeline

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]


@dataclass(frozen=True)
class DaskCluster:
    """A scheduler's address and its workers' addresses."""

    address: str
    workers: frozenset[str]


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """`dask scheduler` and two `dask worker` processes (no nanny, one thread each) on free
    ports of 127.0.0.1, each with its own cache folder; all killed at the end."""
    from distributed import Client

    root = tmp_path_factory.mktemp("dask")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env = {**base, **PREFECT_ENV, "PREFECT_HOME": str(root / "prefect"), "OPENAI_API_KEY": "k"}
    dask = [sys.executable, "-m", "dask"]
    common = ["--host", "127.0.0.1", "--no-dashboard"]
    processes: list[Background] = []
    try:
        processes.append(
            start("scheduler", [*dask, "scheduler", "--port", str(port), *common], env, root)
        )
        wait_until(lambda: port_open(port), processes, 60, "Dask scheduler")
        for name in ("worker-a", "worker-b"):
            worker_env = {**env, "TESTAUG_CACHE_DIR": str(root / name / "cache")}
            args = [*dask, "worker", address, *common, "--nthreads", "1", "--no-nanny"]
            args += ["--name", name, "--local-directory", str(root / name)]
            processes.append(start(name, args, worker_env, root))
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=90)
            workers = frozenset(client.scheduler_info()["workers"])
        yield DaskCluster(address, workers)
    finally:
        for background in reversed(processes):
            background.stop()


def task_stream(address: str, since: float) -> list[dict]:
    """The tasks the scheduler saw finish since `since` (epoch seconds), with the worker
    that ran each."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        return client.get_task_stream(start=since)


def test_the_pipeline_spreads_over_two_dask_worker_processes_and_matches_a_local_run(
    dask_cluster: DaskCluster,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    calibrated_rankers: Path,
):
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "local-cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    rankers = calibrated_rankers
    task_stream(dask_cluster.address, time.time())  # the scheduler records from now on
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as server:
        local = run_pipeline(server, tmp_path / "local" / "run", rankers)
        since = time.time()
        clustered = run_pipeline(
            server, tmp_path / "dask" / "run", rankers, dask=dask_cluster.address
        )
    stream = task_stream(dask_cluster.address, since)

    ran_by: dict[str, set[str]] = {}
    for entry in stream:
        assert entry["status"] == "OK", entry
        ran_by.setdefault(entry["worker"], set()).add(entry["key"].rsplit("-", 1)[0])
    assert set(ran_by) == dask_cluster.workers, ran_by  # both worker processes did work
    names = set().union(*ran_by.values())
    assert {"prepare_rankers", "generate_candidates", "measure_diversity"} <= names, names
    assert "evaluate_one_model" in names, names
    assert sum(entry["key"].startswith("generate_candidates") for entry in stream) == 2

    # The same work gives the same files, byte for byte (manifests less the run's identity).
    local_files = run_outputs(tmp_path / "local" / "run")
    assert local_files == run_outputs(tmp_path / "dask" / "run")
    assert {"candidates.jsonl", "ranked.jsonl", "suite.jsonl", "evaluation.json"} <= set(
        local_files
    )
    assert clustered.augmented.candidates.records == local.augmented.candidates.records > 0
    assert clustered.collected.suite.sha256 == local.collected.suite.sha256
    assert local.augmented.annotations.summary.acceptance.accepted_by_ranker > 0
