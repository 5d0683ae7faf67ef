"""One answer per request, for the callers that ask an LLM to classify or judge a case:
from the response cache where it is stored, else from the backend (paced, retried with
backoff, a bounded number in flight), each fresh answer stored as soon as it comes, so an
interrupted call resumes where it stopped."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from testaug.core.errors import ServiceError
from testaug.core.retries import RetryNotices, RetryPolicy, call_with_retries
from testaug.generation.cache import ResponseCache, cache_key
from testaug.generation.rate_limit import RateLimiter

if TYPE_CHECKING:
    from testaug.generation.backends import Backend, Completion, CompletionRequest

logger = logging.getLogger(__name__)


@dataclass
class AnswerStats:
    """What the answers cost and found: requests sent, retries, answers from the cache and
    fresh ones, and answers the caller could not read."""

    requests: int = 0
    retries: int = 0
    cached: int = 0
    fresh: int = 0
    unparsed: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


class UnansweredError(ServiceError):
    """The backend failed past its retries; `answered` of `total` answers are cached."""

    def __init__(self, cause: ServiceError, answered: int, total: int) -> None:
        super().__init__(str(cause))
        self.cause, self.answered, self.total = cause, answered, total


@dataclass(frozen=True)
class AnswerPace:
    """How the backend is asked: requests per minute (None: no limit), attempts per
    request, the first retry's delay and how many requests are in flight at once."""

    requests_per_minute: float | None = None
    attempts: int = 6
    base_delay: float = 0.5
    concurrency: int = 4


def single_answers(
    backend: Backend,
    requests: Sequence[CompletionRequest],
    cache: ResponseCache,
    pace: AnswerPace,
    stats: AnswerStats,
    *,
    what: str,
) -> list[Completion]:
    """One completion per request, in order; UnansweredError when the backend fails past
    its retries (what was answered stays cached). `what` names a request in retry notices,
    whose summary is logged as a warning."""
    from testaug.generation.backends import BackendError

    scope = str(getattr(backend, "cache_scope", ""))
    keys = [cache_key(backend.name, scope, backend.model, r, 0) for r in requests]
    found = cache.get_many(keys)
    pending = sorted({key: i for i, key in enumerate(keys) if key not in found}.values())
    limiter = RateLimiter(pace.requests_per_minute)
    policy = RetryPolicy(max_attempts=pace.attempts, base_delay=pace.base_delay)
    rng, notices = random.Random(0), RetryNotices()

    def attempt(request: CompletionRequest):
        limiter.acquire()
        with stats._lock:
            stats.requests += 1
        return backend.complete(request)

    def send(index: int) -> None:
        answer, retries = call_with_retries(
            lambda: attempt(requests[index]), policy, rng, what=what, notices=notices
        )
        if len(answer.completions) != 1:
            raise BackendError(f"{backend.name}: asked for 1 answer, got {len(answer.completions)}")
        stored = cache.put_many(backend.name, backend.model, {keys[index]: answer.completions[0]})
        found[keys[index]] = stored[keys[index]]
        with stats._lock:
            stats.retries += retries
            stats.fresh += 1

    with stats._lock:
        stats.cached += len(keys) - len(pending)
    try:
        _run_all(send, pending, pace.concurrency)
    except ServiceError as exc:
        raise UnansweredError(exc, sum(key in found for key in keys), len(keys)) from exc
    finally:
        if summary := notices.summary():
            logger.warning("%s", summary)
    return [found[key] for key in keys]


def _run_all(send: Callable[[int], None], jobs: list[int], concurrency: int) -> None:
    """`send(job)` for every job on a bounded thread pool; the first failure cancels the rest."""
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="llm-answers") as pool:
        futures = [pool.submit(send, job) for job in jobs]
        done, not_done = wait(futures, return_when=FIRST_EXCEPTION)
        failed = next((f.exception() for f in done if f.exception() is not None), None)
        for future in not_done:
            future.cancel()
        if failed is not None:
            raise failed
