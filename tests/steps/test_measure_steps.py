"""The steps that measure a suite, on files and without Prefect: diversity, CheckList
perturbations, each model under test (VADER and a keyword model in tests/models_fixture.py),
the combined evaluation and the run's report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testaug.core.errors import InputError, TestAugError
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.evaluation.failures import CaseResult
from testaug.evaluation.perturbations.cases import PerturbedCase
from testaug.steps.contract import StepOutput
from testaug.steps.measure import (
    CombineEvaluationsConfig,
    DiversityConfig,
    EvaluationConfig,
    ModelEvaluationConfig,
    PerturbConfig,
    ReportConfig,
    combine_evaluations,
    evaluate_one_model,
    measure_diversity,
    model_slug,
    perturb_suite,
    write_run_report,
)
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite

pytest.importorskip("vaderSentiment")

KEYWORDS = "py:tests.models_fixture:predict"


def perturbing(cases: Path, out: Path, per_test: int, seed: int = 0) -> PerturbConfig:
    """What `perturb_suite` takes to perturb `per_test` cases per test."""
    return PerturbConfig(
        cases=cases, out=out, evaluation=EvaluationConfig(perturb=per_test, seed=seed)
    )


def evaluating(cases: Path, perturbed: Path, model: str, out: Path, **how) -> ModelEvaluationConfig:
    """What `evaluate_one_model` takes (`how`: EvaluationConfig's fields)."""
    return ModelEvaluationConfig(
        cases=cases, perturbed=perturbed, model=model, out=out, evaluation=EvaluationConfig(**how)
    )


def combining(parts: list[StepOutput], out: Path, **how) -> CombineEvaluationsConfig:
    """What `combine_evaluations` takes (`how`: EvaluationConfig's fields)."""
    return CombineEvaluationsConfig(parts=tuple(parts), out=out, evaluation=EvaluationConfig(**how))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cases.jsonl (two cases of each template of the tiny suite) and perturbed.jsonl
    (two cases per INV/DIR test, seed 0)."""
    folder = tmp_path_factory.mktemp("measure")
    suite = load_suite(Path(__file__).parents[1] / "data" / "tiny" / "suite.yaml")
    write_jsonl(folder / "cases.jsonl", expand_suite(suite, per_template=2, seed=0))
    perturb_suite(perturbing(folder / "cases.jsonl", folder / "perturbed.jsonl", 2, seed=0))
    return folder


@pytest.fixture(scope="module")
def evaluations(run_dir: Path) -> list[StepOutput]:
    """VADER and the keyword model, each evaluated into run_dir/evaluation/."""
    return [
        evaluate_one_model(
            evaluating(
                run_dir / "cases.jsonl",
                run_dir / "perturbed.jsonl",
                spec,
                run_dir / "evaluation" / f"{model_slug(spec)}.json",
            )
        )
        for spec in ("vader", KEYWORDS)
    ]


def cases_in(run_dir: Path) -> list[TestCase]:
    return list(read_jsonl(run_dir / "cases.jsonl", TestCase))


@pytest.mark.parametrize(
    "step",
    [
        lambda cases, out: measure_diversity(DiversityConfig(cases=cases, out=out)),
        lambda cases, out: perturb_suite(perturbing(cases, out, 2)),
        lambda cases, out: evaluate_one_model(evaluating(cases, cases, "vader", out)),
    ],
    ids=["diversity", "perturb", "evaluate"],
)
def test_a_cases_file_without_cases_is_an_error_naming_it(tmp_path, step):
    empty = tmp_path / "cases.jsonl"
    write_jsonl(empty, [])
    with pytest.raises(InputError, match="no test cases in the file") as raised:
        step(empty, tmp_path / "out.json")
    assert str(empty) in str(raised.value)
    assert not (tmp_path / "out.json").exists()


def test_diversity_is_measured_on_the_whole_and_per_group(run_dir, tmp_path):
    generated = [
        TestCase(
            **case.model_dump(exclude={"id", "text", "source"}),
            text=f"{case.text} Truly.",
            source="llm",
        )
        for case in cases_in(run_dir)[:3]
    ]
    cases = tmp_path / "cases.jsonl"
    write_jsonl(cases, [*cases_in(run_dir), *generated])

    done = measure_diversity(DiversityConfig(cases=cases, out=tmp_path / "diversity.json"))

    written = json.loads(done.path.read_text())
    assert sorted(group["group"]["source"] for group in written["groups"]) == ["llm", "template"]
    assert done.records == 2
    assert done.summary.n_cases == written["n_cases"] == 11
    assert done.summary.self_bleu == written["self_bleu"] and 0 < written["self_bleu"] < 1
    assert done.summary.dependency_paths == written["dependency_paths"] > 0


def test_perturbations_are_a_seeded_sample_of_the_cases(run_dir, tmp_path):
    perturbed = list(read_jsonl(run_dir / "perturbed.jsonl", PerturbedCase))
    assert perturbed and {p.test_type for p in perturbed} == {"INV", "DIR"}
    assert {p.original.id for p in perturbed} <= {case.id for case in cases_in(run_dir)}

    again = perturb_suite(perturbing(run_dir / "cases.jsonl", tmp_path / "again.jsonl", 2))
    assert again.path.read_bytes() == (run_dir / "perturbed.jsonl").read_bytes()
    assert again.records == len(perturbed)
    other = perturb_suite(perturbing(run_dir / "cases.jsonl", tmp_path / "other.jsonl", 2, 1))
    assert other.path.read_bytes() != again.path.read_bytes()


def test_no_perturbations_asked_for_write_an_empty_file(run_dir, tmp_path):
    done = perturb_suite(perturbing(run_dir / "cases.jsonl", tmp_path / "perturbed.jsonl", 0))
    assert done.records == 0 and done.path.read_text() == ""


def test_a_model_is_judged_on_every_case_and_perturbation_with_its_results_beside(
    run_dir, evaluations
):
    vader = evaluations[0]
    results = list(read_jsonl(vader.files["results"], CaseResult))
    cases = {case.id for case in cases_in(run_dir)}
    perturbed = {p.id for p in read_jsonl(run_dir / "perturbed.jsonl", PerturbedCase)}
    assert {r.case_id for r in results} == cases | perturbed
    assert vader.records == len(results) and {r.model for r in results} == {"vader"}
    assert vader.files["results"] == run_dir / "evaluation" / "vader.results.jsonl"

    [model] = json.loads(vader.path.read_text())["models"]
    counted = [r for r in results if not r.filtered]
    failed = sum(not r.passed for r in counted)
    assert model["error_rate"] == pytest.approx(100 * failed / len(counted))
    assert (vader.summary.model, vader.summary.error_rate) == ("vader", model["error_rate"])
    assert vader.summary.evidence == "verified"  # template cases are verified evidence


def test_progress_is_reported_up_to_every_case(run_dir, tmp_path):
    seen: list[tuple[int, int]] = []
    config = evaluating(
        run_dir / "cases.jsonl", run_dir / "perturbed.jsonl", KEYWORDS, tmp_path / "kw.json",
        batch_size=4,
    )  # fmt: skip
    done = evaluate_one_model(config, on_progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    assert done.records > 0


def test_an_unknown_model_is_an_error_that_lists_the_kinds(run_dir, tmp_path):
    with pytest.raises(TestAugError, match="unknown model spec 'no-such-model'"):
        evaluate_one_model(
            evaluating(
                run_dir / "cases.jsonl",
                run_dir / "perturbed.jsonl",
                "no-such-model",
                tmp_path / "x",
            )
        )


def test_the_combined_evaluation_holds_every_model_and_every_result(run_dir, evaluations, tmp_path):
    done = combine_evaluations(combining(evaluations, tmp_path / "evaluation.json"))
    written = json.loads(done.path.read_text())
    assert [m["model"] for m in written["models"]] == ["vader", KEYWORDS]
    assert written["n_cases"] == len(cases_in(run_dir)) and written["evidence"] == "verified"
    rates = {part.summary.model: part.summary.error_rate for part in evaluations}
    assert done.summary.error_rates == rates
    assert set(done.summary.headline) == set(rates)

    combined = (tmp_path / "evaluation.results.jsonl").read_text().splitlines()
    parts = [line for p in evaluations for line in p.files["results"].read_text().splitlines()]
    assert combined == parts


def test_combining_no_evaluation_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no model evaluations to combine"):
        combine_evaluations(combining([], tmp_path / "evaluation.json"))


def test_the_report_has_a_section_for_each_measure_the_run_has(run_dir, evaluations, tmp_path):
    for name in ("cases.jsonl", "perturbed.jsonl"):
        (tmp_path / name).write_bytes((run_dir / name).read_bytes())
    only_run = write_run_report(ReportConfig(run_dir=tmp_path))
    assert only_run.summary.sections == ("Run",)

    measure_diversity(
        DiversityConfig(cases=tmp_path / "cases.jsonl", out=tmp_path / "diversity.json")
    )
    combine_evaluations(combining(evaluations, tmp_path / "evaluation.json"))
    done = write_run_report(ReportConfig(run_dir=tmp_path))
    assert done.summary.sections == ("Run", "Diversity", "Models under test", "Per-test summary")
    assert done.path == tmp_path / "report.html"
    assert "vader" in done.path.read_text() and "vader" in done.files["markdown"].read_text()


@pytest.mark.parametrize(
    ("spec", "slug"),
    [
        ("vader", "vader"),
        ("spacy:eng_spacysentiment", "spacy-eng_spacysentiment"),
        ("hf:org/model?labels=a,b", "hf-org-model-labels-a-b"),
        ("::", "model"),
    ],
)
def test_a_model_spec_becomes_a_file_name_safe_slug(spec, slug):
    assert model_slug(spec) == slug
