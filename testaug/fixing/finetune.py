"""Fine-tuning a Hugging Face sequence classifier on suite cases, and predicting with it.

The defaults are TestAug's patching hyper-parameters (Table 8): learning rate 5e-6,
batch size 8, 3 epochs, maximum length 128, seed 42. A model whose head does not
cover the task's labels (a 2-class sentiment model and a 3-class suite) gets a
newly initialized head of the task's size (TestAug footnote 5). A plain torch loop
on CPU by default; the head, the shuffling and dropout all draw from the seed, so
a run is reproducible. torch is imported only inside functions.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from pydantic import Field

from testaug.core.errors import TestAugError
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.model_files import LOAD_SAFETENSORS, check_model_source, load_failure
from testaug.core.records import Label, Record, label_options

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

_GENERIC_LABEL = re.compile(r"^LABEL_\d+$")
WHAT = "model"


class LabelledInput(Protocol):
    """Anything with an input (text and optional pair) and an expected label: TestCase, IidExample."""

    @property
    def text(self) -> str: ...
    @property
    def text_pair(self) -> str | None: ...
    @property
    def label(self) -> Label: ...


class FineTuneConfig(Record):
    """Fine-tuning hyper-parameters; the defaults are TestAug's (Table 8)."""

    learning_rate: float = Field(default=5e-6, gt=0)
    batch_size: int = Field(default=8, ge=1)
    epochs: int = Field(default=3, ge=0)
    max_length: int = Field(default=128, ge=8)
    seed: int = 42
    weight_decay: float = Field(default=0.0, ge=0)
    warmup_ratio: float = Field(default=0.0, ge=0, le=1)
    eval_batch_size: int = Field(default=64, ge=1)
    device: str = "cpu"


@dataclass
class Classifier:
    """A loaded model and tokenizer, with the task label each model output stands for."""

    model: Any
    tokenizer: Any
    labels: tuple[str, ...]
    head_replaced: bool = False


def output_labels(
    id2label: dict[int, str], labels: Sequence[str], model_labels: Sequence[str] | None = None
) -> tuple[str, ...] | None:
    """The task label of each model output, or None when the head cannot be read as the task's.

    `model_labels` names them explicitly; otherwise the head's own names are matched to
    the task labels ignoring case, and generic names (LABEL_0, ...) are taken to be the
    task labels in order when the sizes agree.
    """
    names = [id2label[i] for i in sorted(id2label)]
    if model_labels is not None:
        if len(model_labels) != len(names) or not set(model_labels) <= set(labels):
            raise TestAugError(
                f"model_labels {tuple(model_labels)} must name each of the model's "
                f"{len(names)} outputs with one of the task labels {tuple(labels)}"
            )
        return tuple(model_labels)
    by_lower = {label.lower(): label for label in labels}
    if all(name.lower() in by_lower for name in names):
        return tuple(by_lower[name.lower()] for name in names)
    if len(names) == len(labels) and all(_GENERIC_LABEL.match(name) for name in names):
        return tuple(labels)
    return None


def covers_task(names: Sequence[str] | None, labels: Sequence[str]) -> bool:
    """Whether a head's outputs are the task's labels, one each (so it can be trained as is)."""
    return names is not None and len(names) == len(labels) and set(names) == set(labels)


def load_classifier(
    model_path_or_id: str | Path,
    *,
    labels: Sequence[str],
    model_labels: Sequence[str] | None = None,
    seed: int = 42,
    train: bool = False,
    device: str = "cpu",
) -> Classifier:
    """A model and tokenizer for the task.

    The model's own head is kept where its outputs can be read as task labels (for
    training: where they are exactly the task labels); otherwise the head is replaced
    by a new one of the task's size, initialized from `seed`.
    """
    with IMPORT_LOCK:
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    source = str(model_path_or_id)
    check_model_source(source, WHAT)
    try:
        config = AutoConfig.from_pretrained(source)
        tokenizer = AutoTokenizer.from_pretrained(source)
    except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
        raise TestAugError(load_failure(WHAT, source, exc)) from exc
    names = output_labels(config.id2label, labels, model_labels)
    keep = covers_task(names, labels) if train else names is not None
    if keep:
        model = _from_pretrained(AutoModelForSequenceClassification, source)
        assert names is not None
        return Classifier(model.to(device), tokenizer, names, head_replaced=False)
    task_labels = tuple(labels)
    model = _from_pretrained(
        AutoModelForSequenceClassification,
        source,
        num_labels=len(task_labels),
        id2label=dict(enumerate(task_labels)),
        label2id={label: i for i, label in enumerate(task_labels)},
        ignore_mismatched_sizes=True,
    )
    reset_head(model, seed)
    logger.info("%s: new %d-label head (seed %d)", source, len(task_labels), seed)
    return Classifier(model.to(device), tokenizer, task_labels, head_replaced=True)


def _from_pretrained(auto: Any, source: str, **options: Any) -> Any:
    """`auto.from_pretrained` from safetensors weights only; a failure is one line."""
    try:
        return auto.from_pretrained(source, **LOAD_SAFETENSORS, **options)
    except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
        raise TestAugError(load_failure(WHAT, source, exc)) from exc


def reset_head(model: Any, seed: int) -> None:
    """Re-initialize every module outside the encoder (the classification head) from `seed`."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    std = getattr(model.config, "initializer_range", None) or 0.02
    encoder = getattr(model, model.base_model_prefix, None)
    inside = {id(module) for module in encoder.modules()} if encoder is not None else set()
    with torch.no_grad():
        for module in model.modules():
            if id(module) in inside or module is model:
                continue
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, std, generator=generator)
                if module.bias is not None:
                    module.bias.zero_()
            elif list(module.parameters(recurse=False)) and hasattr(module, "reset_parameters"):
                module.reset_parameters()


def encode(
    tokenizer: Any, inputs: Sequence[tuple[str, str | None]], max_length: int
) -> list[dict[str, list[int]]]:
    """Token ids of each (text, pair) input, truncated, unpadded."""
    return [
        dict(tokenizer(text, pair, truncation=True, max_length=max_length)) for text, pair in inputs
    ]


def _batch(tokenizer: Any, features: list[dict[str, list[int]]], device: str) -> dict[str, Any]:
    """Padded tensors of a batch of encoded inputs."""
    padded = tokenizer.pad(features, padding=True, return_tensors="pt")
    return {key: value.to(device) for key, value in padded.items()}


def predict_proba(
    model: Any,
    tokenizer: Any,
    inputs: Sequence[tuple[str, str | None]],
    batch_size: int = 64,
    *,
    max_length: int = 128,
) -> np.ndarray:
    """Softmax probabilities over the model's outputs, one row per (text, pair) input."""
    import torch

    if not inputs:
        return np.zeros((0, model.config.num_labels))
    device = str(next(model.parameters()).device)
    features = encode(tokenizer, inputs, max_length)
    # Batches of similar length pad less; rows go back to input order at the end.
    order = sorted(range(len(features)), key=lambda i: len(features[i]["input_ids"]))
    rows: list[np.ndarray] = []
    model.eval()
    with torch.no_grad():
        for start in range(0, len(order), batch_size):
            chunk = [features[i] for i in order[start : start + batch_size]]
            logits = model(**_batch(tokenizer, chunk, device)).logits
            rows.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
    stacked = np.concatenate(rows)
    out = np.empty_like(stacked)
    out[order] = stacked
    return out


def case_inputs(cases: Sequence[LabelledInput]) -> list[tuple[str, str | None]]:
    """The (text, pair) input of each case."""
    return [(case.text, case.text_pair) for case in cases]


def training_targets(cases: Sequence[LabelledInput], names: Sequence[str]) -> list[int]:
    """The output index of each case's label (the first acceptable label of a set)."""
    index = {name: i for i, name in enumerate(names)}
    targets = []
    for case in cases:
        label = label_options(case.label)[0]
        if label not in index:
            raise TestAugError(f"label {label!r} of {case.text!r} is not one of {tuple(names)}")
        targets.append(index[label])
    return targets


def train_loop(
    classifier: Classifier,
    cases: Sequence[LabelledInput],
    config: FineTuneConfig,
    on_progress: Callable[[str], None] | None = None,
) -> None:
    """Fine-tune the classifier in place with AdamW and cross-entropy, seeded by config.seed."""
    import torch

    with IMPORT_LOCK:
        from transformers import get_linear_schedule_with_warmup

    model, tokenizer = classifier.model, classifier.tokenizer
    features = encode(tokenizer, case_inputs(cases), config.max_length)
    targets = torch.tensor(training_targets(cases, classifier.labels))
    steps = config.epochs * math.ceil(len(features) / config.batch_size)
    if steps == 0:
        return
    torch.manual_seed(config.seed)  # dropout
    generator = torch.Generator().manual_seed(config.seed)  # shuffling
    optimizer = _optimizer(model, config)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(config.warmup_ratio * steps), steps)
    model.train()
    for epoch in range(config.epochs):
        order = torch.randperm(len(features), generator=generator).tolist()
        total = 0.0
        for start in range(0, len(order), config.batch_size):
            chosen = order[start : start + config.batch_size]
            logits = model(**_batch(tokenizer, [features[i] for i in chosen], config.device)).logits
            loss = torch.nn.functional.cross_entropy(logits, targets[chosen].to(config.device))
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            total += loss.item() * len(chosen)
        message = f"epoch {epoch + 1}/{config.epochs}: loss {total / len(features):.4f}"
        logger.info(message)
        if on_progress is not None:
            on_progress(message)
    model.eval()


def _optimizer(model: Any, config: FineTuneConfig) -> torch.optim.Optimizer:
    """AdamW with weight decay on weights only (not biases or norms), as transformers' Trainer."""
    import torch

    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if not parameter.requires_grad:
            continue
        plain = name.endswith("bias") or "norm" in name.lower()
        (no_decay if plain else decay).append(parameter)
    groups = [
        {"params": decay, "weight_decay": config.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    # The fused kernel (CPU and GPU) steps all tensors at once: several times faster on CPU.
    return torch.optim.AdamW(groups, lr=config.learning_rate, fused=True)


def fine_tune(
    model_path_or_id: str | Path,
    train_cases: Sequence[LabelledInput],
    *,
    labels: Sequence[str],
    config: FineTuneConfig | None = None,
    output_dir: Path | None = None,
    model_labels: Sequence[str] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> Classifier:
    """The model fine-tuned on the cases (a head of the task's size where needed).

    With no cases the loaded model comes back untrained. With `output_dir` the model
    and tokenizer are also saved there, their outputs named by the task labels.
    """
    config = config or FineTuneConfig()
    classifier = load_classifier(
        model_path_or_id,
        labels=labels,
        model_labels=model_labels,
        seed=config.seed,
        train=True,
        device=config.device,
    )
    logger.info("fine-tuning %s on %d cases", model_path_or_id, len(train_cases))
    train_loop(classifier, train_cases, config, on_progress)
    if output_dir is not None:
        classifier.model.config.id2label = dict(enumerate(classifier.labels))
        classifier.model.config.label2id = {name: i for i, name in enumerate(classifier.labels)}
        classifier.model.save_pretrained(output_dir)
        classifier.tokenizer.save_pretrained(output_dir)
    return classifier


def predict_labels(
    classifier: Classifier, cases: Sequence[LabelledInput], config: FineTuneConfig
) -> list[str]:
    """The argmax task label of each case."""
    probabilities = predict_proba(
        classifier.model,
        classifier.tokenizer,
        case_inputs(cases),
        config.eval_batch_size,
        max_length=config.max_length,
    )
    return [classifier.labels[int(i)] for i in probabilities.argmax(axis=1)] if len(cases) else []
