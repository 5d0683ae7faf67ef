"""A Hugging Face sequence classifier (hub id or local path) as a model under test.

AutoTokenizer and AutoModelForSequenceClassification load the model; it runs in
eval mode under `torch.no_grad`, in batches padded to their longest input and
truncated to `max_length`, and a softmax turns logits into probabilities (a
sigmoid, then normalization, for multi-label models). Pairs go to the tokenizer
as text pairs. The model's labels are its config's id2label, unless `labels`
names its outputs in order. Whether a hub id may be downloaded is the Hugging
Face library's call (HF_HUB_OFFLINE and its cache).

A source is a local folder, not a hub id, when it exists, when it starts with `/`, `.` or
`~`, holds a backslash or a character no hub id has, has more than one `/` (hub ids are
NAME or ORG/NAME), or when its first part is a local folder or a near miss of one (a typo
such as `modles/x` beside `models/`). A local source that does not exist is refused before
any work with "no such folder"; a hub id that does not load says no local folder has its
name either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np

from testaug.core.errors import close_names, did_you_mean
from testaug.core.heavy_imports import IMPORT_LOCK
from testaug.core.model_files import (
    LOAD_SAFETENSORS,
    ModelFileError,
    check_model_source,
    load_failure,
)
from testaug.evaluation.models.base import (
    Inputs,
    ModelError,
    ModelSpec,
    batches,
    model_kind,
    unknown_spec,
)
from testaug.evaluation.models.labels import map_labels

DEFAULT_MAX_LENGTH = 512
HF_OPTIONS = ("labels", "max_length")
WHAT = "Hugging Face classifier"
# What a hub id can be: NAME or ORG/NAME of letters, digits, `-`, `_` and `.`.
HUB_ID = re.compile(r"^[\w.-]+(/[\w.-]+)?$")
# How close a folder's name must be to a missing one's to be taken as what was meant.
FOLDER_CUTOFF = 0.8


def _near_folders(parent: Path, name: str) -> list[str]:
    """The folders in `parent` whose names are near misses of `name` (best first)."""
    try:
        folders = [child.name for child in parent.iterdir() if child.is_dir()]
    except OSError:
        return []
    return close_names(name, folders, n=1, cutoff=FOLDER_CUTOFF)


def is_local_source(source: str) -> bool:
    """Whether an `hf:` source names a local folder rather than a hub id (module docstring)."""
    if source.startswith(("/", ".", "~")) or "\\" in source or not HUB_ID.match(source):
        return True
    if Path(source).exists():
        return True
    parts = source.split("/")
    return len(parts) == 2 and (Path(parts[0]).is_dir() or bool(_near_folders(Path("."), parts[0])))


def _corrected_folder(source: str) -> str | None:
    """The existing folder `source` likely meant, each missing part replaced by its nearest
    folder; None when there is none."""
    path = Path(source).expanduser()
    current = Path(path.anchor) if path.is_absolute() else Path()
    changed = False
    for part in path.parts[1:] if path.is_absolute() else path.parts:
        if part == ".." or (current / part).is_dir():
            current = current / part
            continue
        near = _near_folders(current, part)
        if not near:
            return None
        current, changed = current / near[0], True
    return str(current) if changed and current.is_dir() else None


def missing_folder(source: str) -> str:
    """The message `no such folder: PATH`, with the folder it likely meant if there is one."""
    guess = _corrected_folder(source)
    return f"no such folder: {source}{did_you_mean([guess] if guess else [])}"


def check_hf(spec: str, argument: str) -> None:
    """An `hf:` spec's id or path and options, without loading: a source that names a local
    folder (`is_local_source`) must be one; `ModelError` otherwise."""
    if not argument:
        raise unknown_spec(spec)
    source, _, query = argument.partition("?")
    if not source:
        raise unknown_spec(spec, "no model id or path in")
    parse_hf_options(spec, query)
    if is_local_source(source):
        path = Path(source).expanduser()
        if path.is_file():
            raise ModelError(f"{spec!r}: {source} is a file, not a model folder")
        if not path.is_dir():
            raise ModelError(f"{spec!r}: {missing_folder(source)}")


def parse_hf_options(spec: str, query: str) -> tuple[tuple[str, ...] | None, int | None]:
    """The `labels` and `max_length` options of an `hf:` spec's query string."""
    options = parse_qs(query, keep_blank_values=True, strict_parsing=False)
    unknown = sorted(set(options) - set(HF_OPTIONS))
    if unknown:
        raise unknown_spec(spec, f"unknown option(s) {unknown} (accepted: {list(HF_OPTIONS)}) in")
    labels = None
    if "labels" in options:
        labels = tuple(part.strip() for part in options["labels"][-1].split(","))
        if not all(labels):
            raise unknown_spec(spec, "empty label in `labels=` of")
    max_length = None
    if "max_length" in options:
        value = options["max_length"][-1]
        if not value.isdigit() or int(value) < 1:
            raise unknown_spec(spec, f"max_length must be a positive integer, not {value!r}, in")
        max_length = int(value)
    return labels, max_length


def config_labels(config: Any) -> tuple[str, ...]:
    """A model config's output labels in id order."""
    id2label = {int(key): str(value) for key, value in (config.id2label or {}).items()}
    return tuple(id2label.get(i, f"LABEL_{i}") for i in range(int(config.num_labels)))


class HFModel:
    """A sequence classifier's softmax over its labels, mapped to the task labels."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        task_labels: Sequence[str],
        *,
        source: str,
        model_labels: Sequence[str] | None = None,
        max_length: int | None = None,
        device: str = "cpu",
    ) -> None:
        self.name = f"hf:{source}"
        self.labels = tuple(task_labels)
        self.model = model
        self.tokenizer = tokenizer
        self.device = device
        own = config_labels(model.config)
        if model_labels is not None and len(model_labels) != len(own):
            raise ModelError(
                f"{self.name}: `labels=` names {len(model_labels)} outputs "
                f"({list(model_labels)}) but the model has {len(own)}"
            )
        self.model_labels = tuple(model_labels) if model_labels is not None else own
        self._mapping = map_labels(self.model_labels, self.labels)
        limit = getattr(tokenizer, "model_max_length", None) or DEFAULT_MAX_LENGTH
        self.max_length = max_length or min(int(limit), DEFAULT_MAX_LENGTH)

    @classmethod
    def load(
        cls,
        source: str,
        task_labels: Sequence[str],
        *,
        model_labels: Sequence[str] | None = None,
        max_length: int | None = None,
        device: str = "cpu",
    ) -> HFModel:
        """Load tokenizer and classifier from a hub id or path, from safetensors weights only
        (`core.model_files`); `ModelError` when either fails."""
        try:
            with IMPORT_LOCK:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as exc:
            raise ModelError('hf: models need `pip install -e ".[rank]"` (transformers)') from exc
        try:
            check_model_source(source, WHAT)
        except ModelFileError as exc:
            raise ModelError(str(exc)) from exc
        try:
            tokenizer = AutoTokenizer.from_pretrained(source)
            model = AutoModelForSequenceClassification.from_pretrained(source, **LOAD_SAFETENSORS)
        except Exception as exc:  # a damaged file fails in many ways, none of them a bug here
            local = "" if Path(source).exists() else f"; no local folder {source!r} exists either"
            reason = load_failure(WHAT, source, exc).rstrip(". ")
            raise ModelError(f"{reason}{local}") from exc
        try:
            model = model.to(device)
        except (RuntimeError, AssertionError) as exc:
            raise ModelError(f"cannot move {source!r} to device {device!r}: {exc}") from exc
        model.eval()
        return cls(
            model,
            tokenizer,
            task_labels,
            source=source,
            model_labels=model_labels,
            max_length=max_length,
            device=device,
        )

    def encode(self, inputs: Inputs) -> Any:
        """Tokenized tensors of one batch on the model's device; texts or pairs, not both."""
        texts = [text for text, _ in inputs]
        pairs = [pair for _, pair in inputs]
        has_pair = [pair is not None for pair in pairs]
        if any(has_pair) and not all(has_pair):
            raise ModelError(f"{self.name}: a batch mixes single texts and text pairs")
        encoded = self.tokenizer(
            texts,
            pairs if all(has_pair) else None,
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return encoded.to(self.device)

    def model_proba(self, inputs: Inputs) -> np.ndarray:
        """Probabilities over the model's own labels for one batch."""
        import torch

        with torch.no_grad():
            logits = self.model(**self.encode(inputs)).logits.float()
            if getattr(self.model.config, "problem_type", None) == "multi_label_classification":
                scores = torch.sigmoid(logits)
                probs = scores / scores.sum(dim=-1, keepdim=True).clamp_min(1e-12)
            else:
                probs = torch.softmax(logits, dim=-1)
        return probs.cpu().numpy().astype(np.float64)

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """Probabilities over the task labels, computed in batches of `batch_size`."""
        if not inputs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        raw = np.concatenate([self.model_proba(chunk) for chunk in batches(inputs, batch_size)])
        return self._mapping(raw)


@model_kind("hf", "hf:HUB_ID_OR_PATH[?labels=a,b&max_length=N]", check=check_hf)
def load_hf(spec: ModelSpec) -> HFModel:
    """An `hf:HUB_ID_OR_PATH[?labels=a,b&max_length=N]` spec."""
    check_hf(spec.text, spec.argument)
    source, _, query = spec.argument.partition("?")
    model_labels, max_length = parse_hf_options(spec.text, query)
    return HFModel.load(
        str(Path(source).expanduser()) if source.startswith("~") else source,
        spec.task_labels,
        model_labels=model_labels,
        max_length=max_length,
        device=spec.device,
    )
