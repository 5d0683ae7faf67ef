"""Reading an OpenAI-compatible server's answer, and quoting it safely in error messages.

A 200 answer is parsed here rather than by the openai client, so that a garbled one ends
in a message that names the status and quotes what the server sent. The classification:

- a body that is not JSON (or not UTF-8) is transient: a proxy or a restarting server
  glitched, and the next try usually gets a real answer;
- JSON that is not a completion (`choices` null or missing, a choice without its text) is
  permanent: the server speaks something else, and retrying gets the same answer.

A connection closed before the answer was complete is transient too (the backend says so).
"""

from __future__ import annotations

import json
from typing import Any

from testaug.core.secrets import redact_text
from testaug.generation.backends.base import (
    BackendError,
    TokenLogprob,
    TransientBackendError,
    Usage,
)

EXCERPT_CHARS = 200


def redact(text: str) -> str:
    """`text` with URL user info, bearer tokens and key-shaped strings replaced by ***."""
    return redact_text(text)


def excerpt(body: bytes | str | None, limit: int = EXCERPT_CHARS) -> str:
    """A one-line, redacted quote of `body` of at most `limit` characters."""
    if body is None:
        return "(nothing)"
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = redact(" ".join(text.split()))
    if not text:
        return "(an empty body)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_answer(
    content: bytes, *, status: int, host: str, chat: bool
) -> tuple[list[tuple[str, str | None, tuple[TokenLogprob, ...] | None]], Usage]:
    """The (text, finish reason, log-probabilities) of each choice in index order, and the
    usage, of a 200 answer. Log-probabilities are None where the choice has none or they are
    not in either OpenAI shape: they are extra information, never a reason to fail."""

    def fault(what: str, error: type[BackendError] = BackendError) -> BackendError:
        return error(f"HTTP {status} from {host}: {what}; the server sent: {excerpt(content)}")

    try:
        data = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise fault("the answer is not JSON", TransientBackendError) from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        raise fault("the answer has no list of choices")
    texts = []
    for position, choice in enumerate(choices):
        text = _choice_text(choice, chat=chat)
        if text is None:
            field = "message content" if chat else "text"
            raise fault(f"choice {position} has no {field}")
        index = choice.get("index", position)
        finish = choice.get("finish_reason")
        logprobs = _logprobs(choice.get("logprobs"), chat=chat)
        texts.append((index if isinstance(index, int) else position, text, finish, logprobs))
    texts.sort(key=lambda item: item[0])
    return [(text, finish, lp) for _, text, finish, lp in texts], _usage(data.get("usage"))


def _logprobs(value: Any, *, chat: bool) -> tuple[TokenLogprob, ...] | None:
    """A choice's token log-probabilities: chat's `{"content": [{token, logprob,
    top_logprobs: [{token, logprob}]}]}` or completions' `{tokens, token_logprobs,
    top_logprobs: [{token: logprob}]}`; None when absent or malformed."""
    if not isinstance(value, dict):
        return None
    try:
        if chat:
            content = value.get("content")
            if not isinstance(content, list):
                return None
            return tuple(
                TokenLogprob(
                    token=item["token"],
                    logprob=item["logprob"],
                    top=tuple((t["token"], t["logprob"]) for t in item.get("top_logprobs") or ()),
                )
                for item in content
            )
        tokens, logprobs = value.get("tokens"), value.get("token_logprobs")
        if not isinstance(tokens, list) or not isinstance(logprobs, list):
            return None
        tops = value.get("top_logprobs") or [None] * len(tokens)
        return tuple(
            TokenLogprob(
                token=token,
                logprob=logprob,
                top=tuple(sorted((top or {}).items(), key=lambda item: -item[1])),
            )
            for token, logprob, top in zip(tokens, logprobs, tops, strict=True)
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _choice_text(choice: Any, *, chat: bool) -> str | None:
    """A choice's text, or None when it has none ("" for a chat message whose content is null)."""
    if not isinstance(choice, dict):
        return None
    if not chat:
        text = choice.get("text")
        return text if isinstance(text, str) else None
    message = choice.get("message")
    if not isinstance(message, dict) or "content" not in message:
        return None
    content = message["content"]
    return "" if content is None else content if isinstance(content, str) else None


def _usage(usage: Any) -> Usage:
    """Token counts from an answer's `usage`, 0 where missing or not a count."""
    usage = usage if isinstance(usage, dict) else {}

    def count(name: str) -> int:
        value = usage.get(name)
        return value if isinstance(value, int) and value >= 0 else 0

    return Usage(prompt_tokens=count("prompt_tokens"), completion_tokens=count("completion_tokens"))
