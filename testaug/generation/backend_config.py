"""Which LLM backend a run asks, and connecting to it: the recorded spec (`BackendConfig`),
the backend built from it (the embedded model shared per process), and how a manifest
records the generator."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from testaug.core.records import Record
from testaug.core.secrets import redact_url, split_userinfo, url_without_credentials, with_userinfo
from testaug.core.settings import Settings
from testaug.generation.backends import BACKEND_KINDS, Backend, create_backend


class BackendConfig(Record):
    """Which LLM to ask: the embedded model, any OpenAI-compatible server, or a registered
    kind. The API key is not part of it: it comes from the environment where the step runs."""

    kind: str = "local"
    model: str | None = None
    base_url: str | None = None
    endpoint: Literal["chat", "completions"] = "completions"
    timeout: float = Field(default=60.0, gt=0)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        """A kind `create_backend` knows (plugins included)."""
        kinds = BACKEND_KINDS.names()
        if kind not in kinds:
            raise ValueError(f"expected one of {', '.join(kinds)}")
        return kind

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, url: str | None) -> str | None:
        """A URL without user info: a spec is recorded (manifests, Prefect's parameters)."""
        return url_without_credentials(url)


def connect_backend(
    spec: BackendConfig,
    *,
    api_key: SecretStr | None,
    cache_dir: Path,
    userinfo: SecretStr | None = None,
) -> Backend:
    """A backend for the spec, its URL's user info (`userinfo`) put back; the embedded model
    is loaded once per process and shared."""
    if spec.kind == "local":
        return _shared_local_backend(spec.model, cache_dir)
    base_url = spec.base_url
    if base_url is not None and userinfo is not None:
        base_url = with_userinfo(base_url, userinfo.get_secret_value())
    return create_backend(
        spec.kind,
        model=spec.model,
        base_url=base_url,
        api_key=api_key.get_secret_value() if api_key else None,
        endpoint=spec.endpoint,
        timeout=spec.timeout,
        cache_dir=cache_dir,
    )


def backend_from_options(
    kind: str,
    model: str | None,
    base_url: str | None,
    endpoint: str,
    timeout: float,
    settings: Settings,
    *,
    build: Callable[..., BackendConfig] = BackendConfig,
) -> tuple[BackendConfig, Backend]:
    """The LLM backend the options name, and its spec (what a run records): a base URL's
    user info is split off and passed to the backend, never into the spec; the URL, API
    key and cache folder not given come from `settings`. `build` makes the spec from its
    fields (the CLI's names the flag of a value it refuses)."""
    url, userinfo = split_userinfo(base_url or settings.base_url or "")
    spec = build(kind=kind, model=model, base_url=url or None, endpoint=endpoint, timeout=timeout)
    backend = connect_backend(
        spec,
        api_key=settings.openai_api_key,
        cache_dir=settings.cache_dir,
        userinfo=SecretStr(userinfo) if userinfo else settings.base_url_userinfo,
    )
    return spec, backend


_LOCAL_BACKENDS: dict[tuple[str | None, Path], Backend] = {}
_LOCAL_BACKENDS_LOCK = threading.Lock()


def _shared_local_backend(model: str | None, cache_dir: Path) -> Backend:
    """One in-process model per (model, cache) for every step and thread of the process."""
    key = (model, cache_dir)
    with _LOCAL_BACKENDS_LOCK:
        if key not in _LOCAL_BACKENDS:
            _LOCAL_BACKENDS[key] = create_backend("local", model=model, cache_dir=cache_dir)
        return _LOCAL_BACKENDS[key]


def backend_arguments(spec: BackendConfig, backend: Backend) -> dict[str, Any]:
    """How a manifest records the generator: kind, server URL without credentials, the
    model it answered with, and the endpoint."""
    return {
        "backend": spec.kind,
        "base_url": redact_url(spec.base_url) if spec.base_url else spec.base_url,
        "model": backend.model,
        "endpoint": spec.endpoint,
    }
