"""Triage that learns a generator from its own labels: per group (one generator, one
setting), the parts (the prior, the members, the generic signals and the group learners of
`learners.KINDS`) are stacked by `stacking` into one score read as P(invalid)."""

from __future__ import annotations

from rankers.faces import face

__getattr__ = face(
    __name__,
    {
        "AdaptationConfig": "groups",
        "AdaptationState": "groups",
        "Adapted": "groups",
        "adapted_scores": "groups",
        "train_adaptation": "groups",
        "KINDS": "learners",
        "learner_for": "learners",
        "fit_stacker": "stacking",
        "stack": "stacking",
    },
)
__all__ = [
    "KINDS",
    "AdaptationConfig",
    "AdaptationState",
    "Adapted",
    "adapted_scores",
    "fit_stacker",
    "learner_for",
    "stack",
    "train_adaptation",
]
