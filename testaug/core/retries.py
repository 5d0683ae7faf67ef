"""Retries of transient service faults: exponential backoff with jitter, Retry-After first."""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from testaug.core.errors import ServiceError, TransientServiceError

logger = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: attempt i waits base * 2**i (capped), times a jitter
    factor in [0.5, 1]; a server's Retry-After replaces that wait (capped at `max_retry_after`)."""

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after the failed attempt number `attempt` (0-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        return min(self.max_delay, self.base_delay * 2**attempt) * rng.uniform(0.5, 1.0)


@dataclass
class RetryNotices:
    """Says each kind of transient fault once as a warning, then counts its repeats (logged
    at debug, with a reminder every `every` repeats): many requests in flight against a
    failing server make one warning, not one per request. `summary()` tells the totals."""

    every: int = 50
    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def retrying(self, what: str, error: Exception, wait: float) -> None:
        """Log that `what` failed with `error` and is retried in `wait` seconds."""
        kind = fault_kind(str(error))
        with self._lock:
            self.counts[kind] += 1
            seen = self.counts[kind]
            self.examples.setdefault(kind, str(error))
        if seen == 1:
            logger.warning("%s: %s; retrying in %.2f s", what, error, wait)
        elif seen % self.every == 0:
            logger.warning("%d retries so far after: %s", seen, error)
        else:
            logger.debug("%s: %s; retrying in %.2f s", what, error, wait)

    def summary(self) -> str | None:
        """One line on the faults retried more than once (None when none repeated)."""
        with self._lock:
            repeated = [(kind, n) for kind, n in self.counts.most_common() if n > 1]
            if not repeated:
                return None
            return "retried after transient faults: " + "; ".join(
                f"{n} x {self.examples[kind]}" for kind, n in repeated
            )


def fault_kind(message: str) -> str:
    """A fault message with its numbers and ids blanked, so repeats of one fault match."""
    return re.sub(r"[0-9a-f]{8,}|\d+(\.\d+)?", "#", message)


class RetriesExhausted(ServiceError):
    """A request kept failing with transient faults until the attempts ran out."""


def call_with_retries(
    send: Callable[[], T],
    policy: RetryPolicy,
    rng: random.Random,
    *,
    what: str = "request",
    sleep: Callable[[float], None] = time.sleep,
    notices: RetryNotices | None = None,
) -> tuple[T, int]:
    """Call `send` until it succeeds; returns its result and the number of retries it took.

    Transient faults are retried per `policy`; any other ServiceError goes straight up.
    Each retry is told through `notices` (shared by the calls of one run, so a fault that
    hits every request is one warning); without it, every retry is a warning.
    """
    for attempt in range(policy.max_attempts):
        try:
            return send(), attempt
        except TransientServiceError as exc:
            if attempt + 1 >= policy.max_attempts:
                raise RetriesExhausted(
                    f"{what} failed {policy.max_attempts} times; last error: {exc}"
                ) from exc
            wait = policy.delay(attempt, exc.retry_after, rng)
            if notices is None:
                logger.warning("%s: %s; retrying in %.2f s", what, exc, wait)
            else:
                notices.retrying(what, exc, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover
