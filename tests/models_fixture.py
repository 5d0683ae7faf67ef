"""Keyword "models" for `py:` specs in tests/test_models.py, and a tiny HF classifier builder."""

from __future__ import annotations

from pathlib import Path

from tests.tiny_models import word_tokenizer

POSITIVE = {"good", "great", "love"}
NEGATIVE = {"bad", "awful", "hate"}


def _score(text: str) -> int:
    """Positive minus negative keywords in `text`."""
    words = text.lower().replace(".", " ").split()
    return sum(w in POSITIVE for w in words) - sum(w in NEGATIVE for w in words)


def predict(inputs: list[tuple[str, str | None]]) -> list[dict[str, float]]:
    """Dicts over aliased labels (pos, neg, neutral): the keyword score's side gets 0.8."""
    rows = []
    for text, _ in inputs:
        score = _score(text)
        side = "pos" if score > 0 else "neg" if score < 0 else "neutral"
        rows.append({"pos": 0.1, "neg": 0.1, "neutral": 0.1, side: 0.8})
    return rows


def predict_array(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """Unnormalized scores over (negative, positive): 1 for the keyword side, 1 each if none."""
    return [[float(_score(t) <= 0), float(_score(t) >= 0)] for t, _ in inputs]


def predict_wrong_shape(inputs: list[tuple[str, str | None]]) -> list[list[float]]:
    """One column too many."""
    return [[1.0, 0.0, 0.0] for _ in inputs]


def build_tiny_classifier(
    path: Path,
    num_labels: int,
    id2label: dict[int, str] | None = None,
    bias: tuple[float, ...] | None = None,
) -> Path:
    """Save a one-layer BERT sequence classifier with `num_labels` outputs and its tokenizer."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    tokenizer = word_tokenizer()
    labels = id2label or {}
    extra = {"id2label": labels, "label2id": {v: k for k, v in labels.items()}}
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=160,
        num_labels=num_labels,
        pad_token_id=0,
        **(extra if id2label else {}),
    )
    model = BertForSequenceClassification(config)
    if bias is not None:
        with torch.no_grad():
            model.classifier.bias.copy_(torch.tensor(bias, dtype=torch.float32))
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
