"""Each flow task takes its step's config record whole, and the cache fingerprints the
files that record names as read: never a field the record declares its step writes."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import pytest
from prefect import Task

from testaug.core.records import Record


def step_tasks() -> dict[str, Task[..., Any]]:
    """The tasks of flows.tasks, by their name in the module."""
    from flows import tasks

    return {name: value for name, value in vars(tasks).items() if isinstance(value, Task)}


TASKS = sorted(step_tasks())


def test_the_walk_finds_the_tasks():
    assert {"rank_candidates", "generate_candidates", "push_to_label_studio"} <= set(TASKS)


@pytest.mark.parametrize("name", TASKS)
def test_a_task_takes_its_steps_config_record_whole(name):
    task = step_tasks()[name]
    parameters = inspect.signature(task.fn).parameters
    assert list(parameters) == ["config"], f"{name} takes {list(parameters)}"
    record = get_type_hints(task.fn)["config"]
    assert inspect.isclass(record) and issubclass(record, Record)


@pytest.mark.parametrize("name", TASKS)
def test_what_a_tasks_record_says_its_step_writes_are_path_fields(name):
    from testaug.steps.contract import written_fields

    task = step_tasks()[name]
    record = get_type_hints(task.fn)["config"]
    writes = written_fields(record.model_construct())
    assert writes, f"{record.__name__} declares no WRITES"
    for field in writes:
        assert "Path" in str(record.model_fields[field].annotation), (record.__name__, field)


def test_a_task_is_the_step_itself_where_the_step_needs_nothing_else():
    from flows import tasks
    from testaug.steps import grow, rank

    assert tasks.rank_candidates.fn is rank.rank_candidates
    assert tasks.expand_induced.fn is grow.expand_induced


def key(config: Record, writes: tuple[str, ...] | None = None) -> str | None:
    from flows.caching import InputFiles

    return InputFiles(writes=writes).compute_key(None, {"config": config}, None)


def test_a_records_key_changes_with_an_input_files_content_not_with_an_outputs(tmp_path):
    from testaug.steps.rank import RankConfig

    candidates, rankers, out = tmp_path / "candidates.jsonl", tmp_path / "rankers", tmp_path / "r"
    candidates.write_text("one\n")
    rankers.mkdir()
    config = RankConfig(candidates=candidates, rankers=rankers, out=out)
    first = key(config)
    out.write_text("written by the step\n")
    assert key(config) == first
    candidates.write_text("two\n")
    assert key(config) != first


def test_paths_in_lists_of_a_record_count_and_step_outputs_carry_their_own_hash(tmp_path):
    from flows.caching import input_files
    from testaug.steps.contract import StepOutput
    from testaug.steps.grow import ExpandInducedConfig, InduceSummary

    known = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in known:
        path.write_text("x\n")
    templates = StepOutput(
        step="induce",
        path=tmp_path / "templates.yaml",
        sha256="0",
        summary=InduceSummary.model_construct(kind="induce"),
    )
    config = ExpandInducedConfig(
        templates=templates, known=tuple(known), out=tmp_path / "out", per_template=1, seed=0
    )
    assert input_files(config) == [("known[0]", known[0]), ("known[1]", known[1])]
    first = key(config)
    known[1].write_text("y\n")
    assert key(config) != first


def test_a_task_may_name_what_its_step_writes_where_the_record_serves_several(tmp_path):
    from testaug.steps.review import ReviewConfig

    ranked, annotations = tmp_path / "ranked.jsonl", tmp_path / "annotations.jsonl"
    ranked.write_text("r\n")
    annotations.write_text("one verdict\n")
    config = ReviewConfig(ranked=ranked, annotations=annotations, out=tmp_path)
    review, merge = key(config), key(config, writes=("out",))
    annotations.write_text("two verdicts\n")
    assert key(config) == review  # the review writes the annotations
    assert key(config, writes=("out",)) != merge  # the merge reads them
