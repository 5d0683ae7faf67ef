"""CheckList's Vocab+POS INV perturbation: neutral words replaced by in-context alternatives.

"the" becomes "this", "that" becomes "this" (not in "I think that he..."), "very"
becomes "really": each neutral word has a small fixed set of alternatives, and the
fill-in scorer decides which fit the context (`testaug.editor.neutral_words`). By
default the decisions come from the table shipped with testaug (scored once over the
bundled suites), so the battery needs no LM; pass `scorer=` (an `LMScorer`) to score
any text live, or `table=` for a table of your own.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from testaug.editor.neutral_words import (
    DEFAULT_MARGIN,
    NeutralTable,
    fitting,
    occurrences,
    replace,
    shipped_table,
)

if TYPE_CHECKING:
    from testaug.editor.scorer import LMScorer

NAME = "change_neutral_words"


def change_neutral_words(
    text: str,
    rng: random.Random,
    *,
    n: int = 1,
    table: NeutralTable | None = None,
    scorer: LMScorer | None = None,
    margin: float = DEFAULT_MARGIN,
) -> list[str]:
    """Up to n texts, each with one neutral word replaced by an alternative that fits."""
    if scorer is not None:
        choices = [
            replace(text, occurrence, alternative)
            for occurrence, fit in fitting(scorer, [text], margin=margin)[0]
            for alternative in fit
        ]
    else:
        table = table if table is not None else shipped_table()
        choices = [
            replace(text, occurrence, alternative)
            for occurrence in occurrences(text)
            for alternative in table.alternatives(occurrence)
        ]
    choices = [c for c in dict.fromkeys(choices) if c != text]
    return rng.sample(choices, min(n, len(choices)))
