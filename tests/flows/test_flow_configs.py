"""Every flow takes its configuration record whole, as `config`, the way `pipeline` takes
RunConfig: no flow redeclares a field of that record as a parameter of its own (whose
default would then live in two places), and a deployment's flat parameters still find
their way into the record."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pytest
from pydantic import BaseModel

from testaug.core.records import Record


def flows() -> Iterator[Any]:
    """Every Prefect flow defined in a module of the `flows` package."""
    from prefect import Flow

    import flows as package

    for info in pkgutil.iter_modules(package.__path__, "flows."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, Flow) and value.fn.__module__ == module.__name__:
                yield value


def config_records(fn: Callable[..., Any]) -> dict[str, type[BaseModel]]:
    """The parameters of `fn` whose type is a record (a pydantic model), by name."""
    hints = get_type_hints(fn)
    return {
        name: hints[name]
        for name in inspect.signature(fn).parameters
        if inspect.isclass(hints.get(name)) and issubclass(hints[name], BaseModel)
    }


def field_names(record: type[BaseModel]) -> set[str]:
    """The fields of a record and of the records nested in it."""
    names = set(record.model_fields)
    for field in record.model_fields.values():
        if inspect.isclass(field.annotation) and issubclass(field.annotation, BaseModel):
            names |= field_names(field.annotation)
    return names


def redeclared(fn: Callable[..., Any]) -> list[str]:
    """The parameters of `fn` named like a field of the config record it takes."""
    records = config_records(fn)
    fields = set().union(*(field_names(r) for r in records.values())) if records else set()
    return [
        name for name in inspect.signature(fn).parameters if name not in records and name in fields
    ]


FLOWS = sorted(flows(), key=lambda flow: flow.name)


def test_the_walk_finds_the_flows():
    assert {flow.name for flow in FLOWS} >= {
        "adapt", "augment", "collect", "fix", "generalize", "pipeline", "retest", "train-rankers",
    }  # fmt: skip


@pytest.mark.parametrize("flow", FLOWS, ids=lambda flow: flow.name)
def test_a_flow_takes_one_config_record_whole(flow):
    records = config_records(flow.fn)
    assert list(records) == ["config"], f"{flow.name} takes {list(records)}"
    assert redeclared(flow.fn) == [], (
        f"flow {flow.name} redeclares field(s) of {records['config'].__name__}: "
        "take them from the record"
    )


class ToyConfig(Record):
    seeds: int = 1


class OuterConfig(Record):
    toy: ToyConfig = ToyConfig()


def test_a_flow_that_redeclares_a_field_of_its_record_is_caught():
    def toy(suite: Path, seeds: int = 1, config: OuterConfig = OuterConfig()) -> None: ...  # noqa: B008

    assert config_records(toy) == {"config": OuterConfig}
    assert redeclared(toy) == ["seeds"]


def test_a_deployments_flat_parameters_go_into_the_flows_config_record():
    from flows.deployments import flow_parameters
    from flows.generalize import generalize
    from flows.retest import retest

    flat = {"suite": "suite.jsonl", "iid": "iid.jsonl", "seeds": 3, "epochs": 1}
    wrapped = flow_parameters(generalize, flat)
    assert wrapped == {
        "config": {
            "suite": "suite.jsonl",
            "iid": "iid.jsonl",
            "analysis": {"seeds": 3, "epochs": 1},
        }
    }
    config = flow_parameters(retest, {"tree": "t.jsonl", "model": "vader"})
    assert retest.validate_parameters(config)["config"].folder() == Path("t.reports")
