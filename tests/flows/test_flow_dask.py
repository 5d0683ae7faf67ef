"""A flow whose tasks run on a local Dask cluster (prefect-dask), not Prefect's thread pool."""

from __future__ import annotations

import pytest

from testaug.generation.backend_config import BackendConfig
from testaug.review.label_studio_server import free_port
from testaug.steps.config import RunConfig
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.flow_helpers import echo_seed_reply

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_harness")]


def test_augment_generates_and_ranks_on_a_local_dask_cluster(
    tmp_path, monkeypatch, calibrated_rankers
):
    from prefect_dask import DaskTaskRunner

    from flows.augment import augment
    from flows.runners import task_runner

    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    runner = task_runner("local")
    assert isinstance(runner, DaskTaskRunner)
    with ScriptedOpenAIServer(echo_seed_reply, port=free_port()) as server:
        result = augment.with_options(task_runner=runner)(
            RunConfig(
                run_dir=tmp_path / "run",
                size="small",
                generator=BackendConfig(kind="openai", base_url=server.base_url, model="scripted"),
                rankers=str(calibrated_rankers),
                capabilities=("Negation", "Temporal", "Vocabulary"),
            )
        )
        asked = server.request_count
    assert result.candidates.records > 0 and asked == result.candidates.summary.prompts
    assert result.ranked.records == result.candidates.records
    assert result.annotations is not None and result.annotations.summary.mode == "auto"
    assert result.annotations.summary.acceptance.accepted_by_ranker > 0
