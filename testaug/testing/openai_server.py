"""A scripted, OpenAI-compatible HTTP server for tests and benchmarks (stdlib only).

`ScriptedOpenAIServer` answers `POST /v1/completions` and `POST /v1/chat/completions` (also
without the `/v1` prefix) with replies produced by a script, a function of the prompt text and
the sample index. It applies `n`, `stop` and `max_tokens` itself (tokens are whitespace-separated
words), records every request, and can inject faults (error statuses with `Retry-After`, extra
latency) so that retry, timeout and concurrency code can be tested against the real `openai`
client::

    with ScriptedOpenAIServer(lambda prompt, i: f"answer {i} to {prompt}") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        server.fail_next(1, 429, retry_after=0.5)
        ...

Run it standalone with `python -m testaug.testing.openai_server --port 8000 [--latency 0.1]`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import re
import socket
import socketserver
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

__all__ = [
    "RecordedRequest",
    "ReplyScript",
    "ScriptedOpenAIServer",
    "apply_limits",
    "count_tokens",
    "default_reply",
    "main",
]

ReplyScript = Callable[[str, int], str]
"""A reply script: (prompt text, sample index 0..n-1) -> the raw continuation."""

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


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, as recorded before it was answered."""

    method: str
    path: str
    body: Any
    """The parsed JSON body; None when there was none or it was not valid JSON."""
    headers: dict[str, str]
    """Header names lower-cased; credential headers (Authorization, api-key, ...) masked."""
    time: float
    """Arrival time, `time.time()`."""
    status: int
    """The HTTP status the server answered (or was about to answer)."""
    prompts: tuple[str, ...] = ()
    """The prompt texts given to the reply script (chat: the last user message)."""

    @property
    def messages(self) -> list[Any] | None:
        """The chat messages of a chat request, else None."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return messages if isinstance(messages, list) else None


@dataclass
class _Fault:
    status: int
    retry_after: float | None
    message: str | None
    remaining: int


@dataclass
class _Slowdown:
    seconds: float
    remaining: int


@dataclass
class _Answer:
    status: int
    payload: dict[str, Any]
    headers: dict[str, str]
    delay: float


class _BadRequest(Exception):
    """A request the server rejects with 400."""


def _mask(name: str, value: str) -> str:
    if name not in MASKED_HEADERS:
        return value
    scheme, sep, _ = value.partition(" ")
    return f"{scheme} ***" if sep else "***"


def _error_body(status: int, message: str | None) -> dict[str, Any]:
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
        raise _BadRequest(f"'{name}' must be an integer >= {minimum}, got {value!r}")
    return value


def _stop_param(body: dict[str, Any]) -> list[str]:
    stop = body.get("stop")
    if stop is None:
        return []
    if isinstance(stop, str):
        return [stop]
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        return stop
    raise _BadRequest(f"'stop' must be a string or a list of strings, got {stop!r}")


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
    raise _BadRequest(f"unsupported message content: {content!r}")


class _Handler(BaseHTTPRequestHandler):
    """Reads one request, asks the owning ScriptedOpenAIServer for the answer, writes it."""

    protocol_version = "HTTP/1.1"  # keep-alive: the openai client pools connections
    server_version = "ScriptedOpenAI/1.0"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: no per-request logging."""

    def do_POST(self) -> None:
        arrived = time.time()
        try:
            raw = self._read_body()
        except (ValueError, OSError):
            self.close_connection = True
            raw = None
        owner = self.server.owner
        answer = owner._answer(self.command, self.path, raw, self.headers, arrived)
        if owner._wait(answer.delay):  # the server is stopping: drop the request unanswered
            self.close_connection = True
            return
        self._send(answer)

    do_GET = do_POST

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while size := int(self.rfile.readline(65537).split(b";")[0].strip(), 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, answer: _Answer) -> None:
        data = json.dumps(answer.payload).encode()
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up (e.g. its timeout fired)
            self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], owner: ScriptedOpenAIServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn, which can stall on hosts without DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # a client hung up; not worth a traceback
        super().handle_error(request, client_address)

    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        """Shut down open (keep-alive) connections so their handler threads end."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class ScriptedOpenAIServer:
    """An OpenAI-compatible server whose replies come from a script; see the module docstring.

    The socket is bound at construction (so `base_url` is known at once); `start()` serves it
    from a daemon thread and `stop()` closes it for good. Every request (any path, failed or
    not) is recorded, counts in `request_count`, and consumes one pending fault and slowdown.
    """

    def __init__(
        self,
        reply: ReplyScript | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
    ) -> None:
        self.reply: ReplyScript = reply or default_reply
        self.latency: float = latency
        """Seconds slept before every answer; may be changed while serving."""
        self._lock = threading.Lock()
        self._records: list[RecordedRequest] = []
        self._faults: deque[_Fault] = deque()
        self._slowdowns: deque[_Slowdown] = deque()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._httpd = _HTTPServer((host, port), self)

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve from a daemon thread; returns self. A no-op when already serving."""
        if self._stopping.is_set():
            raise RuntimeError("this ScriptedOpenAIServer was stopped; create a new one")
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"ScriptedOpenAIServer:{self.port}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and pending sleeps, close the socket. Idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.close_connections()
        self._httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self._stopping.is_set() else ("serving" if self._thread else "bound")
        return f"<ScriptedOpenAIServer {self.base_url} {state}>"

    # -- addresses -----------------------------------------------------------------------------

    @property
    def host(self) -> str:
        """The host the socket is bound to."""
        return str(self._httpd.server_address[0])

    @property
    def port(self) -> int:
        """The port the socket is bound to (the OS's pick when constructed with port 0)."""
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client: `http://HOST:PORT/v1`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    # -- records and faults --------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests recorded so far, oldest first."""
        with self._lock:
            return list(self._records)

    @property
    def request_count(self) -> int:
        """How many requests were received, failed ones included."""
        with self._lock:
            return len(self._records)

    def reset(self) -> None:
        """Forget recorded requests and pending faults and slowdowns (`latency` stays)."""
        with self._lock:
            self._records.clear()
            self._faults.clear()
            self._slowdowns.clear()

    def fail_next(
        self,
        count: int = 1,
        status: int = 500,
        retry_after: float | None = None,
        *,
        message: str | None = None,
    ) -> None:
        """Answer the next `count` requests with `status` and an OpenAI-style error body.

        With `retry_after`, those answers carry a `Retry-After` header (seconds, may be
        fractional). Calls queue up: `fail_next(1, 429); fail_next(1, 500)` fails with 429 first.
        """
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        if not 400 <= status <= 599:
            raise ValueError(f"status must be an HTTP error status (400-599), got {status}")
        with self._lock:
            self._faults.append(_Fault(status, retry_after, message, count))

    def slow_next(self, count: int, seconds: float) -> None:
        """Sleep `seconds` (on top of `latency`) before answering each of the next `count` requests."""
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        with self._lock:
            self._slowdowns.append(_Slowdown(seconds, count))

    # -- answering -----------------------------------------------------------------------------

    def _wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the server is stopping."""
        if seconds <= 0:
            return self._stopping.is_set()
        return self._stopping.wait(seconds)

    def _answer(
        self, method: str, raw_path: str, raw: bytes | None, headers: Message, arrived: float
    ) -> _Answer:
        """Decide the answer to one request and record it (called from handler threads)."""
        with self._lock:
            request_id = next(self._ids)
            fault = self._faults[0] if self._faults else None
            if fault is not None:
                fault.remaining -= 1
                if fault.remaining == 0:
                    self._faults.popleft()
            slowdown = self._slowdowns[0] if self._slowdowns else None
            if slowdown is not None:
                slowdown.remaining -= 1
                if slowdown.remaining == 0:
                    self._slowdowns.popleft()

        path = urlsplit(raw_path).path.rstrip("/") or "/"
        body: Any = None
        body_error: str | None = "request body is not valid JSON" if raw is None else None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body_error = "request body is not valid JSON"
        prompts: tuple[str, ...] = ()
        extra_headers = {"x-request-id": f"req_scripted_{request_id}"}

        if fault is not None:
            status, payload = fault.status, _error_body(fault.status, fault.message)
            if fault.retry_after is not None:
                extra_headers["Retry-After"] = f"{fault.retry_after:g}"
        elif method != "POST" or path not in COMPLETIONS_PATHS | CHAT_PATHS:
            status, payload = 404, _error_body(404, f"Unknown request URL: {method} {path}")
        elif body_error is not None or not isinstance(body, dict):
            status, payload = 400, _error_body(400, body_error or "request body must be an object")
        else:
            try:
                chat = path in CHAT_PATHS
                prompts, payload = (self._chat if chat else self._completion)(
                    body, request_id, arrived
                )
                status = 200
            except _BadRequest as exc:
                status, payload = 400, _error_body(400, str(exc))
            except Exception as exc:  # a broken reply script: answer it rather than hang up
                status, payload = 500, _error_body(500, f"reply script failed: {exc!r}")

        record = RecordedRequest(
            method=method,
            path=path,
            body=body,
            headers={name.lower(): _mask(name.lower(), value) for name, value in headers.items()},
            time=arrived,
            status=status,
            prompts=prompts,
        )
        with self._lock:
            self._records.append(record)
        delay = self.latency + (slowdown.seconds if slowdown is not None else 0.0)
        return _Answer(status, payload, extra_headers, delay)

    def _samples(
        self, prompt: str, n: int, stop: list[str], max_tokens: int | None
    ) -> list[tuple[str, str]]:
        out = []
        for index in range(n):
            text = self.reply(prompt, index)
            if not isinstance(text, str):
                raise TypeError(f"reply script returned {type(text).__name__}, not str")
            out.append(apply_limits(text, stop, max_tokens))
        return out

    @staticmethod
    def _common(body: dict[str, Any]) -> tuple[int, list[str]]:
        if body.get("stream"):
            raise _BadRequest("streaming is not supported by ScriptedOpenAIServer")
        return _int_param(body, "n", 1) or 1, _stop_param(body)

    def _completion(
        self, body: dict[str, Any], request_id: int, arrived: float
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        n, stop = self._common(body)
        max_tokens = _int_param(body, "max_tokens", 0)
        prompt = body.get("prompt", "")
        if isinstance(prompt, str):
            prompts = [prompt]
        elif isinstance(prompt, list) and prompt and all(isinstance(p, str) for p in prompt):
            prompts = prompt
        else:
            raise _BadRequest("'prompt' must be a string or a non-empty list of strings")
        choices = []
        for p_index, text_prompt in enumerate(prompts):
            for index, (text, finish) in enumerate(self._samples(text_prompt, n, stop, max_tokens)):
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
        payload = {
            "id": f"cmpl-scripted-{request_id}",
            "object": "text_completion",
            "created": int(arrived),
            "model": str(body.get("model") or "scripted"),
            "choices": choices,
            "usage": _usage(prompt_tokens, completion_tokens),
        }
        return tuple(prompts), payload

    def _chat(
        self, body: dict[str, Any], request_id: int, arrived: float
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        n, stop = self._common(body)
        max_tokens = _int_param(body, "max_completion_tokens", 0)
        if max_tokens is None:
            max_tokens = _int_param(body, "max_tokens", 0)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise _BadRequest("'messages' must be a list of message objects")
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
            for index, (text, finish) in enumerate(self._samples(prompt, n, stop, max_tokens))
        ]
        prompt_tokens = sum(count_tokens(t) for t in texts)
        completion_tokens = sum(count_tokens(c["message"]["content"]) for c in choices)
        payload = {
            "id": f"chatcmpl-scripted-{request_id}",
            "object": "chat.completion",
            "created": int(arrived),
            "model": str(body.get("model") or "scripted"),
            "choices": choices,
            "usage": _usage(prompt_tokens, completion_tokens),
        }
        return (prompt,), payload


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the default script until Ctrl-C, printing the base URL once."""
    parser = argparse.ArgumentParser(
        prog="python -m testaug.testing.openai_server",
        description="Serve a scripted OpenAI-compatible API (completions and chat completions).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port; 0 lets the OS pick one")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to wait per answer")
    args = parser.parse_args(argv)
    server = ScriptedOpenAIServer(host=args.host, port=args.port, latency=args.latency)
    with server:
        print(server.base_url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
