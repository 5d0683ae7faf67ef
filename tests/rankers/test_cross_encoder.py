"""Cross-encoder rankers: tiny BERT, ELECTRA and RoBERTa models load, score and train."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rankers.members.cross_encoder import (
    CrossEncoderConfig,
    CrossEncoderRanker,
    RankerError,
    train_cross_encoder,
)
from rankers.members.inputs import ranker_input
from rankers.members.losses import lce_groups
from tests.tiny_models import build_tiny_cross_encoder, make_candidate, make_labelled

KINDS = ["bert", "electra", "roberta"]


GOOD = ["i love the crew .", "great flight !", "we enjoy the food .", "good service ."]
BAD = ["i hate the crew .", "awful flight !"]


def candidate(text: str, pair: str | None = None):
    return make_candidate(text, pair)


def labelled_set():
    return make_labelled(GOOD, BAD)


@pytest.fixture(scope="module", params=KINDS)
def tiny_path(request, tmp_path_factory):
    return build_tiny_cross_encoder(request.param, tmp_path_factory.mktemp(request.param))


def test_ranker_input_shows_description_label_and_both_texts_of_a_pair():
    query, document = ranker_input(candidate("Q1?", "Q2?"))
    assert query == "A positive sentence. Label: positive."
    assert document == "Q1? || Q2?"


def test_tiny_models_of_every_family_load_and_score(tiny_path):
    ranker = CrossEncoderRanker.load("tiny", tiny_path)
    scores = ranker.score([candidate("great flight !"), candidate("awful flight !", "no")])
    assert scores.shape == (2,) and np.isfinite(scores).all()
    assert ranker.score([]).shape == (0,)


def test_scoring_in_batches_equals_scoring_one_at_a_time(tiny_path):
    ranker = CrossEncoderRanker.load("tiny", tiny_path)
    items = [candidate(t) for t in ["great flight !", "i hate it", "the seat was bad ."]]
    together = ranker.score(items, batch_size=3)
    alone = np.concatenate([ranker.score([c], batch_size=1) for c in items])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_lce_groups_hold_one_invalid_and_g_minus_1_valid_of_its_description():
    groups = list(lce_groups(labelled_set(), 4, random.Random(0)))
    assert len(groups) == 2
    for row in groups:
        assert set(row) == {"query", "invalid", "valid_1", "valid_2", "valid_3"}
        assert row["invalid"] in {"i hate the crew .", "awful flight !"}


def test_descriptions_without_invalid_or_valid_candidates_give_no_group():
    only_valid = [i for i in labelled_set() if i.valid]
    assert list(lce_groups(only_valid, 4, random.Random(0))) == []


@pytest.mark.parametrize("loss", ["lce", "bce"])
def test_training_is_seeded_and_learns_to_score_invalid_higher(tmp_path, loss):
    path = build_tiny_cross_encoder("bert", tmp_path / "base")
    config = CrossEncoderConfig(
        name="t",
        model=str(path),
        loss=loss,
        group_size=5,
        epochs=30,
        learning_rate=2e-2,
        batch_size=2,
        seed=3,
    )
    first = train_cross_encoder(labelled_set(), config, tmp_path / "w1")
    second = train_cross_encoder(labelled_set(), config, tmp_path / "w2")
    items = [i.candidate for i in labelled_set()]
    scores = first.score(items)
    np.testing.assert_allclose(scores, second.score(items), atol=1e-5)
    assert scores[4:].min() > scores[:4].max()  # the two invalid ones come first


def test_lce_without_any_invalid_candidate_says_to_use_bce(tmp_path):
    path = build_tiny_cross_encoder("bert", tmp_path / "base")
    config = CrossEncoderConfig(name="t", model=str(path), loss="lce", epochs=1)
    with pytest.raises(RankerError, match="use loss: bce"):
        train_cross_encoder([i for i in labelled_set() if i.valid], config, tmp_path / "w")


def test_a_missing_model_path_is_a_ranker_error(tmp_path):
    with pytest.raises(RankerError, match="cannot load ranker"):
        CrossEncoderRanker.load("x", tmp_path / "nowhere")
