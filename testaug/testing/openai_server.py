"""A scripted, OpenAI-compatible HTTP server for tests and benchmarks (stdlib only).

`ScriptedOpenAIServer` answers `POST /v1/completions` and `POST /v1/chat/completions` (also
without the `/v1` prefix) with replies produced by a script, a function of the prompt text and
the sample index. It applies `n`, `stop` and `max_tokens` itself (the wire format lives in
`openai_wire`; tokens are whitespace-separated words), records every request, and can inject
faults (error statuses with `Retry-After`, extra latency, garbled 200 answers, answers
trickled a few bytes at a time) so that retry, timeout and
concurrency code can be tested against the real `openai` client::

    with ScriptedOpenAIServer(lambda prompt, i: f"answer {i} to {prompt}") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        server.fail_next(1, 429, retry_after=0.5)
        ...

Run it standalone with `python -m testaug.testing.openai_server --port 8000 [--latency 0.1]`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from types import TracebackType
from typing import Any, Self

from testaug.testing.http_transport import Answer, JsonHTTPServer
from testaug.testing.openai_wire import (
    GARBLES,
    apply_limits,
    count_tokens,
    default_reply,
    error_body,
    garble,
    mask_header,
    parse_request,
    respond,
)

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
class _Garble:
    kind: str
    remaining: int


@dataclass
class _Slowdown:
    seconds: float
    remaining: int


@dataclass
class _Trickle:
    chunk: int
    interval: float
    remaining: int


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
        self._garbles: deque[_Garble] = deque()
        self._trickles: deque[_Trickle] = deque()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._httpd = JsonHTTPServer((host, port), self)

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
            self._garbles.clear()
            self._trickles.clear()

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

    def garble_next(self, count: int, kind: str) -> None:
        """Garble the next `count` successful answers; `kind` is one of `GARBLES`: "not-json",
        "null-choices", "missing-fields", "truncated" (half the body, then the connection
        closes) or "hang-up" (the connection closes with no answer)."""
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        if kind not in GARBLES:
            raise ValueError(f"unknown garble {kind!r}; expected one of {', '.join(GARBLES)}")
        with self._lock:
            self._garbles.append(_Garble(kind, count))

    def trickle_next(self, count: int, *, chunk: int = 4, interval: float = 0.5) -> None:
        """Send the next `count` successful answers `chunk` bytes at a time, `interval` seconds
        apart (headers at once, then the body slowly), as a server that keeps a connection
        busy without ever finishing in time."""
        if count < 1 or chunk < 1 or interval < 0:
            raise ValueError("count and chunk must be >= 1 and interval >= 0")
        with self._lock:
            self._trickles.append(_Trickle(chunk, interval, count))

    # -- answering -----------------------------------------------------------------------------

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when the server is stopping."""
        if seconds <= 0:
            return self._stopping.is_set()
        return self._stopping.wait(seconds)

    def answer(
        self, method: str, raw_path: str, raw: bytes | None, headers: Message, arrived: float
    ) -> Answer:
        """Decide the answer to one request and record it (called from handler threads)."""
        with self._lock:
            request_id = next(self._ids)
            fault = self._faults[0] if self._faults else None
            if fault is not None:
                fault.remaining -= 1
                if fault.remaining == 0:
                    self._faults.popleft()
            slowdown = _take(self._slowdowns)
            garbled = _take(self._garbles) if fault is None else None
            trickled = _take(self._trickles) if fault is None else None

        path, body, body_error = parse_request(raw_path, raw)
        extra_headers = {"x-request-id": f"req_scripted_{request_id}"}
        if fault is not None:
            status, prompts, payload = fault.status, (), error_body(fault.status, fault.message)
            if fault.retry_after is not None:
                extra_headers["Retry-After"] = f"{fault.retry_after:g}"
        else:
            status, prompts, payload = respond(
                method, path, body, body_error, self._samples, request_id, arrived
            )

        record = RecordedRequest(
            method=method,
            path=path,
            body=body,
            headers={
                name.lower(): mask_header(name.lower(), value) for name, value in headers.items()
            },
            time=arrived,
            status=status,
            prompts=prompts,
        )
        with self._lock:
            self._records.append(record)
        delay = self.latency + (slowdown.seconds if slowdown is not None else 0.0)
        if garbled is not None and status == 200:
            if garbled.kind == "hang-up":
                return Answer(status, payload, extra_headers, delay, hang_up=True)
            payload, raw, cut = garble(garbled.kind, payload)
            return Answer(status, payload, extra_headers, delay, body=raw, cut=cut)
        if trickled is not None and status == 200:
            trickle = (trickled.chunk, trickled.interval)
            return Answer(status, payload, extra_headers, delay, trickle=trickle)
        return Answer(status, payload, extra_headers, delay)

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


def _take(queue: deque[Any]) -> Any:
    """The head of a queue of counted injections, counting one use (popped when used up)."""
    head = queue[0] if queue else None
    if head is not None:
        head.remaining -= 1
        if head.remaining == 0:
            queue.popleft()
    return head


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
