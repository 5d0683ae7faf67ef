"""ScriptedOpenAIServer, exercised through the real openai client: scripting, limits, faults."""

from __future__ import annotations

import concurrent.futures
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from testaug.testing.openai_server import ScriptedOpenAIServer, apply_limits, default_reply
from tests.cli_runner import HANG_TIMEOUT


def script(prompt: str, index: int) -> str:
    return f"reply {index} to {prompt} END trailing words here"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(script) as running:
        yield running


def make_client(server: ScriptedOpenAIServer, timeout: float = HANG_TIMEOUT) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url, api_key="test-key", max_retries=0, timeout=timeout
    )


@pytest.fixture
def client(server: ScriptedOpenAIServer) -> Iterator[openai.OpenAI]:
    with make_client(server) as c:
        yield c


def complete(client: openai.OpenAI, prompt: str = "p", **kwargs: object) -> openai.types.Completion:
    return client.completions.create(model="scripted", prompt=prompt, **kwargs)  # type: ignore[call-overload]


def test_base_url_names_the_bound_port_under_v1(server: ScriptedOpenAIServer) -> None:
    assert server.port > 0
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"


def test_completions_with_n_give_choices_in_order_with_scripted_texts(
    client: openai.OpenAI,
) -> None:
    result = complete(client, "hi", n=3)
    assert result.object == "text_completion"
    assert [c.index for c in result.choices] == [0, 1, 2]
    assert [c.text for c in result.choices] == [script("hi", i) for i in range(3)]
    assert all(c.finish_reason == "stop" for c in result.choices)


def test_paths_without_v1_prefix_are_served(server: ScriptedOpenAIServer) -> None:
    with openai.OpenAI(
        base_url=f"http://127.0.0.1:{server.port}", api_key="k", max_retries=0, timeout=HANG_TIMEOUT
    ) as bare:
        assert complete(bare, "x").choices[0].text == script("x", 0)
        chat = bare.chat.completions.create(model="m", messages=[{"role": "user", "content": "y"}])
        assert chat.choices[0].message.content == script("y", 0)
    assert [r.path for r in server.requests] == ["/completions", "/chat/completions"]


def test_stop_sequences_cut_text_at_earliest_occurrence(client: openai.OpenAI) -> None:
    assert complete(client, "a", stop=" END").choices[0].text == "reply 0 to a"
    choice = complete(client, "a", stop=["words", " to "]).choices[0]
    assert choice.text == "reply 0"
    assert choice.finish_reason == "stop"


def test_max_tokens_cuts_to_words_with_finish_reason_length(client: openai.OpenAI) -> None:
    choice = complete(client, "a", max_tokens=3).choices[0]
    assert (choice.text, choice.finish_reason) == ("reply 0 to", "length")
    # The stop sequence comes first: nothing left to cut, so the finish reason is "stop".
    choice = complete(client, "a", max_tokens=5, stop=" END").choices[0]
    assert (choice.text, choice.finish_reason) == ("reply 0 to a", "stop")


def test_chat_endpoint_gets_last_user_message_as_prompt(
    server: ScriptedOpenAIServer, client: openai.OpenAI
) -> None:
    messages = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "second question"},
    ]
    result = client.chat.completions.create(model="m", messages=messages, n=2)  # type: ignore[arg-type]
    assert result.object == "chat.completion"
    assert [c.message.role for c in result.choices] == ["assistant", "assistant"]
    assert [c.message.content for c in result.choices] == [
        script("second question", 0),
        script("second question", 1),
    ]
    record = server.requests[-1]
    assert record.prompts == ("second question",)
    assert record.messages == messages


def test_usage_reports_whitespace_word_counts(client: openai.OpenAI) -> None:
    result = complete(client, "two words", n=2, max_tokens=4)
    assert result.usage is not None
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (2, 8)
    assert result.usage.total_tokens == 10
    chat = client.chat.completions.create(
        model="m",
        messages=[{"role": "system", "content": "a b c"}, {"role": "user", "content": "d e"}],
        stop=" to ",
    )
    assert chat.usage is not None
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (5, 2)


def test_rate_limit_raises_twice_with_retry_after_then_succeeds(
    server: ScriptedOpenAIServer, client: openai.OpenAI
) -> None:
    server.fail_next(2, 429, retry_after=0.2)
    for _ in range(2):
        with pytest.raises(openai.RateLimitError) as caught:
            complete(client)
        exc = caught.value
        assert exc.status_code == 429
        assert exc.response.headers["retry-after"] == "0.2"
        assert exc.code == "rate_limit_exceeded"
        assert isinstance(exc.body, dict) and exc.body["type"] == "requests"
    assert complete(client).choices[0].text == script("p", 0)
    assert [r.status for r in server.requests] == [429, 429, 200]


def test_server_error_raises_internal_server_error_without_retry_after(
    server: ScriptedOpenAIServer, client: openai.OpenAI
) -> None:
    server.fail_next(1, 500)
    server.fail_next(1, 503, message="overloaded")
    with pytest.raises(openai.InternalServerError) as caught:
        complete(client)
    assert caught.value.status_code == 500
    assert "retry-after" not in caught.value.response.headers
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == 503
    assert caught.value.body == {
        "message": "overloaded",
        "type": "server_error",
        "param": None,
        "code": "service_unavailable",
    }
    assert complete(client).choices


def test_client_retries_honour_retry_after(server: ScriptedOpenAIServer) -> None:
    server.fail_next(2, 429, retry_after=0.05)
    with openai.OpenAI(
        base_url=server.base_url, api_key="k", max_retries=2, timeout=HANG_TIMEOUT
    ) as c:
        assert complete(c).choices
    assert [r.headers["x-stainless-retry-count"] for r in server.requests] == ["0", "1", "2"]


def test_slow_next_triggers_client_timeout_then_serves_normally(
    server: ScriptedOpenAIServer,
) -> None:
    server.slow_next(1, 30.0)
    with make_client(server, timeout=0.5) as c, pytest.raises(openai.APITimeoutError):
        complete(c)  # raised by the client's timeout, long before the 30 s answer
    with make_client(server) as c:
        assert complete(c).choices[0].text == script("p", 0)


def test_latency_delays_every_answer(
    server: ScriptedOpenAIServer, client: openai.OpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    waits: list[float] = []
    wait = server.wait
    monkeypatch.setattr(server, "wait", lambda seconds: waits.append(seconds) or wait(seconds))
    complete(client)
    server.latency = 0.15
    complete(client)
    server.slow_next(1, 0.1)
    complete(client)
    complete(client)
    assert waits == pytest.approx([0.0, 0.15, 0.25, 0.15])


def test_request_count_counts_every_request_and_reset_clears(
    server: ScriptedOpenAIServer, client: openai.OpenAI
) -> None:
    complete(client)
    server.fail_next(1, 429)
    with pytest.raises(openai.RateLimitError):
        complete(client)
    with pytest.raises(openai.BadRequestError):
        complete(client, n=0)
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="m", input="x")
    server.slow_next(1, 2.0)
    with make_client(server, timeout=0.2) as impatient, pytest.raises(openai.APITimeoutError):
        complete(impatient)
    assert server.request_count == 5
    assert [r.status for r in server.requests] == [200, 429, 400, 404, 200]

    server.fail_next(3, 500)
    server.reset()
    assert server.request_count == 0
    assert complete(client).choices  # the pending faults were dropped too
    assert server.request_count == 1


def test_authorization_header_is_masked_in_records(
    server: ScriptedOpenAIServer, client: openai.OpenAI
) -> None:
    complete(client)
    (record,) = server.requests
    assert record.headers["authorization"] == "Bearer ***"
    assert "test-key" not in repr(server.requests)
    assert record.body == {"model": "scripted", "prompt": "p"}


def test_sixteen_concurrent_clients_are_served_in_parallel() -> None:
    # Every reply waits until all sixteen requests are being answered at once: served one
    # at a time, the first would wait in vain and the barrier break (a 500).
    everyone = threading.Barrier(16, timeout=HANG_TIMEOUT)

    def together(prompt: str, index: int) -> str:
        everyone.wait()
        return default_reply(prompt, index)

    with (
        ScriptedOpenAIServer(together) as server,
        make_client(server) as c,
        concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool,
    ):
        results = list(pool.map(lambda i: complete(c, f"prompt {i}"), range(16)))
    assert [r.choices[0].text for r in results] == [
        default_reply(f"prompt {i}", 0) for i in range(16)
    ]
    assert server.request_count == 16
    assert not everyone.broken


def test_default_reply_is_deterministic_per_prompt_and_index() -> None:
    assert default_reply("a", 0) == default_reply("a", 0)
    assert len({default_reply("a", 0), default_reply("a", 1), default_reply("b", 0)}) == 3


def test_stopped_server_refuses_connections(server: ScriptedOpenAIServer) -> None:
    with make_client(server) as c:
        assert complete(c).choices  # leaves a pooled keep-alive connection behind
        server.stop()
        with pytest.raises(openai.APIConnectionError):
            complete(c)
    server.stop()  # idempotent
    with pytest.raises(RuntimeError):
        server.start()


def test_broken_reply_script_answers_500() -> None:
    def broken(prompt: str, index: int) -> str:
        raise ValueError("no reply")

    with ScriptedOpenAIServer(broken) as s, make_client(s) as c:
        with pytest.raises(openai.InternalServerError, match="no reply"):
            complete(c)
        assert s.requests[0].status == 500


@given(
    text=st.text(alphabet="ab \n", max_size=30),
    stop=st.lists(st.text(alphabet="ab ", min_size=1, max_size=3), max_size=3),
    max_tokens=st.none() | st.integers(min_value=0, max_value=6),
)
def test_apply_limits_returns_a_stop_free_prefix_within_the_word_limit(
    text: str, stop: list[str], max_tokens: int | None
) -> None:
    cut, finish = apply_limits(text, stop, max_tokens)
    assert text.startswith(cut)
    assert not any(s in cut for s in stop)
    if max_tokens is not None:
        assert len(cut.split()) <= max_tokens
    stopped, _ = apply_limits(text, stop)
    too_long = max_tokens is not None and len(stopped.split()) > max_tokens
    assert finish == ("length" if too_long else "stop")


def test_module_runs_as_a_script_printing_base_url_until_interrupted() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "testaug.testing.openai_server", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as in a terminal, also where the test runs with SIGINT ignored (a job
        # started in the background of a script), which the child would inherit.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with openai.OpenAI(
            base_url=base_url, api_key="k", max_retries=0, timeout=HANG_TIMEOUT
        ) as c:
            assert complete(c, "hello").choices[0].text == default_reply("hello", 0)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=HANG_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    assert stdout == ""  # the base URL was printed once, and nothing else
    assert stderr == ""  # quiet: no per-request log lines


def test_garble_next_sends_invalid_json_then_serves_normally(
    server: ScriptedOpenAIServer,
) -> None:
    server.garble_next(1, "not-json")
    first = httpx_post(server, "/completions")
    assert first.status_code == 200
    with pytest.raises(ValueError):
        first.json()
    assert httpx_post(server, "/completions").json()["choices"]


def test_garble_next_null_choices_and_missing_fields_keep_valid_json(
    server: ScriptedOpenAIServer,
) -> None:
    server.garble_next(1, "null-choices")
    server.garble_next(1, "missing-fields")
    assert httpx_post(server, "/completions").json()["choices"] is None
    assert httpx_post(server, "/completions").json()["choices"] == [{"index": 0}]


def test_garble_next_truncated_and_hang_up_close_the_connection(
    server: ScriptedOpenAIServer,
) -> None:
    import httpx

    server.garble_next(1, "truncated")
    server.garble_next(1, "hang-up")
    with pytest.raises(httpx.RemoteProtocolError, match="complete message body"):
        httpx_post(server, "/completions")
    with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
        httpx_post(server, "/completions")
    assert httpx_post(server, "/completions").status_code == 200


def test_garble_next_refuses_an_unknown_kind(server: ScriptedOpenAIServer) -> None:
    with pytest.raises(ValueError, match="unknown garble"):
        server.garble_next(1, "gibberish")


def httpx_post(server: ScriptedOpenAIServer, path: str):
    """One POST of a small completion request on a fresh connection."""
    import httpx

    body = {"model": "m", "prompt": "hello", "max_tokens": 5}
    return httpx.post(server.base_url + path, json=body, timeout=HANG_TIMEOUT)
