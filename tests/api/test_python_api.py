"""The Python API: suites loaded by name, models under test given as objects (labels or
probabilities) or spec strings, the same results as the CLI, generation through a
backend object, and test trees retested on an object."""

from __future__ import annotations

import json

import numpy as np
import pytest

import testaug
from testaug.core.errors import InputError
from testaug.core.records import label_options
from testaug.evaluation.models import ModelError
from testaug.evaluation.models.labels import neutral_band
from testaug.testing.fake_backend import ScriptedBackend
from tests.cli_runner import run_testaug

LABELS = ("negative", "neutral", "positive")


@pytest.fixture(scope="module")
def cases():
    return testaug.expand("sentiment", per_template=1, capabilities=["Negation", "Vocabulary"])


def always_positive(texts):
    return ["positive" for _ in texts]


def always_positive_probabilities(texts):
    return np.tile([0.1, 0.2, 0.7], (len(texts), 1))


def test_a_shipped_suite_loads_by_name_and_expands_to_the_capabilities_asked(cases):
    suite = testaug.load_suite("sentiment")
    assert suite.task == "sentiment" and "sentiment" in testaug.suite_names()
    assert cases and {case.capability for case in cases} == {"Negation", "Vocabulary"}


def test_a_model_object_returning_labels_fails_the_cases_of_other_labels(cases):
    summary = testaug.evaluate(cases, always_positive, perturb=0)
    wrong = sum("positive" not in label_options(case.label) for case in cases)
    (model,) = summary.models
    assert model.model == "python:always_positive"
    assert model.overall.n == len(cases) and model.overall.failed == wrong
    assert set(model.error_rate_by_capability) == {"Negation", "Vocabulary"}


def test_a_model_object_returning_probabilities_scores_as_its_argmax_labels(cases):
    by_labels = testaug.evaluate(cases, always_positive, perturb=0)
    by_probabilities = testaug.evaluate(cases, always_positive_probabilities, perturb=0)
    assert by_probabilities.models[0].error_rate == by_labels.models[0].error_rate
    assert (
        by_probabilities.models[0].error_rate_by_capability
        == by_labels.models[0].error_rate_by_capability
    )


class TwoLabelModel:
    """A two-label sentiment model: P(positive) 0.5 for a negated text, else 0.9."""

    name = "binary"
    labels = ("negative", "positive")

    def predict_proba(self, inputs, *, batch_size=32):
        return np.array([[0.5, 0.5] if " not " in f" {t} " else [0.1, 0.9] for t, _ in inputs])


class ReorderedModel(TwoLabelModel):
    """Three labels in an order of its own, under their short names."""

    name = "reordered"
    labels = ("POS", "neu", "Negative")

    def predict_proba(self, inputs, *, batch_size=32):
        return np.tile([0.7, 0.2, 0.1], (len(inputs), 1))


def test_a_two_label_sentiment_object_takes_checklists_neutral_band(cases, tmp_path):
    summary = testaug.evaluate(cases, TwoLabelModel(), perturb=0, out=tmp_path)
    assert summary.models[0].model == "python:binary"
    results = [json.loads(line) for line in (tmp_path / "evaluation.results.jsonl").open()]
    by_text = {r["text"]: r for r in results}
    for case in cases:
        p_pos = 0.5 if " not " in f" {case.text} " else 0.9
        band = neutral_band(np.array([p_pos]))[0]
        result = by_text[case.text]
        assert result["predicted"] == ("neutral" if p_pos == 0.5 else "positive")
        assert np.allclose([result["probabilities"][label] for label in LABELS], band)


def test_an_object_with_its_own_label_order_and_names_is_mapped_by_name(cases):
    reordered = testaug.evaluate(cases, ReorderedModel(), perturb=0)
    positive = testaug.evaluate(cases, always_positive, perturb=0)
    assert reordered.models[0].model == "python:reordered"
    assert reordered.models[0].error_rate == positive.models[0].error_rate


def test_a_label_outside_the_task_is_refused_naming_it(cases):
    with pytest.raises(ModelError, match="maybe"):
        testaug.evaluate(cases, lambda texts: ["maybe"] * len(texts), perturb=0)


def test_an_object_that_is_no_model_is_refused(cases):
    with pytest.raises(InputError, match=r"^models: int is not a model under test"):
        testaug.evaluate(cases, 42, perturb=0)


def test_a_spec_string_gives_what_the_cli_gives_on_the_same_cases(cases, tmp_path):
    path = tmp_path / "cases.jsonl"
    testaug.write_cases(cases, path)
    result = run_testaug(
        tmp_path, "evaluate", "models", str(path), "--model", "vader", "--perturb", "3", "--json"
    )
    assert result.returncode == 0, result.stderr
    from_api = testaug.evaluate(path, "vader", perturb=3)
    assert from_api.model_dump(mode="json") == json.loads(result.stdout)


def test_evaluating_into_a_folder_writes_the_run_files_the_report_reads(cases, tmp_path):
    summary = testaug.evaluate(cases, ["vader", always_positive], out=tmp_path, perturb=0)
    assert [m.model for m in summary.models] == ["vader", "python:always_positive"]
    assert testaug.read_cases(tmp_path / "cases.jsonl") == cases
    written = testaug.report(tmp_path)
    assert written.path.is_file() and written.files["markdown"].is_file()
    assert "python:always_positive" in written.files["markdown"].read_text(encoding="utf-8")


def test_a_pair_task_model_object_is_called_with_text_pairs(tmp_path):
    pairs = testaug.expand("paraphrase", per_template=1)[:6]
    seen = []

    def same_length(inputs):
        seen.extend(inputs)
        return ["duplicate" if len(a) == len(b) else "not_duplicate" for a, b in inputs]

    summary = testaug.evaluate(pairs, same_length, perturb=0)
    assert summary.models[0].overall.n == len(pairs)
    assert seen == [(case.text, case.text_pair) for case in pairs]


def test_generation_runs_through_a_backend_object_and_returns_the_candidates(tmp_path):
    def reply(prompt: str, index: int) -> str:
        return f" A generated case {abs(hash(prompt)) % 1000} number {index}. }}\n- {{ more"

    seeds = testaug.expand("sentiment", per_template=3, capabilities=["Vocabulary"])
    done = testaug.generate(
        seeds,
        tmp_path / "candidates.jsonl",
        backend=ScriptedBackend(reply),
        prompts_per_description=1,
        samples=2,
        cache=tmp_path / "responses.sqlite",
    )
    candidates = done.result.candidates
    assert candidates and all(c.text.startswith("A generated case") for c in candidates)
    assert done.output.records == len(candidates)
    assert {c.capability for c in candidates} == {"Vocabulary"}


def test_a_tree_is_retested_on_a_model_object(tmp_path):
    tree = testaug.tree_from_suite("sentiment", per_template=1)
    path = tmp_path / "tree.csv"
    assert testaug.write_tree(path, tree) == len(tree.tests)
    report = testaug.retest(path, always_positive, tmp_path / "report.json")
    assert report.model == "python:always_positive"
    assert report.overall.tests > 0 and 0 < report.overall.failing < report.overall.tests
