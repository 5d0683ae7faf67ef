"""The language-model learner: hidden states of a causal LM as a group's features, stacked
and reloaded like the group's other learners (a tiny Llama built in the test)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

import rankers.adaptation.lm_states as lm_states
from rankers.adaptation.groups import AdaptationConfig, adapted_scores, train_adaptation
from rankers.adaptation.learners import learner_folder
from rankers.adaptation.lm_states import (
    LM_LEARNER,
    LmLearnerConfig,
    LmStatesRanker,
    lm_prompt,
    lm_state_features,
)
from rankers.calibration import calibration_group
from rankers.members.cross_encoder import RankerError
from tests.tiny_models import build_tiny_causal_lm, make_candidate, make_labelled

pytest.importorskip("transformers")

GOOD = ["the crew was good .", "we love the food .", "i like the seat !", "the service is great ."]
BAD = ["the crew was awful .", "we hate the food .", "i never like the seat .", "it is bad ."]


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> LmLearnerConfig:
    folder = tmp_path_factory.mktemp("tiny-lm")
    model = build_tiny_causal_lm(folder / "model")
    return LmLearnerConfig(
        model=str(model), layer=2, min_labels=20, batch_size=3, cache_dir=folder / "cache"
    )


@pytest.fixture
def fresh_states(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lm_states, "_STATES", {})


def test_the_prompt_states_the_description_the_label_and_both_sides_of_a_pair():
    pair = make_candidate("it is good .", "it is great .", description="A paraphrase.")
    prompt = lm_prompt(pair.model_copy(update={"label": ["positive", "neutral"]}))
    assert prompt == (
        "Test description: A paraphrase.\nLabel: positive or neutral\n"
        "Case: it is good . / it is great ."
    )


def test_a_prompts_features_do_not_depend_on_the_batch_it_was_read_in(tiny_lm, fresh_states):
    candidates = [make_candidate(text) for text in [*GOOD, "the seat , the food and the crew ."]]
    together = lm_state_features(candidates, tiny_lm)
    assert together.shape == (5, 16) and np.isfinite(together).all()
    lm_states._STATES.clear()
    alone = lm_state_features(candidates, tiny_lm.model_copy(update={"batch_size": 1}))
    np.testing.assert_allclose(together, alone, atol=1e-5)  # right padding changes nothing
    assert len({row.tobytes() for row in together}) == 5


def test_without_a_layer_it_reads_the_middle_one_and_caches_it_as_that_layer(tiny_lm, fresh_states):
    candidates = [make_candidate(text) for text in GOOD]
    middle = lm_state_features(candidates, tiny_lm.model_copy(update={"layer": None}))
    assert len(lm_states._STATES) == len(GOOD)
    np.testing.assert_allclose(
        middle, lm_state_features(candidates, tiny_lm.model_copy(update={"layer": 1}))
    )
    assert len(lm_states._STATES) == len(GOOD)  # layer 1 is the middle one: read once
    assert not np.allclose(middle, lm_state_features(candidates, tiny_lm))


def test_a_layer_the_model_does_not_have_is_refused_with_its_layer_count(tiny_lm, fresh_states):
    with pytest.raises(RankerError, match=r"reads layer 9.*has 2"):
        lm_state_features([make_candidate(GOOD[0])], tiny_lm.model_copy(update={"layer": 9}))


def test_a_group_with_labels_stacks_the_lm_learner_and_ranks_with_it_after_a_reload(
    tiny_lm, tmp_path: Path
):
    items = make_labelled(GOOD * 4, BAD * 4)  # 32 labels of one generator
    invalid = np.array([not item.valid for item in items])
    noise = np.random.default_rng(0).normal(size=len(items))
    config = AdaptationConfig(embedding_learner=False, lm_learner=tiny_lm, min_random_labels=0)
    state = train_adaptation(items, noise, {"noise": noise}, [], config, tmp_path).state
    group = state.groups[calibration_group(items[0].candidate)]
    assert LM_LEARNER in group.parts and group.folder is not None
    saved = LmStatesRanker.load(learner_folder(tmp_path / "groups" / group.folder, LM_LEARNER))
    assert LmLearnerConfig.model_validate_json(saved.model) == tiny_lm
    candidates = [item.candidate for item in items]
    first = adapted_scores(candidates, noise, {"noise": noise}, [], state, tmp_path)
    again = adapted_scores(candidates, noise, {"noise": noise}, [], state, tmp_path)
    assert first.scores == again.scores
    assert LM_LEARNER in first.basis[0]
    assert group.parts[LM_LEARNER].weight > 0.3  # the words tell the verdicts apart
    scores = np.array(first.scores)
    assert scores[invalid].min() > scores[~invalid].max()  # the noise member earned nothing


def test_a_group_with_fewer_labels_than_the_lm_learners_minimum_stacks_without_it(
    tiny_lm, tmp_path: Path
):
    items = make_labelled(GOOD * 4, BAD * 4)
    noise = np.random.default_rng(0).normal(size=len(items))
    lm = tiny_lm.model_copy(update={"min_labels": 40})
    config = AdaptationConfig(lm_learner=lm, embedding_learner=False, min_random_labels=0)
    state = train_adaptation(items, noise, {"noise": noise}, [], config, tmp_path).state
    group = state.groups[calibration_group(items[0].candidate)]
    assert group.folder is not None and LM_LEARNER not in group.parts
    assert not list(tmp_path.rglob(LmStatesRanker.file_name))


def test_a_full_cache_is_emptied_without_losing_what_the_call_already_found(
    tiny_lm, fresh_states, monkeypatch
):
    candidates = [make_candidate(text) for text in [*GOOD, *BAD]]
    first = lm_state_features(candidates[:3], tiny_lm)
    monkeypatch.setattr(lm_states, "_STATES_LIMIT", 4)  # 3 kept + 5 new overflows it
    both = lm_state_features(candidates[:8], tiny_lm)
    np.testing.assert_allclose(both[:3], first)
    assert len(lm_states._STATES) == 5  # emptied, then this call's new prompts


def test_a_long_read_says_what_it_reads_and_how_far_it_got(
    tiny_lm, fresh_states, monkeypatch, caplog
):
    texts = [f"the seat number {n} was good ." for n in range(10)]
    monkeypatch.setattr(lm_states, "_PROGRESS_FROM", 8)
    monkeypatch.setattr(lm_states, "_PROGRESS_EVERY", 4)  # batches of 3: 3, 6, 9, 10 read
    with caplog.at_level(logging.INFO, logger="rankers.adaptation.lm_states"):
        lm_state_features([make_candidate(text) for text in texts], tiny_lm)
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == lm_states.__name__]
    assert logged == [
        (
            logging.INFO,
            f"language-model learner: reading 10 prompts with {tiny_lm.model} at layer 2",
        ),
        (logging.INFO, "read 6 of 10 prompts"),
        (logging.INFO, "read 9 of 10 prompts"),
    ]


def test_a_short_read_logs_nothing_at_info(tiny_lm, fresh_states, caplog):
    with caplog.at_level(logging.DEBUG, logger="rankers.adaptation.lm_states"):
        lm_state_features([make_candidate(text) for text in GOOD], tiny_lm)
    assert [r.levelno for r in caplog.records if r.name == lm_states.__name__] == [logging.DEBUG]
    assert "reading 4 prompts" in caplog.text
