"""What every LLM backend shares: requests, results, the protocol, errors and the registry.

A backend sends one request (one prompt, `n` samples) and classifies what went
wrong: a fault worth retrying (timeout, 429, 5xx) raises `TransientBackendError`,
anything else `BackendError`. Retrying, caching, rate limiting and concurrency
are the generation stage's work, not the backend's.

`BACKEND_KINDS` maps a backend kind (`--backend`) to a factory that builds the
backend from `BackendOptions`; installed packages add kinds through the
`testaug.backends` entry-point group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import Field

from testaug.core.errors import ServiceError, TransientServiceError
from testaug.core.records import Record
from testaug.core.registry import Registry

FinishReason = Literal["stop", "length", "other"]
Endpoint = Literal["chat", "completions"]


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
    # How many alternatives per generated token to return log-probabilities for (0: none);
    # a backend or server that has none returns completions without them.
    logprobs: int = Field(default=0, ge=0, le=20)


class TokenLogprob(Record):
    """One generated token, its log-probability, and the most likely tokens at its position
    with theirs (most likely first)."""

    token: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


class Completion(Record):
    """One sampled continuation. `finish_reason` is "stop" when a stop sequence or the
    end of text ended it (the stop sequence itself is not in `text`), "length" when
    `max_tokens` cut it off."""

    text: str
    finish_reason: FinishReason = "stop"
    logprobs: tuple[TokenLogprob, ...] | None = None  # only when asked for and given


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


class BackendOptions(Record):
    """What `--backend`'s options say about the backend to build; each kind reads what it needs."""

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    endpoint: Endpoint = "completions"
    timeout: float = 60.0  # seconds for a whole request
    max_reply_bytes: int = Field(default=4 * 1024 * 1024, ge=1)  # a longer answer is an error
    cache_dir: Path


BackendFactory = Callable[[BackendOptions], Backend]

BACKEND_KINDS: Registry[BackendFactory] = Registry(
    "backend", error=BackendError, entry_points="testaug.backends"
)
