"""Replies from an OpenAI-compatible server are capped in size and in time: a server that
ignores max_tokens, or trickles its answer, ends in an error naming why, and nothing of
the reply is stored whole."""

from __future__ import annotations

import pytest

from testaug.generation.backends import (
    BackendError,
    Completion,
    CompletionRequest,
    TransientBackendError,
)
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.generation.cache import MAX_COMPLETION_CHARS, ResponseCache
from testaug.generation.parsing import FORMATS
from testaug.generation.prompts import PromptTemplate
from testaug.generation.sampling import GenerationConfig, GenerationError, sample_prompts
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import HANG_TIMEOUT

HUGE = 300_000  # characters of one reply, one "token" (the server cuts at whitespace)


def huge_reply(prompt: str, index: int) -> str:
    return "spam" + "x" * HUGE


def backend_for(server: ScriptedOpenAIServer, **kwargs) -> OpenAIBackend:
    return OpenAIBackend(model="scripted", api_key="sk-test", base_url=server.base_url, **kwargs)


def test_a_reply_over_the_cap_is_an_error_quoting_its_start():
    with ScriptedOpenAIServer(huge_reply) as server:
        backend = backend_for(server, max_reply_bytes=64_000)
        with pytest.raises(BackendError) as caught:
            backend.complete(CompletionRequest(prompt="- {", n=2, max_tokens=5))
    message = str(caught.value)
    assert "64,000 bytes" in message and "max_tokens" in message and "spam" in message
    assert len(message) < 1000
    assert not isinstance(caught.value, TransientBackendError)  # a retry gets the same


def test_a_reply_under_the_cap_is_read_whole():
    with ScriptedOpenAIServer(huge_reply) as server:
        backend = backend_for(server, max_reply_bytes=4 * HUGE)
        result = backend.complete(CompletionRequest(prompt="- {", n=2, max_tokens=5))
    assert [len(c.text) for c in result.completions] == [HUGE + 4, HUGE + 4]


def test_generation_fails_on_an_oversized_reply_and_caches_nothing(tmp_path):
    from testaug.core.records import Prompt

    prompt = Prompt(
        id="p1",
        template="t",
        template_sha="s",
        task="sentiment",
        capability="c",
        description_id="d",
        description="d",
        label="positive",
        seed_case_ids=(),
        text="- {",
    )
    template = PromptTemplate(
        name="t", task="", purpose="generate", format=FORMATS["single"], variables={}, template=""
    )
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with ScriptedOpenAIServer(huge_reply) as server:
        backend = backend_for(server, max_reply_bytes=64_000)
        with pytest.raises(GenerationError, match="cap"):
            sample_prompts([prompt], template, backend, cache, GenerationConfig(samples=2))
    assert len(cache) == 0
    cache.close()
    assert (tmp_path / "cache.sqlite").stat().st_size < 1_000_000


def test_the_cache_never_stores_a_completion_whole_past_its_cap():
    cache = ResponseCache(None)
    long = Completion(text="y" * (MAX_COMPLETION_CHARS + 5000), finish_reason="stop")
    stored = cache.put_many("b", "m", {"k": long, "short": Completion(text="fine")})
    assert len(stored["k"].text) == MAX_COMPLETION_CHARS
    assert stored["k"].finish_reason == "length"  # read as cut off, like max_tokens
    assert cache.get_many(["short"])["short"].text == "fine"


def test_a_trickling_answer_times_out_as_a_whole_request():
    with ScriptedOpenAIServer(lambda prompt, i: "ok " * 50) as server:
        server.trickle_next(1, chunk=4, interval=0.05)  # about 900 bytes: 11 s in all
        backend = backend_for(server, timeout=2.0)  # never a 2 s pause between two pieces
        with pytest.raises(TransientBackendError, match="timed out") as caught:
            backend.complete(CompletionRequest(prompt="- {", n=4, max_tokens=50))
        assert "whole request" in str(caught.value)
        # The next request is answered in full: the deadline is per request.
        result = backend.complete(CompletionRequest(prompt="- {", n=1, max_tokens=50))
    assert result.completions[0].text.startswith("ok")


def test_the_trickle_option_sends_the_whole_answer_slowly():
    with ScriptedOpenAIServer(lambda prompt, i: "fine") as server:
        server.trickle_next(1, chunk=64, interval=0.01)
        backend = backend_for(server, timeout=HANG_TIMEOUT)
        result = backend.complete(CompletionRequest(prompt="- {", n=1, max_tokens=5))
    assert result.completions[0].text == "fine"


def test_a_long_reply_is_kept_as_its_start_and_length():
    from testaug.generation.sampling import KEPT_REPLY_CHARS, kept_reply

    assert kept_reply("short") == "short"
    kept = kept_reply("z" * 50_000)
    assert kept.startswith("z" * KEPT_REPLY_CHARS) and "50,000 characters" in kept
    assert len(kept) < KEPT_REPLY_CHARS + 100
