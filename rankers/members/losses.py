"""Localized contrastive estimation (Gao et al., 2021, the Reranker the paper builds on).

Each training group holds one invalid candidate and g-1 valid candidates of the
same description; the loss is softmax cross-entropy over the group's scores with
the invalid candidate as the target, so the ranker learns to score it highest.
It is sentence-transformers' MultipleNegativesRankingLoss over explicit columns
(query, invalid, valid_1, ..., valid_{g-1}) with raw logits and no in-batch
negatives: the other groups in a batch belong to other descriptions.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Iterator

from rankers.members.inputs import document_text, query_text
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.records import LabelledCandidate


def lce_groups(
    labelled: Iterable[LabelledCandidate], group_size: int, rng: random.Random
) -> Iterator[dict[str, str]]:
    """One training row per invalid candidate: its query, itself, and g-1 valid ones.

    Valid candidates come from the same description (sampled with replacement when
    it has fewer than g-1). A description with no invalid or no valid candidates
    gives no group: LCE has nothing to contrast there (pointwise loss still uses it).
    """
    if group_size < 2:
        raise ValueError("group_size must be at least 2")
    by_description: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for item in labelled:
        invalid, valid = by_description[item.candidate.description_id]
        (valid if item.valid else invalid).append(item.candidate)
    for invalid, valid in by_description.values():
        if not invalid or not valid:
            continue
        for target in invalid:
            if len(valid) >= group_size - 1:
                others = rng.sample(valid, group_size - 1)
            else:
                others = [rng.choice(valid) for _ in range(group_size - 1)]
            row = {"query": query_text(target), "invalid": document_text(target)}
            for index, other in enumerate(others, 1):
                row[f"valid_{index}"] = document_text(other)
            yield row


def localized_contrastive_loss(model):
    """The LCE loss for a sentence-transformers CrossEncoder (imported lazily: torch)."""
    with IMPORT_LOCK:
        from sentence_transformers.cross_encoder.losses import MultipleNegativesRankingLoss

    class LocalizedContrastiveLoss(MultipleNegativesRankingLoss):
        """Softmax cross-entropy over each row's columns; no in-batch negatives."""

        def get_in_batch_negatives(self, anchors, candidates):
            return iter(())

    return LocalizedContrastiveLoss(model, num_negatives=None, scale=1.0, activation_fn=None)
