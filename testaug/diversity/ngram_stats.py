"""BLEU's sufficient statistics of every text against all the others, vectorised with numpy.

Against many references BLEU clips each hypothesis n-gram count by its largest count
in any reference. Over "every text but i" that maximum is the largest count over all
texts unless text i holds it, and then the second largest. So: give every token an
integer id, every n-gram an integer id (an (n-1)-gram id and a token id, made dense
with `np.unique`), count (text, n-gram) pairs with one `np.unique`, find each
n-gram's top count, how many texts hold it and its second count with
`np.maximum.at`, and sum the clipped counts per text and order with `np.bincount`.
Every step is a sort or a pass over arrays as long as the texts' n-grams:
O(T log T) for T tokens.

`closest_other_lengths` gives each text's closest reference length among the others
(ties to the shorter, as sacrebleu and NLTK choose).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict


class NgramStats(BaseModel):
    """Per text: matched n-grams (clipped by the other texts) and hypothesis n-grams per order."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    correct: np.ndarray  # (texts, max_order) int64
    total: np.ndarray  # (texts, max_order) int64
    lengths: np.ndarray  # (texts,) int64: tokens per text


def token_ids(tokens: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, int]:
    """All texts' tokens as one int64 array of ids, the token count per text, the vocabulary size."""
    vocabulary: dict[str, int] = {}
    add = vocabulary.setdefault
    flat = [add(token, len(vocabulary)) for text in tokens for token in text]
    lengths = np.fromiter((len(text) for text in tokens), dtype=np.int64, count=len(tokens))
    return np.asarray(flat, dtype=np.int64), lengths, len(vocabulary)


def ngram_stats(tokens: Sequence[Sequence[str]], max_order: int) -> NgramStats:
    """Each text's n-gram matches against all the other texts (clipped) and its n-gram totals."""
    n_texts = len(tokens)
    ids, lengths, vocabulary = token_ids(tokens)
    doc = np.repeat(np.arange(n_texts, dtype=np.int64), lengths)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])) if n_texts else lengths
    room = lengths[doc] - (np.arange(len(ids), dtype=np.int64) - starts[doc])  # tokens from here
    docs, grams, orders = [], [], []
    previous, offset = ids, 0
    for n in range(1, max_order + 1):
        valid = np.flatnonzero(room >= n)  # positions where an n-gram starts
        raw = ids[valid] if n == 1 else previous[valid] * max(vocabulary, 1) + ids[valid + n - 1]
        distinct, dense = np.unique(raw, return_inverse=True)
        dense = dense.reshape(-1).astype(np.int64)
        docs.append(doc[valid])
        grams.append(dense + offset)
        orders.append(np.full(len(distinct), n - 1, dtype=np.int64))
        previous = np.full(len(ids), -1, dtype=np.int64)  # the n-gram id at each start
        previous[valid] = dense
        offset += len(distinct)
    width = max(offset, 1)
    pairs, counts = np.unique(
        np.concatenate(docs) * width + np.concatenate(grams), return_counts=True
    )
    pair_doc, pair_gram = pairs // width, pairs % width
    correct = _clipped(pair_doc, pair_gram, counts.astype(np.int64), offset)
    slot = pair_doc * max_order + np.concatenate(orders)[pair_gram]
    size = n_texts * max_order
    matched = np.bincount(slot, weights=correct, minlength=size)
    total = np.bincount(slot, weights=counts, minlength=size)
    return NgramStats(
        correct=np.rint(matched).astype(np.int64).reshape(n_texts, max_order),
        total=np.rint(total).astype(np.int64).reshape(n_texts, max_order),
        lengths=lengths,
    )


def _clipped(doc: np.ndarray, gram: np.ndarray, count: np.ndarray, n_grams: int) -> np.ndarray:
    """Each (text, n-gram) count clipped by the n-gram's largest count in any other text:
    the top count over all texts, or for the one text that alone holds it, the second."""
    top = np.zeros(n_grams, dtype=np.int64)
    np.maximum.at(top, gram, count)
    at_top = count == top[gram]
    holders = np.bincount(gram[at_top], minlength=n_grams)
    second = np.zeros(n_grams, dtype=np.int64)
    np.maximum.at(second, gram[~at_top], count[~at_top])
    sole = at_top & (holders[gram] == 1)
    others = np.where(sole, second[gram], top[gram])
    return np.minimum(count, others).astype(np.float64)


def closest_other_lengths(lengths: np.ndarray) -> np.ndarray:
    """Per text, the length among the other texts closest to its own; ties to the shorter.

    Needs at least two texts."""
    distinct, counts = np.unique(lengths, return_counts=True)
    at = np.searchsorted(distinct, lengths)
    shared = counts[at] > 1
    below = np.where(at > 0, distinct[np.maximum(at - 1, 0)], -1)
    has_above = at + 1 < len(distinct)
    above = np.where(has_above, distinct[np.minimum(at + 1, len(distinct) - 1)], -1)
    take_below = (below >= 0) & (~has_above | (lengths - below <= above - lengths))
    alone = np.where(take_below, below, above)
    return np.where(shared, lengths, alone)
