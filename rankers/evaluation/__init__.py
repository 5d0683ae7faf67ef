"""How well a triage orders a labelled set: review effort at a target accuracy against
random and perfect orders (`triage`), the order `testaug rank` writes with each part
beside it (`report`), and the active loop replayed on a held-out generator
(`labelling_order`)."""

from __future__ import annotations

from rankers.faces import face

__getattr__ = face(
    __name__,
    {
        "evaluate_scores": "report",
        "evaluate_triage": "report",
        "effort_at_target": "triage",
        "gap_closed": "triage",
        "triage_report": "triage",
    },
)
__all__ = ["effort_at_target", "evaluate_scores", "evaluate_triage", "gap_closed", "triage_report"]
