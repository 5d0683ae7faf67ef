"""The API functions that front a step take the step's config record whole (`config`) or
its fields as keyword arguments, named as the record names them, validated into the
record in one place (`step_config`)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from testaug.api.arguments import step_config
from testaug.core.errors import InputError

# The API function (of testaug.api.augment unless its module is named), and the record
# of the step it fronts.
FRONTS = {
    "measure:measure_diversity": "testaug.steps.measure:DiversityConfig",
    "measure:report": "testaug.steps.measure:ReportConfig",
    "rank": "testaug.steps.rank:RankConfig",
    "induce_templates": "testaug.steps.grow:InduceConfig",
    "expand_templates": "testaug.steps.grow:ExpandInducedConfig",
    "review_config": "testaug.review.run_files:ReviewConfig",
    "review_automatically": "testaug.review.run_files:ReviewConfig",
    "review_in_terminal": "testaug.review.run_files:ReviewConfig",
    "push_to_label_studio": "testaug.review.run_files:ReviewConfig",
    "pull_from_label_studio": "testaug.review.run_files:ReviewConfig",
    "merge_reviewed": "testaug.review.run_files:ReviewConfig",
}


@pytest.mark.parametrize("name", FRONTS)
def test_a_function_that_fronts_a_step_takes_its_record_or_its_fields(name):
    import importlib

    module, _, function = name.rpartition(":")
    api = importlib.import_module(f"testaug.api.{module or 'augment'}")
    parameters = inspect.signature(getattr(api, function)).parameters
    record = FRONTS[name].split(":")[1]
    config = parameters["config"]
    assert config.kind is inspect.Parameter.KEYWORD_ONLY and config.default is None
    assert record in str(config.annotation)
    assert list(parameters.values())[-1].kind is inspect.Parameter.VAR_KEYWORD


def test_the_fields_go_over_the_record_and_bad_ones_are_named_as_written(tmp_path):
    from testaug.steps.rank import RankConfig

    config = RankConfig(candidates=tmp_path / "c.jsonl", rankers=tmp_path, out=tmp_path / "r")
    assert step_config(RankConfig, config, {"batch_size": 8}).batch_size == 8
    assert step_config(RankConfig, None, dict(config)) == config
    with pytest.raises(InputError) as raised:
        step_config(RankConfig, config, {"batch_size": 0, "cases_path": Path("x")})
    problems = [(p.field, p.message) for p in raised.value.problems]
    assert problems == [
        ("batch_size", "input should be greater than or equal to 1, got 0"),
        ("cases_path", "unknown option"),
    ]


def test_diversity_from_its_record_is_diversity_from_its_fields(tmp_path):
    import testaug
    from testaug.steps.measure import DiversityConfig

    cases = tmp_path / "cases.jsonl"
    testaug.expand("sentiment", per_template=1, capabilities="Negation", out=cases)
    config = DiversityConfig(cases=cases, out=tmp_path / "diversity.json", by="capability")
    from_record = testaug.measure_diversity(config=config)
    assert (tmp_path / "diversity.json").is_file()
    assert testaug.measure_diversity(cases, by="capability") == from_record
    with pytest.raises(InputError, match=r"^by: cannot group by 'colour'"):
        testaug.measure_diversity(config=config, by="colour")
