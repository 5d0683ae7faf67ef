"""The HTTP side of the scripted OpenAI-compatible server (stdlib only): a threading server
whose handler reads a request, asks a `Responder` what to answer, and writes JSON back
(or, for fault injection, raw bytes, a body cut short, or nothing before hanging up)."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from dataclasses import dataclass
from email.message import Message
from typing import Any, Protocol

from testaug.testing.loopback_http import LoopbackHTTPServer, TrackedHandler


class Responder(Protocol):
    """What decides the answers: the scripted server."""

    def answer(
        self, method: str, raw_path: str, raw: bytes | None, headers: Message, arrived: float
    ) -> Answer: ...

    def wait(self, seconds: float) -> bool: ...


@dataclass
class Answer:
    """What to send back for one request, and how long to wait before sending it."""

    status: int
    payload: dict[str, Any]
    headers: dict[str, str]
    delay: float
    body: bytes | None = None
    """Raw bytes to send instead of `payload` as JSON."""
    cut: int | None = None
    """Send only this many bytes of the body (the full length is declared), then hang up."""
    hang_up: bool = False
    """Close the connection without sending anything."""
    trickle: tuple[int, float] | None = None
    """Send the body `chunk` bytes at a time, waiting `interval` seconds between chunks."""


class JsonHandler(TrackedHandler):
    """Reads one request, asks the server's responder for the answer, writes it."""

    server_version = "ScriptedOpenAI/1.0"  # keep-alive: the openai client pools connections
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: JsonHTTPServer

    def do_POST(self) -> None:
        arrived = time.time()
        try:
            raw = self.read_body()
        except (ValueError, OSError):
            self.close_connection = True
            raw = None
        owner = self.server.owner
        answer = owner.answer(self.command, self.path, raw, self.headers, arrived)
        if owner.wait(answer.delay):  # the server is stopping: drop the request unanswered
            self.close_connection = True
            return
        if answer.hang_up:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._send(answer)

    do_GET = do_POST

    def _send(self, answer: Answer) -> None:
        data = answer.body if answer.body is not None else json.dumps(answer.payload).encode()
        if answer.cut is not None:
            self.close_connection = True
        try:
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in answer.headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if answer.trickle is not None:
                self._trickle(data, *answer.trickle)
                return
            self.wfile.write(data if answer.cut is None else data[: answer.cut])
            if answer.cut is not None:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:  # the client gave up (e.g. its timeout fired)
            self.close_connection = True

    def _trickle(self, data: bytes, chunk: int, interval: float) -> None:
        """Write `data` a chunk at a time; stop (and hang up) when the server stops."""
        self.wfile.flush()
        for start in range(0, len(data), chunk):
            if start and self.server.owner.wait(interval):
                self.close_connection = True
                return
            self.wfile.write(data[start : start + chunk])
            self.wfile.flush()


class JsonHTTPServer(LoopbackHTTPServer):
    """The scripted server's HTTP server: its handlers ask `owner` what to answer."""

    request_queue_size = 128

    def __init__(self, address: tuple[str, int], owner: Responder) -> None:
        self.owner = owner
        super().__init__(address, JsonHandler)
