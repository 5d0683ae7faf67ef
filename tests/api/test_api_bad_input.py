"""Bad input to the Python API: every public function refuses it with an InputError (a
TestAugError) naming the argument in the API's own terms (`models[1]`, `cases[0].label`,
`perturb`), never a raw pydantic error with its web link, a CLI flag or a temporary file;
and expand's default is the sample a default run takes, not every fill."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from typing import Any

import pytest

import testaug
import testaug.api.suites
from testaug.core.errors import InputError

KEY_VARIABLES = ("OPENAI_API_KEY", "TESTAUG_OPENAI_API_KEY", "OPENAI_BASE_URL", "TESTAUG_BASE_URL")


@pytest.fixture(scope="module")
def cases():
    return testaug.expand("sentiment", per_template=1, capabilities="Negation")[:6]


def relabelled(cases, label: str):
    return [case.model_copy(update={"label": label}) for case in cases]


class NoSuchBackend:
    """Not a backend: it has no `complete`."""


# (what is called, how the error starts)
BAD_CALLS: dict[str, tuple[Callable[[Any, Any], Any], str]] = {
    "unknown spec": (lambda c, t: testaug.evaluate(c, "vadr", perturb=0), "models: unknown model"),
    "bad spec in a list": (
        lambda c, t: testaug.evaluate(c, ["vader", "vadr"], perturb=0),
        "models[1]: unknown model spec 'vadr'; did you mean 'vader'?",
    ),
    "an object that is no model": (
        lambda c, t: testaug.evaluate(c, ["vader", 3], perturb=0),
        "models[1]: int is not a model under test",
    ),
    "no model": (lambda c, t: testaug.evaluate(c, [], perturb=0), "models: no model under test"),
    "negative perturb": (
        lambda c, t: testaug.evaluate(c, "vader", perturb=-1),
        "perturb: input should be greater than or equal to 0, got -1",
    ),
    "unknown evidence": (
        lambda c, t: testaug.evaluate(c, "vader", evidence="some"),
        "evidence: expected one of verified, all, got 'some'",
    ),
    "labels not names": (
        lambda c, t: testaug.evaluate(c, "vader", labels=[1, 2]),
        "labels: expected label names",
    ),
    "cases not records": (
        lambda c, t: testaug.evaluate([1, 2], "vader", perturb=0),
        "cases[0]: expected a TestCase, got an int",
    ),
    "no cases": (lambda c, t: testaug.evaluate(None, "vader"), "cases: expected test cases"),
    "a case's label outside the task": (
        lambda c, t: testaug.evaluate(relabelled(c, "great"), "vader", perturb=0),
        "cases[0].label: label 'great' is not a label of task 'sentiment'",
    ),
    "an empty out": (lambda c, t: testaug.evaluate(c, "vader", out=""), "out: an empty path"),
    "suite of no kind": (lambda c, t: testaug.load_suite(3), "suite: expected a Suite"),
    "expand of no suite": (lambda c, t: testaug.expand(None), "suite: expected a Suite"),
    "per_template 0": (
        lambda c, t: testaug.expand("sentiment", per_template=0),
        "per_template: expected a whole number of at least 1, or None for every fill, got 0",
    ),
    "mistyped capability": (
        lambda c, t: testaug.expand("sentiment", capabilities=["Negaton"]),
        "capabilities: no capability 'Negaton' in suite 'testaug-sentiment'; did you mean "
        "'Negation'?",
    ),
    "writing no cases": (
        lambda c, t: testaug.write_cases([c[0], "text"], t / "out.jsonl"),
        "cases[1]: expected a TestCase, got a str",
    ),
    "reading no path": (lambda c, t: testaug.read_cases(None), "path: expected a path"),
    "diversity by no dimension": (
        lambda c, t: testaug.measure_diversity(c, by="colour"),
        "by: cannot group by 'colour'",
    ),
    "report of no folder": (lambda c, t: testaug.report(7), "run_dir: expected a path"),
    "generate with no backend": (
        lambda c, t: testaug.generate(c, t / "g.jsonl", backend=NoSuchBackend()),
        "backend: expected a backend kind",
    ),
    "generate with a mistyped backend": (
        lambda c, t: testaug.generate(c, t / "g.jsonl", backend="opnai"),
        "backend: expected one of local, openai",
    ),
    "generate with no samples": (
        lambda c, t: testaug.generate(c, t / "g.jsonl", backend=NoSuchBackend(), samples=0),
        "samples: input should be greater than or equal to 1, got 0",
    ),
    "generate from no cases": (
        lambda c, t: testaug.generate([None], t / "g.jsonl"),
        "seeds[0]: expected a TestCase, got None",
    ),
    "review of no ranking": (
        lambda c, t: testaug.review_automatically(3),
        "ranked: expected a path",
    ),
    "review with an unknown option": (
        lambda c, t: testaug.review_automatically(t / "ranked.jsonl", targte=0.9),
        "targte: unknown option",
    ),
    "review of no config": (
        lambda c, t: testaug.review_automatically(t / "ranked.jsonl", config=3),
        "config: expected a ReviewConfig (or its fields as keyword arguments), got an int",
    ),
    "rank of no config": (
        lambda c, t: testaug.rank(config="ranked.jsonl"),
        "config: expected a RankConfig",
    ),
    "induction with an unknown option": (
        lambda c, t: testaug.induce_templates(
            t / "accepted.jsonl", t / "cases.jsonl", t / "out.yaml", alow_empty=True
        ),
        "alow_empty: unknown option",
    ),
    "expansion of no config": (
        lambda c, t: testaug.expand_templates(config=3),
        "config: expected an ExpandInducedConfig",
    ),
    "templates of no induction": (
        lambda c, t: testaug.expand_templates("induced", t / "new.jsonl"),
        "templates: expected what induce_templates returned",
    ),
    "tree of no suite": (lambda c, t: testaug.tree_from_suite(3.5), "suite: expected a Suite"),
    "negative per_test": (
        lambda c, t: testaug.tree_from_suite("sentiment", per_test=-1),
        "per_test: expected a whole number of at least 0, got -1",
    ),
    "writing no tree": (
        lambda c, t: testaug.write_tree(t / "tree.csv", [1]),
        "tree[0]: expected a TreeTest, got an int",
    ),
    "retest of two models": (
        lambda c, t: testaug.retest(t / "tree.csv", ["vader", "vader"], t / "r.json"),
        "model: expected one model",
    ),
    "retest of a mistyped model": (
        lambda c, t: testaug.retest(t / "tree.csv", "vadr", t / "r.json"),
        "model: unknown model spec 'vadr'",
    ),
    "adapt with no model": (
        lambda c, t: testaug.adapt(t / "tree.csv", "/topic", [], t / "s.jsonl"),
        "models: no model under test",
    ),
    "a run of no config": (lambda c, t: testaug.run_pipeline(3), "config: expected a RunConfig"),
    "a run of an unknown size": (
        lambda c, t: testaug.run_pipeline(size="huge"),
        "size: unknown size",
    ),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_input_is_an_input_error_naming_the_argument(name, cases, tmp_path, monkeypatch):
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    call, start = BAD_CALLS[name]
    with pytest.raises(InputError) as raised:
        call(cases, tmp_path)
    message = str(raised.value)
    assert message.startswith(start)
    assert "pydantic" not in message and "--" not in message
    assert tempfile.gettempdir() not in message and str(tmp_path) not in message


def test_a_missing_api_key_is_named_before_any_work_with_what_to_set(cases, monkeypatch):
    import testaug.steps.measure

    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    perturbed = []
    monkeypatch.setattr(testaug.steps.measure, "perturb_suite", perturbed.append)
    with pytest.raises(InputError) as raised:
        testaug.evaluate(cases, ["vader", "llm:openai:gpt-4o-mini"])
    message = str(raised.value)
    assert message.startswith("models[1]: 'llm:openai:gpt-4o-mini' needs an API key")
    assert "OPENAI_API_KEY" in message and "?base_url=" in message and "--" not in message
    assert perturbed == []


def test_a_missing_api_key_for_generation_names_base_url_not_a_flag(cases, tmp_path, monkeypatch):
    for variable in KEY_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(InputError, match=r"^backend: the openai backend needs an API key") as err:
        testaug.generate(cases, tmp_path / "g.jsonl", backend="openai")
    assert "base_url=" in str(err.value) and "--base-url" not in str(err.value)


# --- how much expand fills ----------------------------------------------------------


def test_expand_samples_what_a_default_run_takes_unless_told_otherwise():
    default = testaug.expand("sentiment")
    assert default == testaug.expand("sentiment", per_template=20)
    assert 1_000 < len(default) < 5_000  # of 647,238 fills


def test_a_suite_given_as_cases_is_sampled_as_expand_samples_it():
    summary = testaug.evaluate("sentiment", "vader", perturb=0)
    assert summary.n_cases == len(testaug.expand("sentiment"))


def test_every_fill_of_a_large_suite_is_a_warning_first(tiny_suite_path, monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="testaug.api.suites"):
        every = testaug.expand(tiny_suite_path, per_template=None)
    assert every and not caplog.records
    monkeypatch.setattr(testaug.api.suites, "LARGE_EXPANSION", len(every) - 1)
    with caplog.at_level(logging.WARNING, logger="testaug.api.suites"):
        assert testaug.expand(tiny_suite_path, per_template=None) == every
    (warning,) = caplog.records
    assert f"{len(every):,} cases" in warning.getMessage()
    assert "per_template=N" in warning.getMessage()


def test_one_capability_may_be_named_by_itself():
    by_name = testaug.expand("sentiment", per_template=2, capabilities="Negation")
    assert by_name == testaug.expand("sentiment", per_template=2, capabilities=["Negation"])
    assert by_name and {case.capability for case in by_name} == {"Negation"}


def test_a_tree_from_a_suite_samples_what_the_cli_samples():
    from testaug.cli.tree import DEFAULT_PER_TEMPLATE

    tree = testaug.tree_from_suite("sentiment")
    assert tree == testaug.tree_from_suite("sentiment", per_template=DEFAULT_PER_TEMPLATE)
    assert len(tree.tests) < 2_000  # of 647,238 fills
