"""One run configuration: defaults in one place, errors that name the option, the task's
models under test, and deployments' parameters read into it."""

from __future__ import annotations

import inspect

import pytest

from testaug.core.errors import InputError
from testaug.review.plans import DEFAULT_REVIEW_FRACTION
from testaug.steps.config import DEFAULT_MODELS, RunConfig, chosen_suite, run_config


def test_the_command_line_defaults_are_the_records_defaults():
    from testaug.cli.run import run_command

    options = inspect.signature(run_command).parameters
    config = RunConfig()
    assert config.top == DEFAULT_REVIEW_FRACTION == options["top"].default.default
    for name in ("size", "rankers", "annotation", "accept_precision", "seed", "evidence"):
        assert options[name].default.default == getattr(config, name), name
    assert options["backend"].default.default == config.generator.kind


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"annotation": "crowd"}, "--annotation: expected one of auto, label-studio, terminal"),
        ({"accept_precision": 1.5}, "--accept-precision: must be a precision in (0, 1], got 1.5"),
        ({"size": "huge"}, "--size: unknown size (use small, default, large)"),
        ({"generator": {"kind": "local", "endpoint": "x"}}, "--endpoint: expected one of"),
        ({"top": 2.0}, "--top: Input should be less than or equal to 1"),
    ],
)
def test_a_bad_option_is_named_as_the_command_line_writes_it(options, message):
    with pytest.raises(InputError) as caught:
        run_config(options, flags=True)
    assert str(caught.value.problems[0]).startswith(message)


def test_a_bad_parameter_of_a_deployment_is_named_by_its_field():
    with pytest.raises(InputError) as caught:
        run_config({"evidence": "hearsay"})
    assert str(caught.value.problems[0]) == "evidence: expected one of verified, all"


def test_a_run_without_models_evaluates_the_defaults_of_its_task():
    assert RunConfig().with_task_models().models == DEFAULT_MODELS["sentiment"]
    assert RunConfig(suite="nli").with_task_models().models == ()
    assert RunConfig(models=("vader",)).with_task_models().models == ("vader",)
    assert RunConfig(models=()).task_models("sentiment") == ()


def test_a_suite_of_another_task_than_asked_for_is_an_error():
    assert chosen_suite("nli", None) == ("nli", "nli")
    with pytest.raises(InputError, match="--task: sentiment is a sentiment suite, not nli"):
        chosen_suite("nli", "sentiment")


def test_the_run_size_takes_the_configurations_overrides():
    numbers = RunConfig(size="small", samples=7).sizes()
    assert numbers.samples == 7 and numbers.per_template == 5


def test_a_deployments_flat_parameters_are_read_into_the_run_configuration():
    from flows.collect import collect
    from flows.deployments import flow_parameters
    from flows.train_rankers import train_rankers

    flat = {"run_dir": "runs/nightly", "annotation": "label-studio"}
    assert flow_parameters(collect, flat) == {"config": flat}
    assert flow_parameters(collect, {"config": flat}) == {"config": flat}
    assert flow_parameters(train_rankers, {"runs": "runs"}) == {"config": {"runs": "runs"}}
    assert flow_parameters(train_rankers, {}) == {}


def test_every_shipped_deployment_validates_as_a_run_configuration():
    from flows.deployments import flow_parameters, load_flow, read_deployments

    configured = []
    for spec in read_deployments():
        flow = load_flow(spec.entrypoint)
        parameters = flow_parameters(flow, spec.parameters)
        flow.validate_parameters(parameters)  # every flow's own parameter types, others too
        takes_run_config = (
            flow.parameters.properties.get("config", {}).get("$ref", "").endswith("/RunConfig")
        )
        if takes_run_config:
            configured.append(run_config(parameters["config"]))
    assert {config.annotation for config in configured} == {"auto", "label-studio"}
