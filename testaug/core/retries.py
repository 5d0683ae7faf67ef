"""Retries of transient service faults: exponential backoff with jitter, Retry-After first."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
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


class RetriesExhausted(ServiceError):
    """A request kept failing with transient faults until the attempts ran out."""


def call_with_retries(
    send: Callable[[], T],
    policy: RetryPolicy,
    rng: random.Random,
    *,
    what: str = "request",
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Call `send` until it succeeds; returns its result and the number of retries it took.

    Transient faults are retried per `policy`; any other ServiceError goes straight up.
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
            logger.warning("%s: %s; retrying in %.2f s", what, exc, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover
