"""The whole pipeline from Python: the `pipeline` Prefect flow on a `RunConfig`, as
`testaug run` starts it (Prefect offline on a temporary local API unless PREFECT_API_URL
names a server)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from testaug.core.errors import InputError, Problem

if TYPE_CHECKING:
    from flows.pipeline import PipelineRun
    from testaug.steps.config import RunConfig


def run_pipeline(config: RunConfig | None = None, **options: Any) -> PipelineRun:
    """Suite to report in one run folder (`config.run_dir`): seed cases, generation,
    ranking, review, the grown suite, diversity, evaluation and the report. Give a
    `RunConfig`, or its fields as keyword arguments (`suite="sentiment", size="small",
    generator={"kind": "openai", ...}`); the result holds both halves' step outputs."""
    from testaug.core.prefect_environment import prepare_prefect_environment
    from testaug.steps.config import RunConfig, run_config

    if config is None:
        config = run_config(options)
    elif not isinstance(config, RunConfig):
        message = f"expected a RunConfig (or its fields as keyword arguments), got {config!r}"
        raise InputError(Problem(message, field="config"))
    elif options:
        config = run_config({**config.model_dump(), **options})
    prepare_prefect_environment()
    from flows.pipeline import pipeline

    return pipeline(config)
