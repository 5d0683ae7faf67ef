"""`py:` sentiment models that read words only (no negation), for suggestion rounds."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

POSITIVE = ("love", "great", "good", "like")
NEGATIVE = ("hate", "awful", "bad")


def keyword(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """(negative, neutral, positive): positive for a positive word, negative for a negative
    one, else neutral; "I don't love it" is positive, so "should not be positive" fails."""
    rows = []
    for text, _ in inputs:
        words = text.lower().replace("'", " ").split()
        if any(word.strip(".!?,") in POSITIVE for word in words):
            rows.append([0.1, 0.1, 0.8])
        elif any(word.strip(".!?,") in NEGATIVE for word in words):
            rows.append([0.8, 0.1, 0.1])
        else:
            rows.append([0.2, 0.6, 0.2])
    return rows


def gloomy(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """Negative for everything."""
    return [[0.7, 0.2, 0.1] for _ in inputs]


def word_vectors(texts: Sequence[str]) -> np.ndarray:
    """A bag-of-words embedding (hashed word counts): the same words, the same direction."""
    out = np.zeros((len(texts), 256))
    for i, text in enumerate(texts):
        for word in text.lower().split():
            word = word.strip(".!?,")
            out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 256] += 1.0
    return out


def same_words(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """(duplicate, not_duplicate): duplicate when the two texts share half their words."""
    rows = []
    for text, pair in inputs:
        a, b = set(text.lower().split()), set((pair or "").lower().split())
        shared = len(a & b) / max(1, len(a | b))
        rows.append([0.8, 0.2] if shared >= 0.5 else [0.2, 0.8])
    return rows
