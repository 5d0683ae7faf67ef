"""LLM backends behind one interface: a prompt and sampling parameters in, completions out.

A backend sends one request (one prompt, `n` samples) and classifies what went
wrong: a fault worth retrying (timeout, 429, 5xx) raises `TransientBackendError`,
anything else `BackendError`. Retrying, caching, rate limiting and concurrency
are the generation stage's work, not the backend's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import Field

from testaug.core.errors import ServiceError, TransientServiceError
from testaug.core.records import Record

FinishReason = Literal["stop", "length", "other"]


class CompletionRequest(Record):
    """One request: a prompt and the sampling parameters, for `n` samples."""

    prompt: str
    n: int = Field(default=1, ge=1)
    temperature: float = Field(default=1.0, ge=0.0)
    max_tokens: int = Field(default=64, ge=1)
    stop: tuple[str, ...] = ()
    # The sample index of the first of the `n` samples; a backend that samples in
    # process seeds from (prompt, sample_offset) so a repeated request repeats.
    sample_offset: int = Field(default=0, ge=0)


class Completion(Record):
    """One sampled continuation. `finish_reason` is "stop" when a stop sequence or the
    end of text ended it (the stop sequence itself is not in `text`), "length" when
    `max_tokens` cut it off."""

    text: str
    finish_reason: FinishReason = "stop"


class Usage(Record):
    """Tokens a request consumed, as the backend reports them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class CompletionResult(Record):
    """A request's completions (exactly `n`, in sample order) and its token usage."""

    completions: tuple[Completion, ...]
    usage: Usage = Usage()


@runtime_checkable
class Backend(Protocol):
    """What generation needs of an LLM: a name, a model id, and `complete`.

    `continues_prompt` is True when a reply continues the prompt's text (completion
    endpoints, in-process models) and False when it is a whole answer (chat). A
    backend may also have `cache_scope`, a string naming the server it talks to.
    """

    name: str
    model: str
    continues_prompt: bool

    def complete(self, request: CompletionRequest) -> CompletionResult:
        """Sample `request.n` continuations of `request.prompt`."""
        ...


class BackendError(ServiceError):
    """A request failed in a way that retrying will not fix (bad key, bad model, 4xx)."""


class TransientBackendError(TransientServiceError, BackendError):
    """A request failed in a way worth retrying: timeout, connection, 429, 5xx."""


BACKENDS = ("local", "openai")
DEFAULT_OPENAI_MODELS = {"completions": "gpt-3.5-turbo-instruct", "chat": "gpt-4o-mini"}


def create_backend(
    kind: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    endpoint: Literal["chat", "completions"] = "completions",
    timeout: float = 60.0,
    cache_dir: Path,
) -> Backend:
    """A backend by kind: `local` (an embedded model by name, or a model path) or `openai`."""
    if kind == "openai":
        from testaug.generation.backends.openai_compatible import OpenAIBackend

        return OpenAIBackend(
            model=model or DEFAULT_OPENAI_MODELS[endpoint],
            api_key=api_key,
            base_url=base_url,
            endpoint=endpoint,
            timeout=timeout,
        )
    if kind == "local":
        from testaug.generation.backends.local import LocalBackend

        return LocalBackend(model, cache_dir=cache_dir)
    raise BackendError(f"unknown backend {kind!r} (expected one of {', '.join(BACKENDS)})")
