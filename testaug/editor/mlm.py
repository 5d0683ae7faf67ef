"""Fill-in with a real masked LM (`--mlm hf:roberta-base`): transformers' fill-mask pipeline.

Each `{mask}` becomes the model's mask token; the pipeline's top tokens per mask are
combined (best joint score first, scores are the sum of the tokens' log-probabilities,
each mask predicted independently as the pipeline does). `{a:mask}` is given the
article "a" while predicting, and the right one in the filled sentence.

Only safetensors weights are loaded: a folder holding pickled weights
(`pytorch_model.bin`) and no `model.safetensors` is refused before anything is read (a
pickle can run code), and a damaged weights file is an error naming it. A sentence
longer than the model reads is an error naming its length and the model's maximum.
"""

from __future__ import annotations

import itertools
import logging
import math
from functools import lru_cache
from typing import Any

from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.model_files import LOAD_SAFETENSORS, check_model_source, load_failure
from testaug.editor.masks import MaskedText
from testaug.editor.suggestion import WordSuggestion

logger = logging.getLogger(__name__)

PREFIX = "hf:"


def mlm_name(spec: str) -> str:
    """The model name or path in an `hf:NAME_OR_PATH` spec."""
    if not spec.startswith(PREFIX) or not spec[len(PREFIX) :]:
        raise TestAugError(f"--mlm takes hf:NAME_OR_PATH (a Hugging Face masked LM), got {spec!r}")
    return spec[len(PREFIX) :]


WHAT = "the masked LM"


@lru_cache(maxsize=2)
def load_fill_mask(name: str) -> Any:
    """transformers' fill-mask pipeline for a masked LM name or folder (loaded once), from
    safetensors weights only (`core.model_files`)."""
    check_model_source(name, WHAT)
    with IMPORT_LOCK:
        from transformers import pipeline

    try:
        return pipeline(
            "fill-mask",
            model=name,
            tokenizer=name,
            device=-1,
            model_kwargs=dict(LOAD_SAFETENSORS),
        )
    except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
        raise TestAugError(load_failure(WHAT, name, exc)) from exc


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
    _check_length(text, fill_mask, masked.text)
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


def _check_length(text: str, fill_mask: Any, shown: str) -> None:
    """A TestAugError when the sentence has more tokens than the model reads."""
    tokenizer = fill_mask.tokenizer
    limits = [getattr(tokenizer, "model_max_length", None)]
    config = getattr(getattr(fill_mask, "model", None), "config", None)
    limits.append(getattr(config, "max_position_embeddings", None))
    known = [limit for limit in limits if isinstance(limit, int) and 0 < limit < 1_000_000]
    if not known:
        return
    limit = min(known)
    tokens = len(tokenizer(text)["input_ids"])
    if tokens > limit:
        start = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TestAugError(
            f"the masked sentence {start!r} is {tokens:,} tokens, more than the masked LM "
            f"reads ({limit:,}); shorten it"
        )
