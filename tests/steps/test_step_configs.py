"""Every step takes one config record of its own, as `config`, and beyond it only what is
not configuration, keyword-only: callbacks and objects already built (a backend, a Label
Studio client, a console). Every step keeps the rule: there is no list of exceptions."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from testaug.core.records import Record
from testaug.steps.contract import StepOutput
from tests.steps.test_step_contract import MODULES, public_functions, steps_of

# What a step may take besides its record: callbacks, a clock, objects that cannot be records.
NOT_CONFIG = frozenset(
    {
        "on_progress",
        "on_round",
        "on_prompt_done",
        "when",
        "sleep",
        "backend",
        "studio",
        "scorer",
        "embed",
        "console",
        "read_key",
    }
)


def config_class(function: Callable[..., Any], module: ModuleType | None) -> type | None:
    """The class a parameter `config` is annotated with, looked up in the step's module (a
    kind of review's verb: the kind's config class)."""
    parameter = inspect.signature(function).parameters.get("config")
    if parameter is None:
        return None
    annotation = parameter.annotation
    if inspect.ismethod(function) and annotation == "Config":
        annotation = function.__self__.config
    if isinstance(annotation, str):
        annotation = getattr(module, annotation, None) if module is not None else None
    return annotation if inspect.isclass(annotation) else None


def broken_rules(function: Callable[..., Any], module: ModuleType | None = None) -> list[str]:
    """How a step's parameters break the rule (none when it keeps it)."""
    parameters = list(inspect.signature(function).parameters.values())
    problems = []
    first = parameters[0] if parameters else None
    if first is None or first.name != "config" or first.kind is inspect.Parameter.KEYWORD_ONLY:
        problems.append("its first parameter is not `config`")
    record = config_class(function, module)
    if record is None or not issubclass(record, Record) or issubclass(record, StepOutput):
        problems.append("`config` is not annotated with a config record")
    for parameter in parameters[1:]:
        if parameter.kind is not inspect.Parameter.KEYWORD_ONLY:
            problems.append(f"{parameter.name} is not keyword-only")
        elif parameter.name not in NOT_CONFIG:
            problems.append(f"{parameter.name} is configuration outside the record")
    return problems


def all_steps() -> dict[str, tuple[Callable[..., Any], ModuleType]]:
    """Every step of the step modules, by `module.function`."""
    found = {}
    for module in MODULES:
        functions = public_functions(module)
        short = module.__name__.rpartition(".")[2]
        for name in steps_of(module):
            found[f"{short}.{name}"] = (functions[name], module)  # type: ignore[assignment]
    return found


STEPS = all_steps()


def test_the_walk_finds_the_steps_of_every_step_module():
    modules = {name.partition(".")[0] for name in STEPS}
    assert modules >= {"augment", "grow", "measure", "rank", "rankers", "review", "adapt"}
    assert {"fix.fix_files", "review.merge_reviewed", "suggest.suggest_words"} <= set(STEPS)


@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_step_takes_its_config_record_and_only_callbacks_or_built_objects_besides(name):
    function, module = STEPS[name]
    assert broken_rules(function, module) == []


class ToyConfig(Record):
    seeds: int = 1


def test_a_step_with_loose_configuration_is_caught():
    def loose(suite: str, out: str, *, seeds: int = 1) -> StepOutput: ...

    def positional(config: ToyConfig, out: str) -> StepOutput: ...

    def extra(config: ToyConfig, *, seeds: int, on_progress: Any = None) -> StepOutput: ...

    def kept(config: ToyConfig, *, on_progress: Any = None, studio: Any) -> StepOutput: ...

    def not_a_record(config: str) -> StepOutput: ...

    here = inspect.getmodule(test_a_step_with_loose_configuration_is_caught)
    assert "its first parameter is not `config`" in broken_rules(loose, here)
    assert broken_rules(positional, here) == ["out is not keyword-only"]
    assert broken_rules(extra, here) == ["seeds is configuration outside the record"]
    assert broken_rules(kept, here) == []
    assert broken_rules(not_a_record, here) == ["`config` is not annotated with a config record"]
