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
from testaug.generation.backends.base import BackendError, TransientBackendError, Usage

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
) -> tuple[list[tuple[str, str | None]], Usage]:
    """The (text, finish reason) of each choice in index order, and the usage, of a 200 answer."""

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
        texts.append((index if isinstance(index, int) else position, text, finish))
    texts.sort(key=lambda item: item[0])
    return [(text, finish) for _, text, finish in texts], _usage(data.get("usage"))


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
