"""The patched-error-rate protocol end to end on a tiny BERT with a 2-label head and 3-label suites."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest

from testaug.core.errors import TestAugError
from testaug.core.records import TestCase
from testaug.fixing.finetune import (
    FineTuneConfig,
    case_inputs,
    fine_tune,
    load_classifier,
    output_labels,
    predict_proba,
)
from testaug.fixing.patching.protocol import IidExample, g_score, run_patching
from testaug.fixing.splits import split_cases
from tests.models_fixture import build_tiny_classifier

LABELS = ("negative", "neutral", "positive")
NOUNS = ("food", "seat", "crew", "service", "flight")
FAST = FineTuneConfig(learning_rate=3e-3, epochs=2, batch_size=8)


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    """A one-layer, hidden-size-16 BERT with a 2-label head (LABEL_0, LABEL_1), saved."""
    pytest.importorskip("torch")
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-bert"), 2)


def make_case(text: str, label, capability: str, description: str) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=description,
        description=description,
        text=text,
        label=label,
    )


def cases_of(template: str, words: tuple[str, ...], label, capability: str) -> list[TestCase]:
    return [
        make_case(template.format(noun=noun, word=word), label, capability, template)
        for noun in NOUNS
        for word in words
    ]


def suites() -> tuple[list[TestCase], list[TestCase]]:
    """A: positive, negative and negated-positive cases; B: neutral, negated-negative and
    the positive cases again (so some cases are in both)."""
    positive = cases_of("the {noun} was {word} .", ("good", "great"), "positive", "Vocabulary")
    negative = cases_of("the {noun} was {word} .", ("bad", "awful"), "negative", "Vocabulary")
    neutral = cases_of("the {noun} was {word} {noun} .", ("a", "one"), "neutral", "Vocabulary")
    negated_positive = cases_of(
        "the {noun} was not {word} .", ("good", "great"), "negative", "Negation"
    )
    negated_negative = cases_of(
        "the {noun} was not {word} .", ("bad", "awful"), ("neutral", "positive"), "Negation"
    )
    return positive + negative + negated_positive, neutral + negated_negative + positive


def test_fine_tune_replaces_a_two_label_head_with_a_three_label_one(tiny_bert, tmp_path):
    suite_a, _ = suites()
    messages: list[str] = []
    config = FAST.model_copy(update={"epochs": 4})
    tuned = fine_tune(
        tiny_bert,
        suite_a,
        labels=LABELS,
        config=config,
        output_dir=tmp_path / "out",
        on_progress=messages.append,
    )
    assert tuned.head_replaced and tuned.labels == LABELS
    losses = [float(message.rsplit(" ", 1)[1]) for message in messages]
    assert len(losses) == 4 and losses[-1] < losses[0]
    assert tuned.model.config.num_labels == 3
    reloaded = load_classifier(tmp_path / "out", labels=LABELS, train=True)
    assert not reloaded.head_replaced and reloaded.labels == LABELS
    probabilities = predict_proba(reloaded.model, reloaded.tokenizer, case_inputs(suite_a[:5]))
    assert probabilities.shape == (5, 3)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)


def test_fine_tune_is_seeded(tiny_bert):
    suite_a, _ = suites()
    inputs = case_inputs(suite_a)

    def probabilities(seed: int) -> np.ndarray:
        config = FAST.model_copy(update={"seed": seed, "epochs": 1})
        tuned = fine_tune(tiny_bert, suite_a, labels=LABELS, config=config)
        return predict_proba(tuned.model, tuned.tokenizer, inputs)

    np.testing.assert_array_equal(probabilities(1), probabilities(1))
    assert not np.allclose(probabilities(1), probabilities(2))


def test_fine_tune_defaults_are_testaugs():
    config = FineTuneConfig()
    assert (config.learning_rate, config.batch_size, config.epochs) == (5e-6, 8, 3)
    assert (config.max_length, config.seed, config.weight_decay, config.warmup_ratio) == (
        128,
        42,
        0.0,
        0.0,
    )


def test_output_labels_read_the_head_as_task_labels():
    assert output_labels({0: "NEGATIVE", 1: "POSITIVE"}, LABELS) == ("negative", "positive")
    assert output_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, LABELS) == LABELS
    assert output_labels({0: "LABEL_0", 1: "LABEL_1"}, LABELS) is None
    assert output_labels({0: "a", 1: "b"}, LABELS, ["negative", "positive"]) == (
        "negative",
        "positive",
    )
    with pytest.raises(TestAugError, match="model_labels"):
        output_labels({0: "a", 1: "b"}, LABELS, ["negative", "happy"])


def test_patching_report_is_consistent_over_two_seeds(tiny_bert):
    suite_a, suite_b = suites()
    iid = [IidExample(text="the crew was great .", label="positive")] * 3 + [
        IidExample(text="the seat was awful .", label="negative")
    ]
    messages: list[str] = []
    report = run_patching(
        suite_a,
        suite_b,
        tiny_bert,
        labels=LABELS,
        seeds=[1, 2],
        config=FAST,
        iid=iid,
        on_progress=messages.append,
    )
    assert (report.n_a, report.n_b, report.n_both, report.n_merged) == (30, 30, 10, 50)
    assert [run.seed for run in report.runs] == [1, 2] and messages
    merged = {case.id: case for case in suite_a + suite_b}
    for run in report.runs:
        split = split_cases(list(merged.values()), seed=run.seed)
        assert run.n_test == len(split.test_ids)
        assert run.n_train_a == len({c.id for c in suite_a} & set(split.train_ids))
        assert run.n_train_b == len({c.id for c in suite_b} & set(split.train_ids))
        assert run.delta_a == run.err_unpatched - run.err_patched_a
        assert run.new_head_unpatched and run.new_head_patched
        assert set(run.per_capability) == {"Negation", "Vocabulary"}
        assert sum(c.n_test for c in run.per_capability.values()) == run.n_test
        assert run.g_patched_a == pytest.approx(g_score(1 - run.err_patched_a, run.iid_patched_a))
    unpatched = [run.err_unpatched for run in report.runs]
    patched_b = [run.err_patched_b for run in report.runs]
    assert report.overall.err_unpatched.mean == pytest.approx(statistics.fmean(unpatched))
    assert report.overall.err_unpatched.std == pytest.approx(statistics.stdev(unpatched))
    deltas = [u - p for u, p in zip(unpatched, patched_b, strict=True)]
    assert report.overall.delta_b.mean == pytest.approx(statistics.fmean(deltas))
    assert report.overall.delta_b.std == pytest.approx(statistics.stdev(deltas))
    assert report.overall.delta_a.mean == pytest.approx(
        report.overall.err_unpatched.mean - report.overall.err_patched_a.mean
    )
    assert set(report.per_capability) == {"Negation", "Vocabulary"}
    assert report.per_capability["Negation"].n_runs == 2
    assert report.iid is not None and report.iid.g_patched_b.n == 2
    assert type(report).model_validate_json(report.model_dump_json()) == report


def test_leave_one_class_out_runs_once_per_held_out_capability(tiny_bert):
    suite_a, suite_b = suites()
    report = run_patching(
        suite_a, suite_b, tiny_bert, labels=LABELS, seeds=[3], strategy="class", config=FAST
    )
    assert [run.held_out for run in report.runs] == ["Negation", "Vocabulary"]
    for run in report.runs:
        assert set(run.per_capability) == {run.held_out}
    assert report.overall.err_unpatched.n == 2 and report.iid is None
    assert report.per_capability["Negation"].n_runs == 1


def test_a_binary_head_named_by_model_labels_is_kept_for_the_unpatched_error(tiny_bert):
    suite_a, suite_b = suites()
    report = run_patching(
        suite_a,
        suite_b,
        tiny_bert,
        labels=LABELS,
        seeds=[4],
        config=FAST.model_copy(update={"epochs": 1}),
        model_labels=("negative", "positive"),
    )
    (run,) = report.runs
    assert not run.new_head_unpatched and run.new_head_patched


def test_g_score_is_the_harmonic_mean_of_pass_rate_and_iid_score():
    assert g_score(0.8, 0.9) == pytest.approx(2 * 0.8 * 0.9 / 1.7)
    assert g_score(0.5, 0.5) == pytest.approx(0.5)
    assert g_score(1.0, 0.0) == 0.0
    assert g_score(0.0, 0.0) == 0.0
