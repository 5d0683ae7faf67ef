"""Generation with a scripted backend: screening, the response cache, retries, pacing."""

from __future__ import annotations

import logging
import threading

import pytest

from testaug.core.records import TestCase
from testaug.generation import rate_limit
from testaug.generation.backends import BackendError, CompletionResult, TransientBackendError
from testaug.generation.cache import ResponseCache
from testaug.generation.prompts import prompt_for
from testaug.generation.sampling import GenerationConfig, GenerationError
from testaug.generation.seeding import build_prompts
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.testing.fake_backend import ScriptedBackend
from tests.cli_runner import HANG_TIMEOUT

FAST = {"base_delay": 0.0}


@pytest.fixture
def cases(tiny_suite_path):
    return list(expand_suite(load_suite(tiny_suite_path), per_template=10, seed=0))


@pytest.fixture
def prompts(cases):
    return build_prompts(cases, prompt_for("sentiment"), per_description=2, k=2, seed=0)


def numbered(prompt: str, index: int) -> str:
    return f" Generated case {abs(hash(prompt)) % 1000} number {index}. }}\n- {{ more"


def test_replies_become_candidates_that_record_prompt_and_seeds(cases, prompts, run_generation):
    backend = ScriptedBackend(numbered)
    result = run_generation(prompts, backend, known_cases=cases, samples=3)
    assert len(result.candidates) == 3 * len(prompts) and not result.rejects
    by_prompt = {p.id: p for p in prompts}
    for candidate in result.candidates:
        prompt = by_prompt[candidate.prompt_id]
        assert candidate.seed_case_ids == prompt.seed_case_ids
        assert candidate.label == prompt.label and candidate.description_id == prompt.description_id
        assert candidate.text.startswith("Generated case") and candidate.backend == "fake"


def test_candidates_record_the_temperature_they_were_sampled_at(prompts, run_generation):
    result = run_generation(prompts, ScriptedBackend(numbered), samples=1, temperature=0.2)
    assert result.candidates and {c.temperature for c in result.candidates} == {0.2}


def test_each_kind_of_bad_reply_is_kept_with_its_reason(cases, prompts, run_generation):
    seed_text = next(c.text for c in cases if c.id == prompts[0].seed_case_ids[0])
    replies = [
        " A fine new case. ",  # good
        " a fine new case ",  # duplicate of the one before
        f" {seed_text} ",  # copy of an in-context example
        "   ",  # empty
        " one { two ",  # unbalanced
        " " + "word " * 80,  # too long
    ]
    backend = ScriptedBackend(replies)
    result = run_generation(prompts[:1], backend, known_cases=cases, samples=6)
    assert [c.text for c in result.candidates] == ["A fine new case."]
    assert [r.reason for r in result.rejects] == [
        "duplicate",
        "copy_of_example",
        "empty",
        "unbalanced",
        "too_long",
    ]
    assert all(r.prompt_id == prompts[0].id and r.reply for r in result.rejects[1:])


def test_a_case_already_in_the_suite_is_a_duplicate(cases, prompts, run_generation):
    other = next(c.text for c in cases if c.id not in prompts[0].seed_case_ids)
    result = run_generation(
        prompts[:1], ScriptedBackend([f" {other} "]), known_cases=cases, samples=1
    )
    assert result.rejects[0].reason == "duplicate" and "suite" in result.rejects[0].detail


def test_second_run_on_the_same_cache_sends_nothing_and_gives_the_same_candidates(
    tmp_path, cases, prompts, run_generation
):
    cache_path = tmp_path / "cache.sqlite"
    backend = ScriptedBackend(numbered)
    settings = GenerationConfig(samples=2)
    first = run_generation(prompts, backend, cache=ResponseCache(cache_path), settings=settings)
    sent = len(backend.requests)
    again = ScriptedBackend(lambda p, i: " something else entirely ")
    second = run_generation(prompts, again, cache=ResponseCache(cache_path), settings=settings)
    assert sent == len(prompts) and again.requests == []
    assert second.candidates == first.candidates
    assert second.stats.cached_samples == 2 * len(prompts) and second.stats.requests == 0


def test_more_samples_later_asks_only_for_the_missing_ones(tmp_path, prompts, run_generation):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    backend = ScriptedBackend(numbered)
    run_generation(prompts[:1], backend, cache=cache, samples=2)
    run_generation(prompts[:1], backend, cache=cache, samples=5)
    assert [(r.n, r.sample_offset) for r in backend.requests] == [(2, 0), (3, 2)]


class Flaky(ScriptedBackend):
    """Fails the first `failures` requests with a transient fault."""

    def __init__(self, failures: int, retry_after: float | None = None) -> None:
        super().__init__(numbered)
        self.failures = failures
        self.retry_after = retry_after
        self.calls = 0

    def complete(self, request) -> CompletionResult:
        self.calls += 1
        if self.calls <= self.failures:
            raise TransientBackendError("HTTP 429", retry_after=self.retry_after)
        return super().complete(request)


def retry_waits(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The waits the retries announced ("0.15 s"), in order."""
    return [
        record.getMessage().rpartition("retrying in ")[2]
        for record in caplog.records
        if "retrying in" in record.getMessage()
    ]


def test_transient_faults_are_retried_honouring_retry_after(prompts, run_generation, caplog):
    backend = Flaky(failures=2, retry_after=0.15)
    with caplog.at_level(logging.DEBUG, logger="testaug"):
        result = run_generation(prompts[:1], backend, samples=1, **FAST)
    assert len(result.candidates) == 1 and result.stats.retries == 2
    assert backend.calls == 3
    assert retry_waits(caplog) == ["0.15 s", "0.15 s"]  # not the backoff of FAST (0 s)


def test_faults_that_do_not_stop_give_a_clear_error_after_the_last_attempt(prompts, run_generation):
    backend = Flaky(failures=100)
    with pytest.raises(GenerationError, match="failed 3 times; last error: HTTP 429"):
        run_generation(prompts[:1], backend, samples=1, max_attempts=3, **FAST)
    assert backend.calls == 3


def test_a_permanent_fault_is_not_retried(prompts, run_generation):
    class Refusing(ScriptedBackend):
        def complete(self, request):
            self.requests.append(request)
            raise BackendError("HTTP 401: bad key")

    backend = Refusing([])
    with pytest.raises(GenerationError, match="401"):
        run_generation(prompts[:1], backend)
    assert len(backend.requests) == 1


def test_answers_before_a_failure_stay_cached(tmp_path, prompts, run_generation):
    cache = ResponseCache(tmp_path / "c.sqlite")

    class DiesOnThird(ScriptedBackend):
        def complete(self, request):
            if len(self.requests) == 2:
                raise BackendError("server gone")
            return super().complete(request)

    with pytest.raises(GenerationError, match="run again to resume"):
        run_generation(prompts, DiesOnThird(numbered), cache=cache, samples=1, concurrency=1)
    assert len(cache) == 2
    resumed = ScriptedBackend(numbered)
    run_generation(prompts, resumed, cache=cache, samples=1)
    assert len(resumed.requests) == len(prompts) - 2


class Overlapping(ScriptedBackend):
    """Holds each request until another one is in flight too (or no more will come), and
    records the most in flight at once."""

    def __init__(self, total: int) -> None:
        super().__init__(numbered)
        self.total = total
        self.started = self.in_flight = self.peak = 0
        self.changed = threading.Condition()

    def complete(self, request) -> CompletionResult:
        with self.changed:
            self.started += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.changed.notify_all()
            paired = self.changed.wait_for(
                lambda: self.in_flight >= 2 or self.started == self.total, HANG_TIMEOUT
            )
            self.in_flight -= 1
        assert paired, "no second request came while one was in flight"
        return super().complete(request)


def test_concurrency_never_exceeds_its_bound(prompts, run_generation):
    backend = Overlapping(total=len(prompts))
    result = run_generation(prompts, backend, samples=1, concurrency=2)
    assert len(result.candidates) == len(prompts)
    assert backend.peak == 2


class FrozenClock:
    """A clock that never moves on its own: `sleep` records the wait and returns at once."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return 1000.0

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


def test_rate_limit_spaces_requests(prompts, run_generation, monkeypatch):
    clock = FrozenClock()
    monkeypatch.setattr(rate_limit, "time", clock)
    backend = Flaky(failures=0)
    run_generation(prompts[:4], backend, samples=1, requests_per_minute=600, concurrency=4)
    # 600 a minute: the first goes at once, each next one 0.1 s after the one before.
    assert backend.calls == 4
    assert sorted(clock.sleeps) == pytest.approx([0.1, 0.2, 0.3])


def test_a_pair_of_two_identical_sentences_is_a_duplicate(run_generation):
    seed = TestCase(
        task="paraphrase",
        capability="Vocabulary",
        description_id="d",
        description="Synonyms.",
        text="Is it big?",
        text_pair="Is it large?",
        label="duplicate",
    )
    prompts = build_prompts([seed], prompt_for("paraphrase"), per_description=1)
    backend = ScriptedBackend(
        [" Is it red? }\n- { is it red ", " Is it red? }\n- { Is it crimson? "]
    )
    result = run_generation(prompts, backend, task="paraphrase", samples=2)
    assert [r.detail for r in result.rejects] == ["the two sentences of the pair are the same"]
    assert [c.text_pair for c in result.candidates] == ["Is it crimson?"]


def test_caches_opened_at_once_on_a_new_file_all_open(tmp_path):
    """Concurrent generation tasks open one new response cache together (a lock race once)."""
    errors: list[Exception] = []
    for trial in range(20):
        path = tmp_path / f"{trial}.sqlite"

        def open_cache(path=path) -> None:
            try:
                ResponseCache(path).close()
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_cache) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []


class Paired(ScriptedBackend):
    """Waits at a shared barrier before answering, so two runs both miss the cache."""

    def __init__(self, script, barrier: threading.Barrier) -> None:
        super().__init__(script)
        self._barrier = barrier

    def complete(self, request):
        self._barrier.wait(timeout=HANG_TIMEOUT)
        return super().complete(request)


def test_concurrent_runs_whose_replies_differ_end_with_the_first_stored_candidates(
    tmp_path, prompts, run_generation
):
    cache_path = tmp_path / "cache.sqlite"
    barrier = threading.Barrier(2)
    results = {}

    def run(word: str) -> None:
        backend = Paired(lambda p, i: f" {word} case {abs(hash(p)) % 1000} number {i}. }}", barrier)
        results[word] = run_generation(
            prompts[:3], backend, cache=ResponseCache(cache_path), samples=2, concurrency=1
        )

    threads = [threading.Thread(target=run, args=(word,)) for word in ("alpha", "beta")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    replay = run_generation(
        prompts[:3], ScriptedBackend([" unused "]), cache=ResponseCache(cache_path), samples=2
    )
    assert replay.stats.requests == 0
    assert results["alpha"].candidates == results["beta"].candidates == replay.candidates
