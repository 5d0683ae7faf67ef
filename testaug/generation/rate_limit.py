"""A requests-per-minute limit shared by the threads that send requests."""

from __future__ import annotations

import threading
import time


class RateLimiter:
    """Spaces requests at least 60/rpm seconds apart; `rpm=None` means no limit."""

    def __init__(self, requests_per_minute: float | None) -> None:
        if requests_per_minute is not None and requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._next = 0.0
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until this caller may send its request."""
        if not self.interval:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            time.sleep(start - now)
