"""LLM backends behind one interface: a prompt and sampling parameters in, completions out.

A backend sends one request (one prompt, `n` samples) and classifies what went
wrong: a fault worth retrying (timeout, 429, 5xx) raises `TransientBackendError`,
anything else `BackendError`. Retrying, caching, rate limiting and concurrency
are the generation stage's work, not the backend's.

Backends are built by kind through `BACKEND_KINDS`: `local` (an embedded model,
in process) and `openai` (any OpenAI-compatible server) register themselves
when this package is imported; their heavy libraries load only when a backend is
built. A new kind registers a factory taking `BackendOptions` (see
`testaug.core.registry`), or ships as an entry point in `testaug.backends`.
"""

from __future__ import annotations

from pathlib import Path

from testaug.core.secrets import remember_credentials, remember_url_credentials
from testaug.generation.backends import local, openai_compatible
from testaug.generation.backends.base import (
    BACKEND_KINDS,
    Backend,
    BackendError,
    BackendFactory,
    BackendOptions,
    Completion,
    CompletionRequest,
    CompletionResult,
    Endpoint,
    FinishReason,
    TokenLogprob,
    TransientBackendError,
    Usage,
)
from testaug.generation.backends.openai_compatible import DEFAULT_OPENAI_MODELS

__all__ = [
    "BACKENDS",
    "BACKEND_KINDS",
    "DEFAULT_OPENAI_MODELS",
    "Backend",
    "BackendError",
    "BackendFactory",
    "BackendOptions",
    "Completion",
    "CompletionRequest",
    "CompletionResult",
    "Endpoint",
    "FinishReason",
    "TokenLogprob",
    "TransientBackendError",
    "Usage",
    "create_backend",
    "local",
    "openai_compatible",
]


def __getattr__(name: str) -> tuple[str, ...]:
    """`BACKENDS`: the kinds `create_backend` knows now, plugins included."""
    if name == "BACKENDS":
        return BACKEND_KINDS.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_backend(
    kind: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    endpoint: Endpoint = "completions",
    timeout: float = 60.0,
    cache_dir: Path,
) -> Backend:
    """A backend by kind (`local`, `openai`, or a registered one); raises `BackendError`
    naming the known kinds for an unknown one."""
    factory = BACKEND_KINDS.get(kind)
    remember_credentials(api_key)  # a server echoing them back has them blanked
    remember_url_credentials(base_url)
    options = BackendOptions(
        model=model,
        base_url=base_url,
        api_key=api_key,
        endpoint=endpoint,
        timeout=timeout,
        cache_dir=cache_dir,
    )
    return factory(options)
