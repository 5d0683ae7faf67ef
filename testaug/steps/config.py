"""One pipeline run, configured: every option of `testaug run` and of a deployment's
parameters in one record, with the defaults in one place. Built once (from the command
line or Prefect's parameters), passed to the flows and written to the run's manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.records import Record
from testaug.core.run_sizes import SIZES, RunSize, run_size
from testaug.generation.backend_config import BackendConfig
from testaug.review.acceptance import DEFAULT_TARGET
from testaug.review.plans import DEFAULT_REVIEW_FRACTION
from testaug.steps.review import AnnotationMode
from testaug.suites.load import load_suite
from testaug.suites.provenance import Evidence

# The models under test of a task when the run names none.
DEFAULT_MODELS: dict[str, tuple[str, ...]] = {
    "sentiment": ("vader", "spacy:eng_spacysentiment"),
}


class RunConfig(Record):
    """What a pipeline run is asked to do."""

    suite: str = Field(default="sentiment", description="a suite file, folder or shipped name")
    run_dir: Path = Path("runs/latest")
    size: str = Field(default="default", description=f"a preset: {', '.join(SIZES)}")
    generator: BackendConfig = BackendConfig()
    rankers: str = Field(
        default="offline", description="a trained ensemble folder, or a config to train"
    )
    annotation: AnnotationMode = "auto"
    top: float = Field(
        default=DEFAULT_REVIEW_FRACTION,
        ge=0.0,
        le=1.0,
        description="the share people review of the candidates the ranker leaves",
    )
    accept_precision: float = DEFAULT_TARGET
    pooled_rule: bool = Field(
        default=False,
        description="accept candidates of a generator without random labels of its own "
        "under the rule pooled over other generators",
    )
    project: str | None = Field(default=None, description="Label Studio project")
    wait_minutes: float = Field(default=0.0, ge=0.0)
    models: tuple[str, ...] | None = Field(
        default=None, description="models under test; None: the task's defaults"
    )
    capabilities: tuple[str, ...] | None = Field(default=None, description="None: all")
    seed: int = 0
    prompts_per_description: int | None = Field(default=None, ge=1)
    samples: int | None = Field(default=None, ge=1)
    dask: str | None = Field(default=None, description="local, or a Dask scheduler's address")
    evidence: Evidence = "verified"

    @field_validator("size")
    @classmethod
    def _known_size(cls, size: str) -> str:
        if size not in SIZES:
            raise ValueError(f"unknown size (use {', '.join(SIZES)})")
        return size

    @field_validator("models")
    @classmethod
    def _known_models(cls, models: tuple[str, ...] | None) -> tuple[str, ...] | None:
        from testaug.evaluation.models import ModelError, check_spec

        problems = []
        for spec in models or ():
            try:
                check_spec(spec)
            except ModelError as exc:
                problems.append(str(exc))
        if problems:
            raise ValueError("; ".join(problems))
        return models

    @field_validator("accept_precision")
    @classmethod
    def _precision(cls, target: float) -> float:
        if not 0.0 < target <= 1.0:  # also false for NaN
            raise ValueError(f"must be a precision in (0, 1], got {target}")
        return target

    def sizes(self) -> RunSize:
        """The run's numbers: its size preset with the overrides it gives."""
        return run_size(
            self.size, prompts_per_description=self.prompts_per_description, samples=self.samples
        )

    def task_models(self, task: str) -> tuple[str, ...]:
        """The models under test: those named, else the task's defaults (maybe none)."""
        return self.models if self.models is not None else DEFAULT_MODELS.get(task, ())

    def with_task_models(self, task: str | None = None) -> RunConfig:
        """This configuration with its models under test named (the defaults of the task,
        read from the suite unless given, where it names none), as a manifest records them."""
        if self.models is not None:
            return self
        task = task or load_suite(resolve_suite(self.suite)).task
        return self.model_copy(update={"models": self.task_models(task)})


# Command-line options whose names are not their field's.
OPTIONS = {
    ("generator", "kind"): "--backend",
    ("generator", "model"): "--generator-model",
    ("generator", "base_url"): "--base-url",
    ("generator", "endpoint"): "--endpoint",
    ("generator", "timeout"): "--timeout",
    ("capabilities",): "--capability",
    ("models",): "--model",
}


def run_config(options: dict[str, Any], *, flags: bool = False) -> RunConfig:
    """A RunConfig from options (the generator as a BackendConfig or a dict); an InputError
    naming each bad option, as a command-line flag (`--accept-precision`) when `flags`."""
    try:
        return RunConfig.model_validate(options)
    except ValidationError as exc:
        raise InputError([_problem(error, flags) for error in exc.errors()]) from None


def _problem(error: Any, flags: bool) -> Problem:
    loc = tuple(part for part in error["loc"] if isinstance(part, str))
    if flags:
        field = OPTIONS.get(loc, "--" + loc[-1].replace("_", "-") if loc else None)
    else:
        field = ".".join(loc) or None
    message = error["msg"].removeprefix("Value error, ")
    if error["type"] == "literal_error":
        allowed = error["ctx"]["expected"].replace(" or ", ", ").replace("'", "")
        message = f"expected one of {allowed}"
    return Problem(message, field=field)


def chosen_suite(task: str | None, suite: str | None) -> tuple[str, str]:
    """The suite a run takes (by path or name, else the task's, else sentiment) and its
    task; an error when the suite's task is not the one asked for."""
    chosen = suite or task or "sentiment"
    loaded = load_suite(resolve_suite(chosen))
    if task is not None and loaded.task != task:
        raise InputError(Problem(f"{chosen} is a {loaded.task} suite, not {task}", field="--task"))
    return chosen, loaded.task


__all__ = ["DEFAULT_MODELS", "RunConfig", "chosen_suite", "run_config"]
