"""An HTTP proxy for fault tests (stdlib only, 127.0.0.1): it forwards every request to a
server and, when told, loses the answer to a request the server has already acted on, the
way a gateway that answers 502 or 504, or a connection that drops, loses it.

    with FaultProxy("http://127.0.0.1:8080") as proxy:
        proxy.lose_answer("POST", r"/api/projects/\\d+/import", answer=502)
        ...  # talk to proxy.url: the next import is stored, and its client sees HTTP 502
        assert len(proxy.lost_after_acting("POST", r"/api/projects/\\d+/import")) == 1

A planned fault is taken by the first request it matches (`pending` counts those not taken
yet); `lost` records each answer the proxy actually kept from its client, with what the
server had answered, so a test can check that an answer was lost after the server acted.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import threading
from dataclasses import dataclass
from urllib.parse import urlsplit

from testaug.testing.loopback_http import LoopbackHTTPServer, TrackedHandler

HOST = "127.0.0.1"
# Headers the proxy does not pass on: those of one connection, not of the request or answer
# they travel with, and those it sets itself.
NOT_PASSED_ON = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
GATEWAY_BODY = b"<html><body><h1>Bad gateway</h1>The answer was lost.</body></html>"


@dataclass
class Fault:
    """What to do to the next `times` requests with this method whose path (without the
    query) fully matches `path`."""

    method: str
    path: str
    answer: int | None  # the status sent instead of the server's; None: hang up, no answer
    forward: bool  # whether the server gets the request first
    times: int


@dataclass(frozen=True)
class Seen:
    """One request the proxy handled: its method, path, and the status its client got
    (None when the connection was closed without an answer)."""

    method: str
    path: str
    status: int | None
    forwarded: bool


@dataclass(frozen=True)
class Lost:
    """An answer the proxy kept from its client: the request, what the server answered
    (None: it was not sent on, or the server could not be reached) and what the client got
    instead (None: the connection closed without an answer)."""

    method: str
    path: str
    server_status: int | None
    sent: int | None

    @property
    def after_acting(self) -> bool:
        """Whether the server had acted on the request (answered 2xx) when it was lost."""
        return self.server_status is not None and 200 <= self.server_status < 300


class FaultProxy:
    """A proxy on 127.0.0.1 in front of the server at `upstream`, losing answers on demand."""

    def __init__(self, upstream: str, *, timeout: float = 120.0) -> None:
        parts = urlsplit(upstream)
        if parts.hostname is None:
            raise ValueError(f"not a server URL: {upstream!r}")
        self.upstream_host = parts.hostname
        self.upstream_port = parts.port or 80
        self.upstream_prefix = parts.path.rstrip("/")
        self.timeout = timeout
        self.seen: list[Seen] = []
        self.lost: list[Lost] = []
        self._faults: list[Fault] = []
        self._lock = threading.Lock()
        self._server = _ProxyServer((HOST, 0), self)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._server.server_port}"

    def lose_answer(
        self,
        method: str,
        path: str,
        *,
        answer: int | None = 502,
        forward: bool = True,
        times: int = 1,
    ) -> None:
        """For the next `times` requests with `method` whose path matches the regular
        expression `path`: send them on (unless `forward` is false), then answer HTTP
        `answer` in place of the server's answer, or close the connection without any
        answer when `answer` is None."""
        with self._lock:
            self._faults.append(Fault(method.upper(), path, answer, forward, times))

    def pending(self) -> int:
        """How many planned faults no request has taken yet (a taken fault is applied as its
        answer goes out: `lost` records it)."""
        with self._lock:
            return sum(fault.times for fault in self._faults)

    def lost_after_acting(self, method: str, path: str) -> list[Lost]:
        """The answers lost after the server acted on a request with `method` whose path
        fully matches the regular expression `path`."""
        with self._lock:
            return [
                lost
                for lost in self.lost
                if lost.after_acting
                and lost.method == method.upper()
                and re.fullmatch(path, lost.path)
            ]

    def start(self) -> FaultProxy:
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and drop open connections."""
        self._server.shutdown()
        self._server.close_connections()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method == method and re.fullmatch(fault.path, path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _record(self, seen: Seen, lost: Lost | None = None) -> None:
        with self._lock:
            self.seen.append(seen)
            if lost is not None:
                self.lost.append(lost)

    def _forward(
        self, method: str, target: str, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int, str, list[tuple[str, str]], bytes]:
        connection = http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=self.timeout
        )
        try:
            sent = [(k, v) for k, v in headers if k.lower() not in NOT_PASSED_ON]
            connection.putrequest(
                method, self.upstream_prefix + target, skip_host=True, skip_accept_encoding=True
            )
            connection.putheader("Host", f"{self.upstream_host}:{self.upstream_port}")
            for name, value in sent:
                connection.putheader(name, value)
            connection.putheader("Content-Length", str(len(body)))
            connection.endheaders(body)
            response = connection.getresponse()
            data = response.read()
            kept = [(k, v) for k, v in response.getheaders() if k.lower() not in NOT_PASSED_ON]
            return response.status, response.reason, kept, data
        finally:
            connection.close()


class _Handler(TrackedHandler):
    server: _ProxyServer

    def _handle(self) -> None:
        proxy = self.server.proxy
        body = self.read_body()
        path = urlsplit(self.path).path
        fault = proxy._take_fault(self.command, path)
        forwarded = fault is None or fault.forward
        answer: tuple[int, str, list[tuple[str, str]], bytes] | None = None
        if forwarded:
            try:
                answer = proxy._forward(self.command, self.path, list(self.headers.items()), body)
            except OSError:
                answer = (502, "Bad Gateway", [], GATEWAY_BODY)
        lost = None
        if fault is not None:
            server_status = answer[0] if answer is not None else None
            lost = Lost(self.command, path, server_status, fault.answer)
            if fault.answer is None:
                # recorded first: the client may see the closed connection at once
                proxy._record(Seen(self.command, path, None, forwarded), lost)
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            answer = (fault.answer, "Lost", [("Content-Type", "text/html")], GATEWAY_BODY)
        assert answer is not None
        status, reason, headers, data = answer
        proxy._record(Seen(self.command, path, status, forwarded), lost)
        try:
            self.send_response(status, reason)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client gave up
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle


class _ProxyServer(LoopbackHTTPServer):
    def __init__(self, address: tuple[str, int], proxy: FaultProxy) -> None:
        self.proxy = proxy
        super().__init__(address, _Handler)
