"""The headline's intervals: Wilson's on verified evidence; with `evidence="all"`, the
prediction-powered interval from people's labels of the generator, or, without such
labels, Wilson's on the verified cases and a note that says so."""

from __future__ import annotations

import json

from testaug.core.jsonl import write_jsonl
from testaug.core.records import Annotation, Candidate, RankedCandidate
from testaug.evaluation.failures import CaseResult, interval_text
from testaug.evaluation.summary import ModelSummary, headline
from testaug.evaluation.validity import Label, ValidityEvidence, validity_evidence


def result(case_id: str, passed: bool, provenance: str, capability: str = "Negation"):
    return CaseResult(
        case_id=case_id,
        model="m",
        test_type="MFT",
        capability=capability,
        description_id="neg",
        description="A negated sentence.",
        source="template" if provenance == "template" else "llm",
        provenance=provenance,
        text=f"text {case_id}",
        passed=passed,
        predicted="positive",
        expected="negative",
        probabilities={"negative": 0.4, "positive": 0.6},
        reason="",
    )


RESULTS = (
    [result(f"t{i}", i % 4 != 0, "template") for i in range(20)]  # 5 of 20 fail
    + [result(f"p{i}", i != 0, "people") for i in range(4)]  # people's labels, 1 fails
    + [result(f"r{i}", i % 2 == 0, "ranker") for i in range(10)]  # 5 of 10 fail
)


def evidence(valid_labels: int, invalid_labels: int) -> ValidityEvidence:
    ids = [f"r{i}" for i in range(10)] + [f"p{i}" for i in range(4)] + ["x0", "x1"]
    labels = [Label(f"p{i}", 0.9, True, "random") for i in range(valid_labels)]
    labels += [Label(f"x{i}", 0.9, False, "random") for i in range(invalid_labels)]
    return ValidityEvidence(
        generator=dict.fromkeys(ids, "gen"),
        p_valid=dict.fromkeys(ids, 0.9),
        labels={"gen": labels},
    )


def test_verified_headline_rates_carry_wilson_intervals():
    head = headline(RESULTS, "verified")
    assert head.overall.interval is not None and head.overall.interval.method == "wilson"
    assert interval_text(head.overall) == "25.0% (12.0–44.9)"  # 6 of 24
    assert head.by_capability["Negation"].interval == head.overall.interval
    assert head.interval_note == "95% intervals: Wilson score"


def test_all_evidence_with_people_labels_takes_the_ppi_interval():
    head = headline(RESULTS, "all", evidence(valid_labels=4, invalid_labels=2))
    interval = head.overall.interval
    assert interval is not None and interval.method == "ppi"
    assert interval.labelled == 6 and interval.n == 34
    assert interval.estimate is not None and interval.low <= interval.estimate <= interval.high
    assert "prediction-powered" in head.interval_note and "6 people's labels" in head.interval_note
    assert head.by_capability["Negation"].interval is not None
    assert head.by_capability["Negation"].interval.method == "ppi"


def test_invalid_labels_lower_the_weight_of_the_unverified_failures():
    trusting = headline(RESULTS, "all", evidence(valid_labels=4, invalid_labels=0))
    doubting = headline(RESULTS, "all", evidence(valid_labels=2, invalid_labels=2))
    # unverified cases fail more often (50%) than verified ones (~25%): the fewer of them
    # are valid, the lower the error rate over valid cases
    assert doubting.overall.interval.estimate < trusting.overall.interval.estimate


def test_all_evidence_without_people_labels_falls_back_to_wilson_on_verified_cases():
    head = headline(RESULTS, "all", None)
    interval = head.overall.interval
    assert interval is not None and interval.method == "wilson-verified"
    assert interval.n == 24  # the verified cases only
    assert "no people's labels" in head.interval_note
    unlabelled = headline(RESULTS, "all", evidence(valid_labels=1, invalid_labels=0))
    assert unlabelled.overall.interval.method == "wilson-verified"
    assert "no random labels" in unlabelled.interval_note and "gen" in unlabelled.interval_note


def test_a_summary_written_before_intervals_still_loads():
    head = headline(RESULTS, "verified")
    data = {
        "model": "m",
        "error_rate": head.overall.rate,
        "error_rate_by_capability": {"Negation": head.overall.rate},
        "labels": ["negative", "positive"],
        "overall": head.overall.model_dump(mode="json", exclude={"interval"}),
        "by_capability": {},
        "by_description": {},
        "by_test_type": {},
        "by_source": {},
        "matrix": {},
        "failures": [],
    }
    summary = ModelSummary.model_validate_json(json.dumps(data))
    assert summary.overall.interval is None and summary.error_rate_interval is None
    assert interval_text(summary.overall) == "25.0%"


def candidate(text: str, model: str = "gen-model") -> Candidate:
    return Candidate(
        task="sentiment",
        capability="Negation",
        description_id="neg",
        description="A negated sentence.",
        text=text,
        label="negative",
        prompt_id="p",
        seed_case_ids=(),
        backend="openai",
        model=model,
    )


def test_validity_evidence_reads_people_labels_and_not_the_rankers(tmp_path):
    items = [candidate(t) for t in ("a", "b", "c")]
    ranked = [
        RankedCandidate(candidate=c, scores={}, borda_points=0.0, rank=i, p_valid=0.5 + i / 10)
        for i, c in enumerate(items)
    ]
    write_jsonl(tmp_path / "ranked.jsonl", ranked)
    annotations = [
        Annotation(candidate_id=items[0].id, valid=True, annotator="ann", origin="terminal"),
        Annotation(candidate_id=items[1].id, valid=True, annotator="a", origin="label-studio"),
        Annotation(
            candidate_id=items[1].id,
            valid=True,
            annotator="a",
            origin="label-studio",
            corrected_label="positive",
        ),
        Annotation(candidate_id=items[2].id, valid=True, annotator="rule", origin="ranker"),
    ]
    write_jsonl(tmp_path / "annotations.jsonl", annotations)
    found = validity_evidence(tmp_path / "ranked.jsonl", tmp_path / "annotations.jsonl")
    assert found is not None
    assert found.generator[items[2].id] == "gen-model"
    assert found.p_valid[items[2].id] == 0.7
    assert sorted((x.case_id, x.p_valid, x.valid) for x in found.labels_of("gen-model")) == sorted(
        [(items[0].id, 0.5, True), (items[1].id, 0.6, False)]  # the latest: a corrected label
    )
    assert validity_evidence(tmp_path / "none.jsonl", None) is None


def test_a_headline_with_no_verified_case_takes_the_interval_of_the_same_cases():
    generated = [r for r in RESULTS if r.provenance == "ranker"]
    untraced = [r.model_copy(update={"provenance": "llm-untraced"}) for r in generated]
    for results in (generated, untraced):
        head = headline(results, "verified")
        assert head.fallback and head.overall.n == 10
        # one interval for one rate: Wilson's on the ten cases the rate rests on, not
        # Wilson's on the (no) verified cases, the whole 0-100
        assert head.overall.interval.method == "wilson" and head.overall.interval.n == 10
        assert interval_text(head.overall) == "50.0% (23.7–76.3)"
        assert "Wilson score on the 10 cases the rates rest on" in head.interval_note
