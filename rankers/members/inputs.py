"""How a candidate is shown to a cross-encoder: (description with label, candidate text)."""

from __future__ import annotations

from testaug.core.records import Candidate, label_options

PAIR_SEPARATOR = " || "


def query_text(candidate: Candidate) -> str:
    """The first segment: the test-case description and the proposed label."""
    return f"{candidate.description} Label: {' or '.join(label_options(candidate.label))}."


def document_text(candidate: Candidate) -> str:
    """The second segment: the candidate's text, or both texts of a pair."""
    if candidate.text_pair is None:
        return candidate.text
    return f"{candidate.text}{PAIR_SEPARATOR}{candidate.text_pair}"


def ranker_input(candidate: Candidate) -> tuple[str, str]:
    """The (query, document) pair a cross-encoder scores for invalidity."""
    return query_text(candidate), document_text(candidate)
