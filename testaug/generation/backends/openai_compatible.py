"""The `openai` backend: OpenAI, or any OpenAI-compatible server (vLLM, Ollama, llama.cpp).

Completion endpoints continue the prompt's open bracket; chat endpoints get the
prompt as the user message and answer with a whole item. The client's own
retries are off: the generation stage retries, with its cache and rate limit.

An answer is read in pieces under two bounds: `timeout` bounds the whole request (a
server that trickles its answer times out like one that says nothing), and
`max_reply_bytes` bounds its size (a server that ignores `max_tokens` is an error
quoting the answer's start, and nothing of it is kept).
"""

from __future__ import annotations

import sys
import time
from types import ModuleType

from testaug.core.secrets import remember_credentials, remember_url_credentials
from testaug.generation.backends.base import (
    BACKEND_KINDS,
    BackendError,
    BackendOptions,
    Completion,
    CompletionRequest,
    CompletionResult,
    Endpoint,
    FinishReason,
    TransientBackendError,
)
from testaug.generation.backends.openai_replies import excerpt, parse_answer, redact

DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024
DEFAULT_OPENAI_MODELS = {"completions": "gpt-3.5-turbo-instruct", "chat": "gpt-4o-mini"}
OPENAI_URL = "https://api.openai.com/v1"
CHAT_SYSTEM_PROMPT = (
    "You continue lists. Reply with exactly one new item that continues the user's list, "
    "in the same bracketed format as its items, and nothing else."
)


class OpenAIBackend:
    """Sends each request to `/completions` or `/chat/completions` with the openai client."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None = None,
        endpoint: Endpoint = "completions",
        timeout: float = 60.0,
        system_prompt: str = CHAT_SYSTEM_PROMPT,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        import openai

        if not api_key and base_url is None:
            raise BackendError(
                "the openai backend needs an API key: set OPENAI_API_KEY "
                "(or pass --base-url for a local OpenAI-compatible server)"
            )
        remember_credentials(api_key)  # blanked wherever a server echoes them
        remember_url_credentials(base_url)
        self.name = f"openai/{endpoint}"
        self.model = model
        self.endpoint = endpoint
        self.continues_prompt = endpoint == "completions"
        # Which server answers: part of the cache key, so two servers never share replies.
        self.cache_scope = (base_url or OPENAI_URL).rstrip("/")
        self.system_prompt = system_prompt
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._where = redact(self.cache_scope)
        self._client = openai.OpenAI(
            api_key=api_key or "no-key", base_url=base_url, max_retries=0, timeout=timeout
        )

    def complete(self, request: CompletionRequest) -> CompletionResult:
        """One request for `request.n` samples; faults are classified as transient or not
        (see `openai_replies` for garbled answers)."""
        import openai

        http = _http_library(self._client)
        deadline = time.monotonic() + self.timeout
        try:
            with self._send(request) as raw:
                status, host = raw.status_code, raw.http_request.url.host
                content = self._read(raw, deadline, status=status, host=host)
        except openai.APIStatusError as exc:
            raise _status_error(exc) from None
        except (openai.APITimeoutError, http.TimeoutException):
            raise TransientBackendError(f"{self._where}: request timed out") from None
        except openai.APIConnectionError as exc:
            raise _connection_error(self._where, exc) from None
        except http.TransportError as exc:
            raise TransientBackendError(
                f"{self._where}: the server closed the connection before a complete answer "
                f"({excerpt(str(exc) or type(exc).__name__)})"
            ) from None
        texts, usage = parse_answer(
            content, status=status, host=host, chat=not self.continues_prompt
        )
        if len(texts) != request.n:
            raise BackendError(
                f"{self._where}: asked for {request.n} samples, got {len(texts)} "
                "(does the server support n > 1?)"
            )
        return CompletionResult(
            completions=tuple(
                Completion(text=t, finish_reason=_finish(r), logprobs=lp) for t, r, lp in texts
            ),
            usage=usage,
        )

    def _read(self, raw, deadline: float, *, status: int, host: str) -> bytes:
        """The answer's body, read in pieces until it is whole, the deadline passes (a
        transient timeout) or it grows past `max_reply_bytes` (an error quoting its start)."""
        cap = self.max_reply_bytes
        declared = raw.headers.get("content-length", "")
        body = bytearray()
        for piece in raw.iter_bytes():
            body += piece
            if len(body) > cap or (declared.isdigit() and int(declared) > cap):
                raise BackendError(
                    f"HTTP {status} from {host}: the answer is over the cap of {cap:,} bytes on "
                    "a reply (does the server ignore max_tokens?); it starts: "
                    f"{excerpt(bytes(body[:1000]))}"
                )
            if time.monotonic() > deadline:
                raise TransientBackendError(
                    f"{self._where}: request timed out ({self.timeout:g} s for the whole "
                    f"request; {len(body):,} bytes of the answer had come)"
                )
        return bytes(body)

    def _send(self, request: CompletionRequest):
        """Send the request; a context manager of the raw, streamed answer, which the openai
        client does not parse."""
        stop = list(request.stop) or None
        if self.endpoint == "chat":
            messages = [{"role": "user", "content": request.prompt}]
            if self.system_prompt:
                messages.insert(0, {"role": "system", "content": self.system_prompt})
            logprobs = (
                {"logprobs": True, "top_logprobs": request.logprobs} if request.logprobs else {}
            )
            return self._client.chat.completions.with_streaming_response.create(
                model=self.model,
                messages=messages,  # type: ignore[arg-type]
                n=request.n,
                temperature=request.temperature,
                max_tokens=request.max_tokens,
                stop=stop,
                **logprobs,  # type: ignore[arg-type]
            )
        return self._client.completions.with_streaming_response.create(
            model=self.model,
            prompt=request.prompt,
            n=request.n,
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            stop=stop,
            **({"logprobs": request.logprobs} if request.logprobs else {}),
        )


def _http_library(client) -> ModuleType:
    """The HTTP library (httpx, or the fork some openai versions ship) of the client, whose
    errors a streamed answer raises as it is read."""
    library = next(
        kind.__module__
        for kind in type(client._client).__mro__
        if kind.__module__ != "openai" and not kind.__module__.startswith("openai.")
    )
    return sys.modules[library.partition(".")[0]]


def _finish(reason: str | None) -> FinishReason:
    return "length" if reason == "length" else "stop" if reason in ("stop", None) else "other"


def _status_error(exc) -> BackendError:
    """A BackendError for an HTTP error answer; 408, 409, 429 and 5xx are transient."""
    status = exc.status_code
    message = f"HTTP {status} from {exc.request.url.host}: {_message(exc)}"
    if status in (408, 409, 429) or status >= 500:
        return TransientBackendError(message, retry_after=_retry_after(exc))
    if status == 401:
        message += " (check the API key in OPENAI_API_KEY)"
    elif status == 404:
        message += " (check --model and --base-url)"
    return BackendError(message)


def _message(exc) -> str:
    """The error's message from its body, or a short quote of the body; redacted."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return excerpt(str(error["message"]))
    return excerpt(exc.response.content)


def _connection_error(where: str, exc) -> TransientBackendError:
    """Cannot connect, or the server closed the connection before a complete answer. The
    cause is the HTTP library's error (its module differs between openai versions)."""
    cause = exc.__cause__
    if cause is None or type(cause).__name__ in ("ConnectError", "ConnectTimeout"):
        return TransientBackendError(f"{where}: cannot connect ({excerpt(str(cause or exc))})")
    return TransientBackendError(
        f"{where}: the server closed the connection before a complete answer "
        f"({excerpt(str(cause) or type(cause).__name__)})"
    )


def _retry_after(exc) -> float | None:
    headers = exc.response.headers
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@BACKEND_KINDS.register("openai")
def openai_backend(options: BackendOptions) -> OpenAIBackend:
    """The `openai` backend, with the endpoint's default model when none is named."""
    return OpenAIBackend(
        model=options.model or DEFAULT_OPENAI_MODELS[options.endpoint],
        api_key=options.api_key,
        base_url=options.base_url,
        endpoint=options.endpoint,
        timeout=options.timeout,
        max_reply_bytes=options.max_reply_bytes,
    )
