"""The member kinds of an ensemble, registered in `kinds.MEMBER_KINDS`: each trains on
labelled candidates, saves itself as JSON and weights (never a pickle), loads and scores
new candidates for how likely they are invalid."""

from __future__ import annotations

from rankers.faces import face

__getattr__ = face(
    __name__,
    {
        "MEMBER_KINDS": "kinds",
        "MemberKind": "kinds",
        "Ranker": "kinds",
        "load_member": "kinds",
        "train_member": "kinds",
    },
)
__all__ = ["MEMBER_KINDS", "MemberKind", "Ranker", "load_member", "train_member"]
