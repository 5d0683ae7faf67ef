"""Redaction of credentials in URLs and texts, and a URL's user info split off and put back."""

from __future__ import annotations

import pytest

from testaug.core.secrets import (
    mask_credentials,
    redact_text,
    redact_url,
    remember_credentials,
    remember_url_credentials,
    split_userinfo,
    with_userinfo,
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Incorrect API key provided: Bearer sk-proj-abcdef123456", "sk-proj-abcdef123456"),
        ("Incorrect API key provided: sk-abcdef1234567890.", "abcdef1234567890"),
        ("Authorization: Bearer t0ken-value", "t0ken-value"),
        ("Authorization: Basic YWxpY2U6czNjcmV0", "YWxpY2U6czNjcmV0"),
        ("cannot connect to http://alice:s3cret@host:8000/v1", "alice:s3cret"),
        ("GET /v1?api_key=abc123&x=1", "abc123"),
        ('{"access_token": "zz9-value"}', "zz9-value"),
        ("token=0123456789abcdef0123456789abcdef01", "0123456789abcdef0123456789abcdef01"),
        ("a key 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 here", "9f86d0"),
        ("base64 dGhpcyBpcyBhIHNlY3JldCB2YWx1ZSBvZiBrZXkx== end", "dGhpcyBpcyBhIHNlY3JldCB2"),
    ],
)
def test_key_shaped_strings_are_blanked_in_texts(text, secret):
    redacted = redact_text(text)
    assert secret not in redacted
    assert "***" in redacted


def test_ordinary_messages_and_paths_stay_readable():
    text = "HTTP 500 from 127.0.0.1:8000: server error; see runs/latest/candidates.jsonl line 3"
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://user:pw@host:8080/base/?api_key=k#frag", "http://host:8080/base/"),
        ("https://token@LS.example.org/", "https://ls.example.org/"),
    ],
)
def test_urls_lose_user_info_query_and_fragment(url, safe):
    assert redact_url(url) == safe


def test_user_info_is_split_off_and_put_back_unchanged():
    url = "http://alice:p%40ss:word@127.0.0.1:8000/v1"
    bare, userinfo = split_userinfo(url)
    assert (bare, userinfo) == ("http://127.0.0.1:8000/v1", "alice:p%40ss:word")
    assert with_userinfo(bare, userinfo) == url
    assert split_userinfo("http://127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1", None)
    assert with_userinfo("http://h/v1", None) == "http://h/v1"


def test_a_backend_spec_refuses_credentials_without_echoing_them():
    from pydantic import ValidationError

    from testaug.generation.backend_config import BackendConfig
    from testaug.steps.config import run_config

    with pytest.raises(ValidationError):
        BackendConfig(kind="openai", base_url="http://alice:s3cret@host/v1")
    with pytest.raises(Exception) as caught:
        run_config({"generator": {"kind": "openai", "base_url": "http://alice:s3cret@host/v1"}})
    assert "s3cret" not in str(caught.value)
    assert "TESTAUG_BASE_URL_USERINFO" in str(caught.value)


def test_a_message_after_a_key_field_name_stays_readable_but_a_value_does_not():
    message = "api_key: no Label Studio API key: set LABEL_STUDIO_API_KEY"
    assert redact_text(message) == message
    assert redact_text("password=hunter2") == "password=***"
    assert redact_text("token: correcthorsebattery") == "token: ***"


@pytest.mark.parametrize(
    "text",
    ["secret=short", "password = abc", '"secret": "short"', "api_key=x", "token='abc'"],
)
def test_an_assigned_or_quoted_value_is_blanked_however_short(text):
    redacted = redact_text(text)
    assert "***" in redacted
    assert not any(word in redacted for word in ("short", "abc", "=x"))


@pytest.mark.parametrize(
    "text",
    [
        "file sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 changed",
        "SHA256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "built from commit 1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d",
        "digest=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ],
)
def test_a_named_digest_stays_readable(text):
    assert redact_text(text) == text


def test_an_adatest_test_id_in_a_message_stays_readable():
    message = "test e9d9a309571641809be1c37df1ffe80c in /Rooms on vader: label 'neg' is unknown"
    assert redact_text(message) == message
    assert redact_text("the id e9d9a309571641809be1c37df1ffe80c (/Rooms)").count("e9d9a3") == 1


@pytest.mark.parametrize(
    "text",
    [
        "a key e9d9a309571641809be1c37df1ffe80c here",  # 32 hex, not named as a test id
        "test 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 here",  # 64 hex
        "test E9D9A309571641809BE1C37DF1FFE80C here",  # not an AdaTest id: upper case
        "latest e9d9a309571641809be1c37df1ffe80c",  # "test" only as a word
        "test sk-abcdef1234567890",
        "test id=e9d9a309571641809be1c37df1ffe80c9",  # 33 characters
    ],
)
def test_key_shaped_strings_not_named_as_test_ids_are_still_blanked(text):
    assert "***" in redact_text(text)


def test_a_remembered_credential_is_blanked_whatever_its_shape():
    remember_credentials("plainword-7")  # no key shape: the patterns alone keep it
    assert redact_text("key: plainword-7.") == "key: ***."
    assert mask_credentials("the server says plainword-7!") == "the server says ***!"


def test_a_remembered_url_password_is_blanked_as_written_and_decoded():
    remember_url_credentials("http://bob-r4:p%40ss%20w0rd@127.0.0.1:9/v1")
    line = "HTTP 401: invalid credentials bob-r4:p@ss w0rd (password p%40ss%20w0rd)"
    redacted = redact_text(line)
    assert "p@ss w0rd" not in redacted and "p%40ss%20w0rd" not in redacted
    assert redacted.startswith("HTTP 401: invalid credentials ***")


@pytest.mark.parametrize("placeholder", ["none", "EMPTY", "ollama", "abc"])
def test_placeholder_keys_are_not_blanked_in_ordinary_text(placeholder):
    remember_credentials(placeholder)
    text = f"I have none of it: EMPTY, ollama, abc ({placeholder})"
    assert mask_credentials(text) == text


def test_masking_remembered_credentials_leaves_key_shaped_text_of_a_completion_alone():
    text = "The key-features were great, sk-like-shapes-included."
    assert mask_credentials(text) == text
