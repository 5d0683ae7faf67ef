"""Fill-in with a real masked LM (`--mlm hf:roberta-base`): transformers' fill-mask pipeline.

Each `{mask}` becomes the model's mask token; the pipeline's top tokens per mask are
combined (best joint score first, scores are the sum of the tokens' log-probabilities,
each mask predicted independently as the pipeline does). `{a:mask}` is given the
article "a" while predicting, and the right one in the filled sentence.
"""

from __future__ import annotations

import itertools
import logging
import math
from functools import lru_cache
from typing import Any

from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.editor.masks import MaskedText
from testaug.editor.suggestion import WordSuggestion

logger = logging.getLogger(__name__)

PREFIX = "hf:"


def mlm_name(spec: str) -> str:
    """The model name or path in an `hf:NAME_OR_PATH` spec."""
    if not spec.startswith(PREFIX) or not spec[len(PREFIX) :]:
        raise TestAugError(f"--mlm takes hf:NAME_OR_PATH (a Hugging Face masked LM), got {spec!r}")
    return spec[len(PREFIX) :]


@lru_cache(maxsize=2)
def load_fill_mask(name: str) -> Any:
    """transformers' fill-mask pipeline for a masked LM name or folder (loaded once)."""
    with IMPORT_LOCK:
        from transformers import pipeline

    try:
        return pipeline("fill-mask", model=name, tokenizer=name, device=-1)
    except (OSError, ValueError) as exc:
        raise TestAugError(f"cannot load the masked LM {name!r}: {exc}") from exc


def mlm_suggest(
    masked: MaskedText, fill_mask: Any, *, n: int = 30, model: str = "mlm"
) -> list[WordSuggestion]:
    """The `n` best fills from a fill-mask pipeline, as suggestions (source `mlm:<model>`)."""
    token = fill_mask.tokenizer.mask_token
    parts = [masked.literals[0]]
    for i in range(masked.n_masks):
        article = {"a": "a ", "A": "A "}.get(masked.options[i] or "", "")
        parts += [article + token, masked.literals[i + 1]]
    text = "".join(parts)
    per_mask = fill_mask(text, top_k=max(n, 10))
    if masked.n_masks == 1:
        per_mask = [per_mask]
    options: list[list[tuple[str, float]]] = []
    for predictions in per_mask:
        words: dict[str, float] = {}
        for p in predictions:
            word = p["token_str"].strip()
            if word and any(c.isalnum() for c in word):
                words.setdefault(word, math.log(max(p["score"], 1e-12)))
        options.append(list(words.items()))
    combos = sorted(
        itertools.islice(itertools.product(*options), 20_000),
        key=lambda combo: -sum(score for _, score in combo),
    )
    out: list[WordSuggestion] = []
    seen: set[str] = set()
    for combo in combos:
        words = [word for word, _ in combo]
        filled = masked.fill(words)
        if filled in seen:
            continue
        seen.add(filled)
        out.append(
            WordSuggestion(
                words=words,
                score=round(sum(score for _, score in combo), 4),
                sources=[f"mlm:{model}"],
                masked=masked.text,
                filled=filled,
            )
        )
        if len(out) >= n:
            break
    return out
