"""Generation: prompts sent to a backend through the response cache, replies screened into
candidates and rejects.

Requests run concurrently (a bound on threads), under a requests-per-minute
limit, with retries of transient faults. Every sample is stored in the cache as
soon as its request returns, so a run that crashes and is started again sends
only what is missing. Replies are screened in prompt and sample order, so the
same cache gives the same candidates, whatever order the requests finished in.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from pydantic import Field

from testaug.core.errors import TestAugError
from testaug.core.records import Candidate, Label, Prompt, Record, Reject, TestCase
from testaug.core.retries import RetryNotices, RetryPolicy, call_with_retries
from testaug.generation.backends import Backend, BackendError, Completion, CompletionRequest
from testaug.generation.cache import ResponseCache, cache_key
from testaug.generation.parsing import ParseFailure, comparison_key, label_of_word, parse_reply
from testaug.generation.prompts import PromptTemplate
from testaug.generation.rate_limit import RateLimiter

logger = logging.getLogger(__name__)


KEPT_REPLY_CHARS = 2_000


def kept_reply(text: str) -> str:
    """A reply as a reject or a dropped completion keeps it: whole, or its start and its
    length when it is longer than `KEPT_REPLY_CHARS`."""
    if len(text) <= KEPT_REPLY_CHARS:
        return text
    return f"{text[:KEPT_REPLY_CHARS]}... ({len(text):,} characters in all)"


class GenerationConfig(Record):
    """Sampling and pacing of a generation run."""

    samples: int = Field(default=5, ge=1, description="completions asked per prompt")
    temperature: float = Field(default=1.0, ge=0.0)
    max_tokens: int = Field(default=48, ge=1)
    concurrency: int = Field(default=8, ge=1, description="requests in flight at once")
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_words: int = Field(default=60, ge=1, description="longer sentences are rejected")
    max_attempts: int = Field(default=6, ge=1, description="tries per request")
    base_delay: float = Field(default=0.5, ge=0.0, description="first backoff, in seconds")
    retry_seed: int = 0


class GenerationError(TestAugError):
    """Requests kept failing; what was answered before is in the cache."""


@dataclass
class GenerationStats:
    """What a run cost: requests sent, retries, samples from the cache and fresh, tokens."""

    requests: int = 0
    retries: int = 0
    cached_samples: int = 0
    fresh_samples: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def as_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "retries": self.retries,
            "cached_samples": self.cached_samples,
            "fresh_samples": self.fresh_samples,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass
class GenerationResult:
    """Candidates and rejects in prompt and sample order, and what the run cost."""

    candidates: list[Candidate]
    rejects: list[Reject]
    stats: GenerationStats


def generate(
    prompts: Sequence[Prompt],
    template: PromptTemplate,
    backend: Backend,
    cache: ResponseCache,
    settings: GenerationConfig,
    *,
    known_cases: Iterable[TestCase] = (),
    on_prompt_done: Callable[[], None] | None = None,
) -> GenerationResult:
    """Sample every prompt, then screen the replies into candidates and rejects.

    `known_cases` are the suite's cases: the seeds a prompt shows (copies of them
    are rejected) and every case a candidate must not repeat.
    """
    completions, stats = sample_prompts(
        prompts, template, backend, cache, settings, on_prompt_done=on_prompt_done
    )
    candidates, rejects = screen_replies(
        prompts,
        completions,
        template,
        backend,
        known_cases,
        max_words=settings.max_words,
        temperature=settings.temperature,
    )
    return GenerationResult(candidates, rejects, stats)


def request_for(
    prompt: Prompt, template: PromptTemplate, settings: GenerationConfig
) -> CompletionRequest:
    """The request that asks for all of a prompt's samples."""
    return CompletionRequest(
        prompt=prompt.text,
        n=settings.samples,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        stop=template.format.stop,
    )


def sample_prompts(
    prompts: Sequence[Prompt],
    template: PromptTemplate,
    backend: Backend,
    cache: ResponseCache,
    settings: GenerationConfig,
    *,
    on_prompt_done: Callable[[], None] | None = None,
) -> tuple[dict[str, list[Completion]], GenerationStats]:
    """Each prompt's `settings.samples` completions, from the cache or from the backend."""
    scope = str(getattr(backend, "cache_scope", ""))
    stats = GenerationStats()
    results: dict[str, list[Completion]] = {}
    pending: list[tuple[Prompt, CompletionRequest, list[str], list[int]]] = []
    planned = []
    for prompt in prompts:
        request = request_for(prompt, template, settings)
        keys = [cache_key(backend.name, scope, backend.model, request, i) for i in range(request.n)]
        planned.append((prompt, request, keys))
    cached = cache.get_many(key for _, _, keys in planned for key in keys)
    stats.cached_samples = len(cached)
    for prompt, request, keys in planned:
        results[prompt.id] = [cached.get(key) for key in keys]  # type: ignore[misc]
        missing = [i for i, key in enumerate(keys) if key not in cached]
        if missing:
            pending.append((prompt, request, keys, missing))
        elif on_prompt_done:
            on_prompt_done()

    limiter = RateLimiter(settings.requests_per_minute)
    policy = RetryPolicy(max_attempts=settings.max_attempts, base_delay=settings.base_delay)
    rng = random.Random(settings.retry_seed)
    notices = RetryNotices()

    def send(prompt: Prompt, request: CompletionRequest, keys: list[str], missing: list[int]):
        ask = request.model_copy(update={"n": len(missing), "sample_offset": missing[0]})

        def attempt():
            limiter.acquire()
            with stats._lock:
                stats.requests += 1
            return backend.complete(ask)

        answer, retries = call_with_retries(
            attempt,
            policy,
            rng,
            what=f"{backend.name} request for prompt {prompt.id}",
            notices=notices,
        )
        if len(answer.completions) != len(missing):
            raise BackendError(
                f"{backend.name}: asked for {len(missing)} samples, got {len(answer.completions)}"
            )
        fresh = dict(zip((keys[i] for i in missing), answer.completions, strict=True))
        # What is stored wins: a concurrent run may have stored its own answer first.
        stored = cache.put_many(backend.name, backend.model, fresh)
        for i in missing:
            results[prompt.id][i] = stored[keys[i]]
        with stats._lock:
            stats.retries += retries
            stats.fresh_samples += len(missing)
            stats.prompt_tokens += answer.usage.prompt_tokens
            stats.completion_tokens += answer.usage.completion_tokens
        if on_prompt_done:
            on_prompt_done()

    if pending:
        try:
            _run_concurrently(send, pending, settings.concurrency)
        finally:
            if summary := notices.summary():
                logger.warning("%s", summary)
    return results, stats


def _run_concurrently(send: Callable, jobs: list[tuple], concurrency: int) -> None:
    """Run `send(*job)` for every job on a bounded thread pool; the first failure stops the rest."""
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="generate") as pool:
        futures = [pool.submit(send, *job) for job in jobs]
        done, not_done = wait(futures, return_when=FIRST_EXCEPTION)
        failed = [f for f in done if f.exception() is not None]
        if failed:
            for future in not_done:
                future.cancel()
            wait(not_done)
            exc = failed[0].exception()
            finished = sum(
                1 for f in futures if f.done() and not f.cancelled() and f.exception() is None
            )
            raise GenerationError(
                f"{exc} ({finished} of {len(jobs)} requests finished and are cached; "
                "run again to resume)"
            ) from exc


def screen_replies(
    prompts: Sequence[Prompt],
    completions: dict[str, list[Completion]],
    template: PromptTemplate,
    backend: Backend,
    known_cases: Iterable[TestCase],
    *,
    max_words: int = 60,
    temperature: float | None = None,
) -> tuple[list[Candidate], list[Reject]]:
    """Parse each reply and keep it as a candidate (with the sampling temperature behind
    it), or as a reject with its reason."""
    known = {case.id: comparison_key(case.text, case.text_pair) for case in known_cases}
    suite_keys = set(known.values())
    seen: set[tuple[str, str | None]] = set()
    candidates: list[Candidate] = []
    rejects: list[Reject] = []
    for prompt in prompts:
        seed_keys = {known[i] for i in prompt.seed_case_ids if i in known}
        for index, completion in enumerate(completions[prompt.id]):
            verdict = _screen(
                prompt, completion, template, backend, seed_keys, suite_keys, seen, max_words
            )
            common = {
                "task": prompt.task,
                "capability": prompt.capability,
                "description_id": prompt.description_id,
                "prompt_id": prompt.id,
                "seed_case_ids": prompt.seed_case_ids,
                "backend": backend.name,
                "model": backend.model,
                "sample_index": index,
            }
            if isinstance(verdict, _Rejection):
                rejects.append(
                    Reject(
                        **common,
                        reply=kept_reply(completion.text),
                        reason=verdict.reason,
                        detail=verdict.detail,
                        text=verdict.text,
                        text_pair=verdict.text_pair,
                    )
                )
                continue
            text, text_pair, label = verdict
            seen.add(comparison_key(text, text_pair))
            candidates.append(
                Candidate(
                    **common,
                    description=prompt.description,
                    text=text,
                    text_pair=text_pair,
                    label=label,
                    test_type=prompt.test_type,
                    temperature=temperature,
                )
            )
    return candidates, rejects


@dataclass(frozen=True)
class _Rejection:
    reason: str
    detail: str
    text: str | None = None
    text_pair: str | None = None


def _screen(
    prompt: Prompt,
    completion: Completion,
    template: PromptTemplate,
    backend: Backend,
    seed_keys: set,
    suite_keys: set,
    seen: set,
    max_words: int,
) -> tuple[str, str | None, Label] | _Rejection:
    """One reply as (text, text pair, label), or why it cannot be a candidate."""
    parsed = parse_reply(
        completion.text,
        template.format,
        continuation=backend.continues_prompt,
        stopped=completion.finish_reason != "length",
    )
    if isinstance(parsed, ParseFailure):
        return _Rejection(parsed.reason, parsed.detail)
    text, text_pair = parsed.text, parsed.text_pair
    label: Label | None = prompt.label
    if parsed.label_word is not None:
        label = label_of_word(parsed.label_word, template.label_words)
        if label is None:
            words = ", ".join(template.label_words.values())
            detail = f"unknown label word {parsed.label_word!r} (expected {words})"
            return _Rejection("unknown_label", detail, text, text_pair)
    longest = max(len(text.split()), len((text_pair or "").split()))
    if longest > max_words:
        return _Rejection("too_long", f"{longest} words (at most {max_words})", text, text_pair)
    key = comparison_key(text, text_pair)
    if text_pair is not None and key[0] == key[1]:
        return _Rejection(
            "duplicate", "the two sentences of the pair are the same", text, text_pair
        )
    if key in seed_keys:
        return _Rejection("copy_of_example", "repeats a seed case of its prompt", text, text_pair)
    if key in seen:
        return _Rejection("duplicate", "repeats an earlier candidate", text, text_pair)
    if key in suite_keys:
        return _Rejection("duplicate", "repeats a case of the suite", text, text_pair)
    return text, text_pair, label
