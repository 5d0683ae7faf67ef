"""Provenance of a suite case: what vouches for it, and whether that evidence is verified.

Template seeds come from templates people wrote; an LLM case was accepted by people or by
the ranker ensemble alone; an expanded case inherits the verdict on the case its template
was induced from (recorded in its `meta` when it is expanded). Verified evidence is what a
person saw: template seeds, cases accepted by people, and expansions of those.
"""

from __future__ import annotations

from typing import Literal

from testaug.core.records import TestCase

Provenance = Literal[
    "template", "people", "ranker", "llm-untraced", "expansion-verified", "expansion-unverified"
]
Evidence = Literal["verified", "all"]

PROVENANCES: tuple[Provenance, ...] = (
    "template",
    "people",
    "expansion-verified",
    "ranker",
    "expansion-unverified",
    "llm-untraced",
)
VERIFIED: frozenset[str] = frozenset({"template", "people", "expansion-verified"})
EVIDENCE: tuple[Evidence, ...] = ("verified", "all")

# Where an expanded case's origin is recorded (by `with_origin`).
ORIGIN_CASE = "induced_from"
ORIGIN_PROVENANCE = "induced_from_provenance"

# What each provenance means, as the report shows it; unverified ones start "unverified:".
MEANINGS: dict[str, str] = {
    "template": "template seed cases",
    "people": "generated cases accepted by people",
    "expansion-verified": "expanded from templates induced from cases people vouch for",
    "ranker": "unverified: accepted by the ranker, no person reviewed it",
    "expansion-unverified": (
        "unverified: expanded from a template induced from a case no person reviewed"
    ),
    "llm-untraced": "unverified: generated case with no record of who accepted it",
}


def case_provenance(case: TestCase) -> Provenance:
    """The provenance of a case: `template`; `people` or `ranker` for an LLM case by its
    `meta["accepted_by"]` (`llm-untraced` without one); `expansion-verified` when its
    template was induced from a verified case, else (or untraced) `expansion-unverified`."""
    if case.source == "template":
        return "template"
    if case.source == "llm":
        accepted_by = case.meta.get("accepted_by")
        return accepted_by if accepted_by in ("people", "ranker") else "llm-untraced"
    origin = case.meta.get(ORIGIN_PROVENANCE)
    return "expansion-verified" if is_verified(origin) else "expansion-unverified"


def is_verified(provenance: str | None) -> bool:
    """Whether a provenance is verified evidence (template, people, expansion-verified)."""
    return provenance in VERIFIED


def with_origin(case: TestCase, origin_case_id: str, origin: Provenance | None) -> TestCase:
    """An expanded case with the case its template was induced from, and that case's
    provenance, recorded in its `meta` (None: the origin's provenance is not known)."""
    meta = {**case.meta, ORIGIN_CASE: origin_case_id}
    if origin is not None:
        meta[ORIGIN_PROVENANCE] = origin
    return case.model_copy(update={"meta": meta})
