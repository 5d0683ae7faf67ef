"""Model folders that testaug loads weights from: safetensors only.

A pickle can run code when it is loaded, so a folder whose weights are all pickled
(`pytorch_model.bin`, `*.pt`, `*.pkl`, ...) is refused before anything in it is read, and
loaders pass `LOAD_SAFETENSORS` so that transformers never falls back to a pickle. A
safetensors file cut short is named from its header, and any other load failure becomes
one line (`load_failure`).
"""

from __future__ import annotations

import json
from pathlib import Path

from testaug.core.errors import TestAugError

PICKLED_WEIGHTS = ("*.bin", "*.pt", "*.pth", "*.pkl", "*.pickle", "*.ckpt")
OTHER_WEIGHTS = ("tf_model.h5", "flax_model.msgpack")
LOAD_SAFETENSORS = {"use_safetensors": True}
"""The keyword arguments of `from_pretrained` that load safetensors weights only."""


class ModelFileError(TestAugError):
    """A model folder holds no weights testaug loads, or damaged ones."""


def check_model_source(source: str | Path, what: str) -> None:
    """`check_model_folder` when `source` is a local folder (a hub id is left to the
    loader, which `LOAD_SAFETENSORS` keeps to safetensors)."""
    folder = Path(source)
    if folder.is_dir():
        check_model_folder(folder, what)


def check_model_folder(folder: Path, what: str) -> None:
    """A ModelFileError unless the folder's weights are safetensors files whose header reads:
    pickled weights are refused unread, a truncated file is named. `what` says whose folder
    it is ("the masked LM", "the model under test")."""
    safe = sorted(folder.glob("*.safetensors"))
    if not safe:
        found = [
            f"{_listed(folder, PICKLED_WEIGHTS)}, pickled weights",
            f"{_listed(folder, OTHER_WEIGHTS)}, weights of other frameworks",
        ]
        has = "; ".join(part for part in found if not part.startswith(","))
        raise ModelFileError(
            f"{what} folder {folder} has no model.safetensors"
            f"{f' (it has {has}, which are never loaded)' if has else ''}; save the model "
            "with safetensors (save_pretrained does by default)"
        )
    for path in safe:
        problem = safetensors_problem(path)
        if problem:
            raise ModelFileError(f"cannot load {what} weights {path}: {problem}")


def safetensors_problem(path: Path) -> str | None:
    """Why a safetensors file cannot be read (a header that does not parse, tensors that run
    past the end of the file), or None. Reads the header only."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        head = handle.read(8)
        if len(head) < 8:
            return f"{size} bytes: too short for a safetensors header"
        length = int.from_bytes(head, "little")
        if length > size - 8:
            return f"the header says {length:,} bytes but the file has {size:,} (truncated?)"
        try:
            header = json.loads(handle.read(length))
        except (UnicodeDecodeError, ValueError):
            return "the header is not JSON (not a safetensors file, or damaged)"
    if not isinstance(header, dict):
        return "the header is not a JSON object (not a safetensors file, or damaged)"
    ends = [
        info["data_offsets"][1]
        for key, info in header.items()
        if key != "__metadata__" and isinstance(info, dict) and _offsets(info)
    ]
    data = size - 8 - length
    if ends and max(ends) > data:
        return f"the tensors need {max(ends):,} bytes but the file holds {data:,} (truncated?)"
    return None


def _listed(folder: Path, patterns: tuple[str, ...]) -> str:
    """The names of the folder's files that match `patterns`, the first few, joined."""
    names = sorted({path.name for pattern in patterns for path in folder.glob(pattern)})
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


def _offsets(info: dict) -> bool:
    offsets = info.get("data_offsets")
    return isinstance(offsets, list) and len(offsets) == 2 and isinstance(offsets[1], int)


def load_failure(what: str, source: str | Path, exc: BaseException) -> str:
    """One line saying that `what` could not be loaded from `source`, and why."""
    reason = " ".join(str(exc).split())[:300] or type(exc).__name__
    return f"cannot load {what} {str(source)!r}: {reason}"
