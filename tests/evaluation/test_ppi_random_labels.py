"""The headline's prediction-powered interval rests only on people's labels drawn at random
for a generator (its calibration sample, read from the draws file beside the
annotations); labels picked because the ranker was unsure of a case or ranked it high
never enter the rectifier."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Annotation, Candidate, RankedCandidate, TestCase
from testaug.evaluation.failures import CaseResult
from testaug.evaluation.summary import headline
from testaug.evaluation.validity import Label, ValidityEvidence, run_validity
from testaug.review.selection import Draw, Sampled, draws_beside, generator_group, record_draws
from tests.cli_runner import run_testaug
from tests.evaluation.test_ppi_headline import RESULTS, result

RANDOM = [Label(f"p{i}", 0.9, True, "random") for i in range(4)] + [
    Label(f"x{i}", 0.9, False, "random")
    for i in range(2)  # rejected: not in the suite
]
# a biased set: every case the ranker was unsure of (or ranked high) turned out invalid
PICKED = [Label(f"u{i}", 0.9, False, "uncertain") for i in range(8)] + [
    Label(f"h{i}", 0.9, False, "ranked") for i in range(4)
]


def evidence(labels: list[Label]) -> ValidityEvidence:
    ids = [f"r{i}" for i in range(10)] + [label.case_id for label in labels]
    return ValidityEvidence(
        generator=dict.fromkeys(ids, "gen"),
        p_valid=dict.fromkeys(ids, 0.9),
        labels={"gen": labels},
    )


def as_random(labels: list[Label]) -> list[Label]:
    return [Label(x.case_id, x.p_valid, x.valid, "random") for x in labels]


def test_labels_picked_because_the_ranker_was_unsure_do_not_move_the_estimate():
    alone = headline(RESULTS, "all", evidence(RANDOM)).overall.interval
    with_picked = headline(RESULTS, "all", evidence(RANDOM + PICKED))
    interval = with_picked.overall.interval
    assert interval is not None and interval.method == "ppi"
    assert interval == alone  # the same estimate, bounds and label count
    assert interval.labelled == 6
    assert "6 people's labels" in with_picked.interval_note
    assert "12 labels picked because the ranker was unsure" in with_picked.interval_note


def test_the_same_labels_drawn_at_random_do_move_the_estimate():
    alone = headline(RESULTS, "all", evidence(RANDOM)).overall.interval
    drawn = headline(RESULTS, "all", evidence(RANDOM + as_random(PICKED))).overall.interval
    assert drawn.labelled == 18
    # more invalid cases among the random labels: the unverified cases (failing more
    # often than the verified ones) weigh less, so the error rate over valid cases drops
    assert drawn.estimate < alone.estimate


def test_too_few_random_labels_fall_back_to_wilson_on_verified_cases_with_a_note():
    head = headline(RESULTS, "all", evidence(RANDOM[:1] + PICKED))
    interval = head.overall.interval
    assert interval.method == "wilson-verified" and interval.n == 24  # the verified cases
    assert "no random labels" in head.interval_note and "gen" in head.interval_note


def test_a_rejected_case_the_model_never_ran_on_fails_as_often_as_the_generators_unverified():
    # unverified r0..r3 of `gen`, half failing; random labels: x0 rejected by people (not in
    # the suite, so the model never ran on it), p0 accepted (in the suite, passing)
    results = [result("p0", True, "people")] + [result(f"r{i}", i >= 2, "ranker") for i in range(4)]
    labels = [Label("x0", 0.8, False, "random"), Label("p0", 0.8, True, "random")]
    ids = ["r0", "r1", "r2", "r3", "x0", "p0"]
    validity = ValidityEvidence(
        generator=dict.fromkeys(ids, "gen"), p_valid=dict.fromkeys(ids, 0.8), labels={"gen": labels}
    )
    interval = headline(results, "all", validity).overall.interval
    # 5 cases, the unverified 4/5 of them; x0's F is 0.5, the unverified cases' failure rate
    # E[F V] = 1.6/5 - 4/5 * mean(0.5 * 0.8 - 0, 0) = 0.16
    # E[V]   = 4.2/5 - 4/5 * mean(0.8 - 0, 0.8 - 1) = 0.60
    assert interval.method == "ppi"
    assert interval.estimate == pytest.approx(0.16 / 0.60)  # F = 1 would give 0, F = 0 0.53


def candidate(text: str, label: str) -> Candidate:
    return Candidate(
        task="sentiment",
        capability="Negation",
        description_id="neg",
        description="A negated sentence.",
        text=text,
        label=label,
        prompt_id="p",
        seed_case_ids=(),
        backend="openai",
        model="gen-model",
    )


def case(text: str, label: str, accepted_by: str | None = None) -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Negation",
        description_id="neg",
        description="A negated sentence.",
        text=text,
        label=label,
        source="llm" if accepted_by else "template",
        meta={"accepted_by": accepted_by} if accepted_by else {},
    )


TEMPLATE = [  # the keyword model fails the first
    ("The crew was not great.", "negative"),
    ("The food was great.", "positive"),
    ("The seats were awful.", "negative"),
    ("I love this airline.", "positive"),
]
BY_RANKER = [  # unverified; the keyword model fails the first three
    ("I do not love the seats.", "negative"),
    ("The food was not bad.", "positive"),
    ("The staff was not good.", "negative"),
    ("The snack was awful.", "negative"),
    ("I love the crew.", "positive"),
    ("The meal was great.", "positive"),
]
RANDOM_VALID = [("The pilot was great.", "positive"), ("The tea was not awful.", "positive")]
RANDOM_INVALID = [("The plane is a banana.", "positive"), ("Seats.", "negative")]
UNSURE_INVALID = [(f"Not a review number {i}.", "negative") for i in range(6)]


def write_run_folder(folder: Path, first: Sampled, then: Sampled | None) -> None:
    """cases.jsonl, ranked.jsonl, annotations.jsonl and the draws file, as the pipeline
    leaves them: people labelled 4 of the generator's candidates drawn as `first` says
    and, where `then` is given, 6 more drawn that way (all invalid)."""
    cases = [case(t, y) for t, y in TEMPLATE] + [case(t, y, "ranker") for t, y in BY_RANKER]
    cases += [case(t, y, "people") for t, y in RANDOM_VALID]
    write_jsonl(folder / "cases.jsonl", cases)
    generated = BY_RANKER + RANDOM_VALID + RANDOM_INVALID + UNSURE_INVALID
    items = {t: candidate(t, y) for t, y in generated}
    write_jsonl(
        folder / "ranked.jsonl",
        [
            RankedCandidate(candidate=c, scores={}, borda_points=0.0, rank=i, p_valid=0.9)
            for i, c in enumerate(items.values())
        ],
    )
    verdicts = [(t, True, first) for t, _ in RANDOM_VALID]
    verdicts += [(t, False, first) for t, _ in RANDOM_INVALID]
    if then is not None:
        verdicts += [(t, False, then) for t, _ in UNSURE_INVALID]
    annotations = folder / "annotations.jsonl"
    write_jsonl(
        annotations,
        [
            Annotation(candidate_id=items[t].id, valid=v, annotator="ann", origin="terminal")
            for t, v, _ in verdicts
        ],
    )
    record_draws(
        draws_beside(annotations),
        [
            Draw(candidate_id=items[t].id, group=generator_group(items[t]), sampled=s)
            for t, _, s in verdicts
        ],
    )


def evaluate_all(folder: Path) -> dict:
    done = run_testaug(
        folder, "evaluate", "models", "cases.jsonl", "--model", "py:tests.models_fixture:predict",
        "--perturb", "0", "-o", "evaluation.json", "--evidence", "all",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads((folder / "evaluation.json").read_text())["models"][0]


def test_evaluate_with_all_evidence_rests_the_interval_on_the_random_labels_only(tmp_path):
    write_run_folder(tmp_path, "random", then="uncertain")
    model = evaluate_all(tmp_path)
    interval = model["error_rate_interval"]
    assert interval["method"] == "ppi"
    assert interval["labelled"] == len(RANDOM_VALID) + len(RANDOM_INVALID)
    assert "6 labels picked because the ranker was unsure" in model["headline"]["interval_note"]
    # the same estimate as from the random labels alone
    results = list(read_jsonl(tmp_path / "evaluation.results.jsonl", CaseResult))
    random_only = tmp_path / "random-only"
    random_only.mkdir()
    write_run_folder(random_only, "random", then=None)
    expected = headline(results, "all", run_validity(random_only)).overall.interval
    assert interval["estimate"] == pytest.approx(expected.estimate)
    assert (interval["low"], interval["high"]) == pytest.approx((expected.low, expected.high))


def test_a_run_folder_with_only_unsure_picked_labels_falls_back_with_a_note(tmp_path):
    write_run_folder(tmp_path, "uncertain", then="uncertain")
    model = evaluate_all(tmp_path)
    assert model["error_rate_interval"]["method"] == "wilson-verified"
    assert model["error_rate_interval"]["n"] == len(TEMPLATE) + len(RANDOM_VALID)
    note = model["headline"]["interval_note"]
    assert "no random labels" in note and "gen-model" in note


def test_labels_without_a_draw_record_are_not_taken_as_random(tmp_path):
    write_run_folder(tmp_path, "random", then="uncertain")
    draws_beside(tmp_path / "annotations.jsonl").unlink()
    validity = run_validity(tmp_path)
    assert validity is not None
    assert len(validity.labels_of("gen-model")) == 10
    assert {x.sampled for x in validity.labels_of("gen-model")} == {"ranked"}
    assert validity.random_labels("gen-model") == []
