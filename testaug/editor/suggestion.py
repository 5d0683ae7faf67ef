"""Word suggestions: what the editor proposes for a masked slot, and why."""

from __future__ import annotations

from pydantic import BaseModel, Field


class WordSuggestion(BaseModel):
    """One proposed word (or words, one per mask) for a masked sentence, with its score."""

    words: list[str] = Field(description="one filler per mask, in order")
    score: float = Field(description="higher is better: log-probability of the filled sentence")
    sources: list[str] = Field(
        default_factory=list,
        description="where the candidate came from: wordnet, lexicon:<name>, lm, mlm:<model>, "
        "relation:<kind>:<word>",
    )
    masked: str = Field(description="the masked sentence, as the user wrote it")
    filled: str = Field(description="the sentence with the words in place")

    @property
    def word(self) -> str:
        """The suggestion as one string (words joined by a space when there are several masks)."""
        return " ".join(self.words)
