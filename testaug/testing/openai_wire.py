"""The OpenAI wire format as `ScriptedOpenAIServer` speaks it (stdlib only).

Request parsing (path, JSON body, `n`, `stop`, `max_tokens`, prompts and chat messages), the
completions and chat completions response payloads, error bodies and credential-header masking.
Tokens are whitespace-separated words.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "CHAT_PATHS",
    "COMPLETIONS_PATHS",
    "GARBLES",
    "MASKED_HEADERS",
    "BadRequest",
    "Sampler",
    "apply_limits",
    "chat_payload",
    "completion_payload",
    "count_tokens",
    "default_reply",
    "error_body",
    "garble",
    "mask_header",
    "parse_request",
    "respond",
]

Sampler = Callable[[str, int, list[str], int | None], list[tuple[str, str]]]
"""(prompt, n, stop, max_tokens) -> n (text, finish reason) pairs, limits already applied."""

COMPLETIONS_PATHS = frozenset({"/v1/completions", "/completions"})
CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})
MASKED_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key"})

_WORDS = (
    "amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor",
    "indigo", "juniper", "kestrel", "lumen", "meadow", "nectar", "onyx", "pebble",
)  # fmt: skip
_WORD_RE = re.compile(r"\S+")


def default_reply(prompt: str, index: int) -> str:
    """The default script: a deterministic short sentence derived from a hash of prompt and index."""
    digest = hashlib.sha256(f"{index}\x00{prompt}".encode()).digest()
    words = " ".join(_WORDS[byte % len(_WORDS)] for byte in digest[:6])
    return f"Sample {index}: {words}."


def count_tokens(text: str) -> int:
    """Crude token count used for `max_tokens` and `usage`: whitespace-separated words."""
    return len(text.split())


def apply_limits(
    text: str, stop: str | Sequence[str] | None = None, max_tokens: int | None = None
) -> tuple[str, str]:
    """Cut `text` at the earliest stop sequence (excluded), then to `max_tokens` words.

    Returns the text and the finish reason: "length" when the word limit cut it, else "stop".
    """
    stops = [stop] if isinstance(stop, str) else list(stop or ())
    hits = [pos for s in stops if s and (pos := text.find(s)) >= 0]
    if hits:
        text = text[: min(hits)]
    if max_tokens is not None:
        words = list(_WORD_RE.finditer(text))
        if len(words) > max_tokens:
            return (text[: words[max_tokens - 1].end()] if max_tokens > 0 else ""), "length"
    return text, "stop"


class BadRequest(Exception):
    """A request the server rejects with 400."""


def mask_header(name: str, value: str) -> str:
    """`value` with credentials hidden when `name` (lower-cased) is a credential header."""
    if name not in MASKED_HEADERS:
        return value
    scheme, sep, _ = value.partition(" ")
    return f"{scheme} ***" if sep else "***"


GARBLES = ("not-json", "null-choices", "missing-fields", "truncated", "hang-up")
"""How a 200 answer can be garbled: an invalid JSON body, `choices: null`, choices without
their text, the body cut short (then the connection closed), or no answer at all."""


def garble(kind: str, payload: dict[str, Any]) -> tuple[dict[str, Any], bytes | None, int | None]:
    """The payload, raw body and cut point of a 200 answer garbled as `kind` (not "hang-up")."""
    text = json.dumps(payload)
    if kind == "not-json":
        return payload, text[: len(text) // 2].encode(), None
    if kind == "null-choices":
        return {**payload, "choices": None}, None, None
    if kind == "missing-fields":
        choices = [{"index": c.get("index", 0)} for c in payload.get("choices") or []]
        return {**payload, "choices": choices}, None, None
    if kind == "truncated":
        return payload, None, len(text.encode()) // 2
    raise ValueError(f"unknown garble {kind!r}; expected one of {', '.join(GARBLES)}")


def error_body(status: int, message: str | None) -> dict[str, Any]:
    """An OpenAI-style error body for `status`; a default message when `message` is None."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    if status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    else:
        kind = "server_error" if status >= 500 else "invalid_request_error"
        code = phrase.lower().replace(" ", "_").replace("-", "_")
    text = message or f"Scripted failure: {status} {phrase}"
    return {"error": {"message": text, "type": kind, "param": None, "code": code}}


def _int_param(body: dict[str, Any], name: str, minimum: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise BadRequest(f"'{name}' must be an integer >= {minimum}, got {value!r}")
    return value


def _stop_param(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        return stop
    raise BadRequest(f"'stop' must be a string or a list of strings, got {stop!r}")


def _content_text(content: Any) -> str:
    """The text of a chat message's content: a string, or a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        )
    raise BadRequest(f"unsupported message content: {content!r}")


def _common(body: dict[str, Any]) -> tuple[int, list[str]]:
    """`n` and `stop` of a completions or chat request; rejects streaming."""
    if body.get("stream"):
        raise BadRequest("streaming is not supported by ScriptedOpenAIServer")
    return _int_param(body, "n", 1) or 1, _stop_param(body)


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def completion_payload(
    body: dict[str, Any], samples: Sampler, request_id: int, arrived: float
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The prompts and response payload of a `/v1/completions` request; BadRequest if invalid."""
    n, stop = _common(body)
    max_tokens = _int_param(body, "max_tokens", 0)
    prompt = body.get("prompt", "")
    if isinstance(prompt, str):
        prompts = [prompt]
    elif isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
        prompts = prompt
    else:
        raise BadRequest("'prompt' must be a string or a non-empty list of strings")
    choices = []
    for p_index, text_prompt in enumerate(prompts):
        for index, (text, finish) in enumerate(samples(text_prompt, n, stop, max_tokens)):
            choices.append(
                {
                    "index": p_index * n + index,
                    "text": text,
                    "finish_reason": finish,
                    "logprobs": None,
                }
            )
    prompt_tokens = sum(count_tokens(p) for p in prompts)
    completion_tokens = sum(count_tokens(c["text"]) for c in choices)
    usage = _usage(prompt_tokens, completion_tokens)
    return tuple(prompts), _envelope(
        "cmpl", "text_completion", body, request_id, arrived, choices, usage
    )


def chat_payload(
    body: dict[str, Any], samples: Sampler, request_id: int, arrived: float
) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The prompt (the last user message) and response payload of a chat request."""
    n, stop = _common(body)
    max_tokens = _int_param(body, "max_completion_tokens", 0)
    if max_tokens is None:
        max_tokens = _int_param(body, "max_tokens", 0)
    messages = body.get("messages")
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("'messages' must be a list of message objects")
    texts = [_content_text(m.get("content")) for m in messages]
    user_texts = [t for m, t in zip(messages, texts, strict=True) if m.get("role") == "user"]
    prompt = user_texts[-1] if user_texts else ""
    choices = [
        {
            "index": index,
            "message": {"role": "assistant", "content": text},
            "finish_reason": finish,
            "logprobs": None,
        }
        for index, (text, finish) in enumerate(samples(prompt, n, stop, max_tokens))
    ]
    prompt_tokens = sum(count_tokens(t) for t in texts)
    completion_tokens = sum(count_tokens(c["message"]["content"]) for c in choices)
    usage = _usage(prompt_tokens, completion_tokens)
    return (prompt,), _envelope(
        "chatcmpl", "chat.completion", body, request_id, arrived, choices, usage
    )


def _envelope(
    prefix: str,
    kind: str,
    body: dict[str, Any],
    request_id: int,
    arrived: float,
    choices: list[dict[str, Any]],
    usage: dict[str, int],
) -> dict[str, Any]:
    """The fields every completion response shares around its choices."""
    return {
        "id": f"{prefix}-scripted-{request_id}",
        "object": kind,
        "created": int(arrived),
        "model": str(body.get("model") or "scripted"),
        "choices": choices,
        "usage": usage,
    }


def parse_request(raw_path: str, raw: bytes | None) -> tuple[str, Any, str | None]:
    """The path (query and trailing slash dropped), the JSON body, and why that body is unusable.

    `raw` is None when the body could not be read. The body is None when absent or not JSON; the
    reason is None unless the body was unreadable or not JSON.
    """
    path = urlsplit(raw_path).path.rstrip("/") or "/"
    body: Any = None
    body_error: str | None = "request body is not valid JSON" if raw is None else None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body_error = "request body is not valid JSON"
    return path, body, body_error


def respond(
    method: str,
    path: str,
    body: Any,
    body_error: str | None,
    samples: Sampler,
    request_id: int,
    arrived: float,
) -> tuple[int, tuple[str, ...], dict[str, Any]]:
    """The status, the prompts given to `samples`, and the payload answering one request."""
    if method != "POST" or path not in COMPLETIONS_PATHS | CHAT_PATHS:
        return 404, (), error_body(404, f"Unknown request URL: {method} {path}")
    if body_error is not None or not isinstance(body, dict):
        return 400, (), error_body(400, body_error or "request body must be an object")
    build = chat_payload if path in CHAT_PATHS else completion_payload
    try:
        prompts, payload = build(body, samples, request_id, arrived)
    except BadRequest as exc:
        return 400, (), error_body(400, str(exc))
    except Exception as exc:  # a broken reply script: answer it rather than hang up
        return 500, (), error_body(500, f"reply script failed: {exc!r}")
    return 200, prompts, payload
