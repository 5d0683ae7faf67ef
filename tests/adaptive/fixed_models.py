"""`py:` models with fixed probabilities per text, so failure-score math is checked exactly."""

from __future__ import annotations

# (negative, neutral, positive) per text.
THREE = {
    "clear win": [0.1, 0.2, 0.7],
    "close call": [0.3, 0.25, 0.45],
    "mostly neutral": [0.2, 0.5, 0.3],
    "negative one": [0.6, 0.3, 0.1],
    "slightly neg": [0.45, 0.2, 0.35],
}
# P(positive) per text, for a (negative, positive) model.
BINARY = {"great": 0.9, "meh": 0.5, "bad": 0.2, "fine": 0.6, "ok": 0.7}
CALLS: list[list[str]] = []


def three(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """The fixed (negative, neutral, positive) rows; records the texts of every call."""
    CALLS.append([text for text, _ in inputs])
    return [THREE[text] for text, _ in inputs]


def binary(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """The fixed (negative, positive) rows."""
    return [[1 - BINARY[text], BINARY[text]] for text, _ in inputs]


def three_v2(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """A "new version" of `three`: "close call" now leans negative."""
    changed = {**THREE, "close call": [0.5, 0.2, 0.3]}
    return [changed[text] for text, _ in inputs]
