"""The GGUF conversion behind the local backend: where a GGUF file's converted safetensors
copy lives under the cache, and building that copy (dequantized to fp32, with the
tokenizer) from the GGUF file."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

from testaug.core.heavy_imports import IMPORT_LOCK


def converted_dir(gguf: Path, cache_dir: Path) -> Path:
    """Where the converted copy of `gguf` lives: `cache_dir/models/<name>-<hash>`.

    The hash covers the file's resolved path, size and modification time, so a
    replaced file gets a fresh copy.
    """
    resolved = gguf.resolve()
    stat = resolved.stat()
    key = json.dumps([str(resolved), stat.st_size, stat.st_mtime_ns])
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return cache_dir / "models" / f"{resolved.stem}-{digest}"


def _convert_gguf(gguf: Path, out: Path) -> None:
    """Load `gguf` (dequantized to fp32) and save a plain safetensors copy into `out`."""
    with IMPORT_LOCK:
        from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = str(gguf.parent), gguf.name
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name)
    config = copy.deepcopy(loaded.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = copy.deepcopy(loaded.generation_config)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
