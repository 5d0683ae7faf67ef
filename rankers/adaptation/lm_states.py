"""A generator's learner that reads the case with the embedded language model.

The features are the mean of the language model's hidden states at one layer over a
prompt that states the description, the proposed label and the case. A logistic
regression on them, trained on one group's labels, is stacked like the group's other
learners. A middle layer of SmolLM2-135M reads more of what a case means than frozen
MiniLM embeddings: on the bundled held-out generators, a logistic regression on it alone
closed about twice the gap of one on MiniLM's features from the same labels (see
benchmarks/README.md). It costs the model's load and a forward pass per candidate (about
15 to 20 candidates a second on 2 cores), so it is off unless a config lists it among
`adaptation.learners` (`kind: lm-states`).

Saved as JSON (its config, the weights and the feature scaling), never a pickle.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from rankers.members.cross_encoder import RankerError
from rankers.members.linear_head import LinearRanker
from testaug.core.records import Candidate, TestCase, label_options
from testaug.generation.backends.embedded_models import DEFAULT_MODEL

logger = logging.getLogger(__name__)

LM_LEARNER = "language-model learner"
# A read of this many prompts or more says so at INFO, and how far it got every
# `_PROGRESS_EVERY` prompts (at 15 to 20 a second, about every half minute).
_PROGRESS_FROM = 200
_PROGRESS_EVERY = 500


class LmLearnerConfig(BaseModel):
    """Which language model and layer a group's language-model learner reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["lm-states"] = "lm-states"
    name: str = LM_LEARNER
    model: str = Field(
        default=DEFAULT_MODEL,
        description="an embedded model's name, a .gguf file or a causal-LM folder",
    )
    layer: int | None = Field(
        default=None, ge=1, description="the hidden layer whose states are averaged (None: middle)"
    )
    min_labels: int = Field(default=100, ge=10, description="a group's labels before it")
    l2: float = Field(default=0.1, gt=0, description="the learner's inverse regularisation")
    batch_size: int = Field(default=16, ge=1)
    cache_dir: Path | None = Field(
        default=None, description="where a GGUF model's converted copy lives (None: settings)"
    )


def lm_prompt(candidate: Candidate) -> str:
    """What the language model reads of a candidate."""
    case = candidate.text
    if candidate.text_pair is not None:
        case = f"{candidate.text} / {candidate.text_pair}"
    label = " or ".join(label_options(candidate.label)).replace("_", " ")
    return f"Test description: {candidate.description}\nLabel: {label}\nCase: {case}"


_BACKENDS: dict[tuple[str, Path], object] = {}
_STATES: dict[tuple[str, int, str], np.ndarray] = {}
_STATES_LIMIT = 100_000  # prompts kept per process (about 230 MB at 576 float32 dims)


def _loaded(model: str, cache_dir: Path | None):
    """The language model and its tokenizer, loaded once per process."""
    from testaug.core.settings import Settings
    from testaug.generation.backends.base import BackendError
    from testaug.generation.backends.local import LocalBackend

    folder = cache_dir or Settings().cache_dir
    key = (model, folder)
    try:
        if key not in _BACKENDS:
            _BACKENDS[key] = LocalBackend(model, cache_dir=folder)
        return _BACKENDS[key].loaded()
    except BackendError as exc:
        raise RankerError(f"the language-model learner cannot load {model!r}: {exc}") from exc


def read_layer(config: LmLearnerConfig, layers: int) -> int:
    """The layer a config reads of a model with `layers` layers (None: the middle one)."""
    if config.layer is None:
        return max(layers // 2, 1)
    if config.layer > layers:
        raise RankerError(
            f"the language-model learner reads layer {config.layer}, and {config.model} "
            f"has {layers}"
        )
    return config.layer


def lm_state_features(candidates: Sequence[Candidate], config: LmLearnerConfig) -> np.ndarray:
    """One row per candidate: the mean hidden state of its prompt at the config's layer."""
    if not candidates:
        return np.zeros((0, 0))
    prompts = [lm_prompt(c) for c in candidates]
    # Loaded once per process; the layer it reads keys the cache (None and the middle
    # layer's number are one layer).
    model, tokenizer = _loaded(config.model, config.cache_dir)
    layer = read_layer(config, model.config.num_hidden_layers)
    key = (config.model, layer)
    found = {p: _STATES[(*key, p)] for p in dict.fromkeys(prompts) if (*key, p) in _STATES}
    missing = [p for p in dict.fromkeys(prompts) if p not in found]
    if missing:
        import torch

        if len(_STATES) + len(missing) > _STATES_LIMIT:
            _STATES.clear()  # what this call found stays in `found`
        missing.sort(key=len)  # batches of like lengths pad little
        total = len(missing)
        log = logger.info if total >= _PROGRESS_FROM else logger.debug
        log(
            "%s: reading %s prompts with %s at layer %d",
            LM_LEARNER,
            f"{total:,}",
            config.model,
            layer,
        )
        with torch.no_grad():
            for start in range(0, total, config.batch_size):
                batch = missing[start : start + config.batch_size]
                # Right padding: a causal model's states of real tokens ignore what follows.
                tokens = tokenizer(batch, return_tensors="pt", padding=True, padding_side="right")
                states = model.base_model(**tokens, output_hidden_states=True).hidden_states
                hidden = states[layer]
                mask = tokens["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                means = (hidden * mask).sum(1) / mask.sum(1)
                for prompt, vector in zip(batch, means.float().numpy(), strict=True):
                    _STATES[(*key, prompt)] = found[prompt] = vector
                done = start + len(batch)
                if total >= _PROGRESS_FROM and done // _PROGRESS_EVERY > start // _PROGRESS_EVERY:
                    logger.info("read %s of %s prompts", f"{done:,}", f"{total:,}")
    return np.vstack([found[p] for p in prompts]).astype(np.float64)


class LmStatesRanker(LinearRanker):
    """Logistic regression on the language model's hidden states (the reference is not
    read); its `model` is the config as JSON."""

    file_name = "lm-states.json"

    def features(
        self, candidates: Sequence[Candidate], reference: Sequence[TestCase], batch_size: int
    ) -> np.ndarray:
        return lm_state_features(candidates, LmLearnerConfig.model_validate_json(self.model))
