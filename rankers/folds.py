"""Cross-fitting folds: every prompt's candidates in one fold, each fold with both verdicts."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from rankers.members.cross_encoder import RankerError
from testaug.core.records import LabelledCandidate


def fold_assignment(items: Sequence[LabelledCandidate], folds: int, *, seed: int = 0) -> np.ndarray:
    """The fold (0..folds-1) of each labelled candidate.

    Candidates of one prompt are near paraphrases, so a prompt's candidates share a fold.
    Prompts are dealt, largest first and in a seeded order, to the fold that has the fewest
    of their majority verdict so far, so every fold gets valid and invalid candidates.
    With fewer than two prompts a fold, candidates are dealt one by one.
    """
    if len(items) < folds:
        raise RankerError(f"{len(items)} labelled candidates cannot fill {folds} folds")
    by_prompt: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        by_prompt[item.candidate.prompt_id].append(index)
    groups = list(by_prompt.values())
    if len(groups) < 2 * folds:  # too few prompts to deal: deal candidates one by one
        groups = [[index] for index in range(len(items))]
    random.Random(seed).shuffle(groups)
    groups.sort(key=len, reverse=True)
    counts = np.zeros((folds, 2))  # valid, invalid per fold
    assignment = np.zeros(len(items), dtype=np.int64)
    for group in groups:
        invalid = sum(not items[i].valid for i in group)
        column = int(invalid * 2 >= len(group))
        fold = int(np.lexsort((counts.sum(axis=1), counts[:, column]))[0])
        assignment[group] = fold
        counts[fold, 0] += len(group) - invalid
        counts[fold, 1] += invalid
    return assignment
