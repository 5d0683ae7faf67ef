"""Where a flow's tasks run: Prefect's thread pool in the flow's process, or a Dask
cluster (a local one, or one at an address) through prefect-dask."""

from __future__ import annotations

from typing import Any


def task_runner(dask: str | None = None) -> Any:
    """The thread pool when `dask` is None; `local` starts a Dask cluster in this process
    (2 workers of 2 threads); an address such as tcp://10.0.0.5:8786 joins a running one."""
    if not dask:
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner()
    from prefect_dask import DaskTaskRunner

    if dask == "local":
        return DaskTaskRunner(
            cluster_kwargs={"n_workers": 2, "threads_per_worker": 2, "processes": False}
        )
    return DaskTaskRunner(address=dask)
