"""The openai backend through the real openai client against our server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator

import pytest

from testaug.generation.backends import BackendError, CompletionRequest, TransientBackendError
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.generation.cache import ResponseCache
from testaug.generation.prompts import prompt_for
from testaug.generation.sampling import GenerationConfig, GenerationError
from testaug.generation.seeding import build_prompts
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.testing.openai_server import ScriptedOpenAIServer

FAST = {"base_delay": 0.01}


def sentiment_reply(prompt: str, index: int) -> str:
    """A continuation of an open `- {`: a new sentence, its closing bracket, then more list."""
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    if index == 3:
        return " }\n- { "  # empty brackets
    if index == 4:
        return " and on" * 60  # cut off by max_tokens before any closing bracket
    return f" The crew on flight {tag} was great, case {index}. }}\n- {{ Another"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(sentiment_reply) as running:
        yield running


@pytest.fixture
def cases(tiny_suite_path):
    return list(expand_suite(load_suite(tiny_suite_path), per_template=10, seed=0))


@pytest.fixture
def prompts(cases):
    return build_prompts(cases, prompt_for("sentiment"), per_description=2, seed=0)


def backend_for(server: ScriptedOpenAIServer, **kwargs) -> OpenAIBackend:
    return OpenAIBackend(
        model="scripted", api_key="sk-test-secret", base_url=server.base_url, **kwargs
    )


def test_completions_are_parsed_into_candidates_and_rejects(server, cases, prompts, run_generation):
    result = run_generation(prompts, backend_for(server), known_cases=cases, samples=5)
    assert len(result.candidates) == 3 * len(prompts)
    assert all(c.text.startswith("The crew on flight") for c in result.candidates)
    reasons = sorted({r.reason for r in result.rejects})
    assert reasons == ["empty", "unbalanced"]
    assert server.request_count == len(prompts)  # one request per prompt, n=5
    assert result.stats.completion_tokens > 0 and result.stats.prompt_tokens > 0


def test_stop_sequence_and_n_reach_the_server(server, prompts, run_generation):
    run_generation(prompts[:1], backend_for(server), samples=4)
    body = server.requests[0].body
    assert body["n"] == 4 and body["stop"] == ["}"] and body["prompt"] == prompts[0].text


def test_a_second_run_makes_zero_requests(server, tmp_path, cases, prompts, run_generation):
    cache_path = tmp_path / "responses.sqlite"
    settings = GenerationConfig(samples=3)
    first = run_generation(
        prompts,
        backend_for(server),
        cache=ResponseCache(cache_path),
        known_cases=cases,
        settings=settings,
    )
    sent = server.request_count
    second = run_generation(
        prompts,
        backend_for(server),
        cache=ResponseCache(cache_path),
        known_cases=cases,
        settings=settings,
    )
    assert sent == len(prompts) and server.request_count == sent
    assert second.candidates == first.candidates and second.rejects == first.rejects


def test_429_with_retry_after_is_retried_and_then_succeeds(server, prompts, run_generation, caplog):
    server.fail_next(2, 429, retry_after=0.1)
    with caplog.at_level(logging.DEBUG, logger="testaug"):
        result = run_generation(prompts[:1], backend_for(server), samples=1, **FAST)
    assert len(result.candidates) == 1 and result.stats.retries == 2
    assert [r.status for r in server.requests] == [429, 429, 200]
    # Each wait is the server's Retry-After, not the far shorter backoff (FAST).
    waits = [
        record.getMessage().rpartition("retrying in ")[2]
        for record in caplog.records
        if "retrying in" in record.getMessage()
    ]
    assert waits == ["0.10 s", "0.10 s"]


def test_500_is_retried(server, prompts, run_generation):
    server.fail_next(1, 500)
    result = run_generation(prompts[:1], backend_for(server), samples=1, **FAST)
    assert result.stats.retries == 1 and server.request_count == 2


def test_a_slow_server_times_out_and_is_retried(server, prompts, run_generation):
    server.slow_next(1, 60.0)  # far beyond the timeout: answered in time, nothing is retried
    backend = backend_for(server, timeout=3.0)
    # A loaded machine may answer even a normal request late: more retries, not a failure.
    result = run_generation(prompts[:1], backend, samples=1, max_attempts=20, **FAST)
    assert result.stats.retries >= 1 and len(result.candidates) == 1
    assert server.request_count == result.stats.retries + 1


def test_persistent_503_ends_in_a_clear_error(server, prompts, run_generation):
    server.fail_next(10, 503)
    with pytest.raises(GenerationError, match=r"failed 3 times; last error: HTTP 503"):
        run_generation(prompts[:1], backend_for(server), samples=1, max_attempts=3, **FAST)
    assert server.request_count == 3


def test_401_is_not_retried_and_never_shows_the_key(server):
    server.fail_next(1, 401, message="Incorrect API key provided")
    with pytest.raises(BackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    assert not isinstance(caught.value, TransientBackendError)
    assert "401" in str(caught.value) and "sk-test-secret" not in str(caught.value)


def test_the_api_key_never_reaches_the_recorded_request(server):
    backend_for(server).complete(CompletionRequest(prompt="x"))
    assert "sk-test-secret" not in str(server.requests[0].headers)


def test_chat_endpoint_sends_the_prompt_as_the_user_message(prompts, run_generation):
    def chat_reply(prompt: str, index: int) -> str:
        return f"- {{ A brand new case number {index}. }}"

    with ScriptedOpenAIServer(chat_reply) as server:
        backend = backend_for(server, endpoint="chat")
        result = run_generation(prompts[:1], backend, samples=2)
        messages = server.requests[0].messages
    assert messages[-1] == {"role": "user", "content": prompts[0].text}
    assert [c.text for c in result.candidates] == [
        "A brand new case number 0.",
        "A brand new case number 1.",
    ]
    assert result.candidates[0].backend == "openai/chat"


def test_nli_label_words_become_labels_and_unknown_words_are_rejected(run_generation):
    case_fields = {
        "task": "nli",
        "capability": "Boolean",
        "description_id": "d",
        "description": "and",
    }
    from testaug.core.records import TestCase

    seeds = [
        TestCase(
            **case_fields,
            text=f"Ann has {n} cats and a dog.",
            text_pair="Ann has a dog.",
            label="entailment",
        )
        for n in range(2, 6)
    ]
    replies = {
        0: " Bo owns a car. }\n- Contradiction: { Bo has no car. ",
        1: " Bo owns a car. }\n- Maybe: { Bo drives. ",
        2: " Bo owns a car. }\n- possibility: { Bo owns a red car. ",
    }
    with ScriptedOpenAIServer(lambda p, i: replies[i]) as server:
        prompt = build_prompts(seeds, prompt_for("nli"), per_description=1)
        result = run_generation(prompt, backend_for(server), task="nli", samples=3)
    assert [(c.text_pair, c.label) for c in result.candidates] == [
        ("Bo has no car.", "contradiction"),
        ("Bo owns a red car.", "neutral"),
    ]
    assert [r.reason for r in result.rejects] == ["unknown_label"]
    assert server.requests[0].body["stop"] == ["}\n- {", "}\n\n"]


def test_a_server_that_is_down_ends_in_a_clear_error(prompts, run_generation):
    with ScriptedOpenAIServer() as server:
        url = server.base_url
    backend = OpenAIBackend(model="m", api_key="k", base_url=url, timeout=1.0)
    with pytest.raises(GenerationError, match="cannot connect"):
        run_generation(prompts[:1], backend, samples=1, max_attempts=2, **FAST)


def test_no_key_and_no_server_says_what_to_set():
    with pytest.raises(BackendError, match="OPENAI_API_KEY"):
        OpenAIBackend(model="m", api_key=None)


# Garbled answers. A 200 whose body is not JSON, or is cut short, or a connection closed
# with no answer, is a transport glitch (a proxy, a restart): transient. A 200 that is JSON
# but not a completion (choices null, choices without text) is what that server speaks:
# retrying gets the same, so permanent. Every message names the status and quotes the body.


def test_a_reply_that_is_not_json_is_transient_and_quotes_what_was_sent(server):
    server.garble_next(1, "not-json")
    with pytest.raises(TransientBackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert "HTTP 200" in message and "not JSON" in message and '{"id": ' in message


def test_a_reply_that_is_not_json_is_retried_and_then_succeeds(server, prompts, run_generation):
    server.garble_next(1, "not-json")
    result = run_generation(prompts[:1], backend_for(server), samples=1, **FAST)
    assert result.stats.retries == 1 and len(result.candidates) == 1


def test_choices_null_is_a_permanent_fault_that_shows_the_body(server):
    server.garble_next(1, "null-choices")
    with pytest.raises(BackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert not isinstance(caught.value, TransientBackendError)
    assert "HTTP 200" in message and '"choices": null' in message
    assert "NoneType" not in message


def test_choices_without_text_are_a_permanent_fault_that_names_the_field(server):
    server.garble_next(1, "missing-fields")
    with pytest.raises(BackendError) as caught:
        backend_for(server, endpoint="chat").complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert not isinstance(caught.value, TransientBackendError)
    assert "HTTP 200" in message and "message" in message and '"index": 0' in message


def test_a_body_cut_short_says_the_connection_closed_and_is_transient(server):
    server.garble_next(1, "truncated")
    with pytest.raises(TransientBackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert "closed the connection" in message and "cannot connect" not in message


def test_a_connection_closed_mid_request_says_so_and_is_retried(server, prompts, run_generation):
    server.garble_next(1, "hang-up")
    with pytest.raises(TransientBackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert "closed the connection" in message and "cannot connect" not in message
    server.garble_next(1, "hang-up")
    result = run_generation(prompts[:1], backend_for(server), samples=1, **FAST)
    assert result.stats.retries == 1 and len(result.candidates) == 1


def test_the_quoted_body_is_short_and_has_no_key():
    key = "sk-proj-abcdefghijklmnopqrstuvwx0123456789"
    with ScriptedOpenAIServer(lambda prompt, i: f"echo {key} " + "word " * 200) as server:
        server.garble_next(1, "null-choices")
        with pytest.raises(BackendError) as caught:
            backend_for(server).complete(CompletionRequest(prompt="x", max_tokens=500))
    message = str(caught.value)
    assert key not in message and "abcdefghij" not in message
    excerpt = message.split("sent: ", 1)[1]
    assert len(excerpt) <= 200


def test_an_error_status_with_a_huge_body_is_quoted_short(server):
    server.fail_next(1, 400, message="Incorrect API key provided: sk-abcdef0123456789" + "x" * 5000)
    with pytest.raises(BackendError) as caught:
        backend_for(server).complete(CompletionRequest(prompt="x"))
    message = str(caught.value)
    assert "HTTP 400" in message and "sk-abcdef0123456789" not in message
    assert len(message) < 400


def test_a_fault_that_hits_every_request_is_one_warning_and_a_summary(
    server, prompts, run_generation, caplog
):
    server.fail_next(len(prompts), 503)
    with caplog.at_level("WARNING", logger="testaug"):
        result = run_generation(prompts, backend_for(server), samples=1, concurrency=4, **FAST)
    assert result.stats.retries == len(prompts) > 2
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 2, warnings
    assert "retrying in" in warnings[0]
    assert warnings[1].startswith(f"retried after transient faults: {len(prompts)} x HTTP 503")
