"""Validity triage: rankers that score generated candidates for how likely they are
invalid, merged, stacked per generator and calibrated to P(valid).

- `rankers.members`: the member kinds of an ensemble (cross-encoders, the lexical and
  embedding rankers, the suite neighbours, an LLM judge), each trained, saved, loaded and
  scored behind one interface.
- `rankers.adaptation`: how a generator's own labels reshape the triage: the group
  learners as registered kinds and the stacker that weighs every part.
- `rankers.evaluation`: how well a triage orders a labelled set (review effort, the gap
  closed, the parts beside it).
- Here: the ensemble's config (`config`), training (`ensemble_training`), the trained
  ensemble and its triage (`ensemble`), cross-fitting folds, Borda count, calibration,
  the rule-made hard cases and the active loop.
"""

from __future__ import annotations

from rankers.faces import face

__getattr__ = face(
    __name__,
    {
        "EnsembleConfig": "config",
        "load_config": "config",
        "shipped_configs": "config",
        "Ensemble": "ensemble",
        "Triage": "ensemble",
        "train_ensemble": "ensemble_training",
        "trained_ensemble": "ensemble_training",
    },
)
__all__ = [
    "Ensemble",
    "EnsembleConfig",
    "Triage",
    "load_config",
    "shipped_configs",
    "train_ensemble",
    "trained_ensemble",
]
