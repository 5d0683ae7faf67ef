"""Keeping credentials out of files and messages: URLs without their user info or key-like
query parameters, texts with key-shaped strings and the credentials this process was given
blanked, and a URL's user info split off so that it travels in the environment
(`TESTAUG_BASE_URL_USERINFO`), never in a record."""

from __future__ import annotations

import re
import threading
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "***"

# The credentials this process was given (API keys, passwords, a URL's user info): masked
# wherever they appear, whatever their shape, once remembered.
_KNOWN: set[str] = set()
_KNOWN_PATTERN: re.Pattern[str] | None = None
_KNOWN_LOCK = threading.Lock()
# A value shorter than this, or one of few letters only ("none", "EMPTY", "ollama": what
# local servers take as a dummy key), is a placeholder more likely than a secret, and
# masking it would blank ordinary words of generated text.
KNOWN_MIN_CHARS = 4
KNOWN_MIN_LETTERS_ONLY = 8

_SECRETS = [
    # user info in a URL: scheme://user:password@host
    (re.compile(r"(?<=://)[^\s/@]+@"), MASK + "@"),
    # bearer and basic tokens, as in "Authorization: Bearer ..."
    (re.compile(r"(?i)\b((?:bearer|basic)\s+)[^\s\"',]+"), r"\1" + MASK),
    # API keys (sk-..., sk-proj-..., key-...)
    (re.compile(r"\b(sk|key|rk|pk)-[A-Za-z0-9_\-]{6,}"), r"\1-" + MASK),
    # key=value and "key": "value": an assigned or quoted value is always a secret
    (
        re.compile(
            r"(?i)\b([A-Za-z_\-]*(?:api[_-]?key|token|secret|password))"
            r"(\s*=\s*[\"']?|\"?\s*:\s*\")[^\s\"',&]+"
        ),
        r"\1\2" + MASK,
    ),
    # key: value, unquoted; a value of a few lowercase letters is a word of a message
    # ("api_key: no Label Studio API key"), not a secret
    (
        re.compile(
            r"(?i)\b([A-Za-z_\-]*(?:api[_-]?key|token|secret|password))(\"?\s*:\s*)"
            r"(?-i:(?=[^\s\"',&]*[^a-z\s\"',&])(?!\*\*\*)[^\s\"',&]+|[a-z]{9,})"
        ),
        r"\1\2" + MASK,
    ),
    # any other long key-shaped run of letters and digits (hex, base64), unless it is
    # named as a digest ("sha256:9f86...", "commit 1a2b...") or is an AdaTest test id
    # (a uuid's 32 lowercase hex digits) named as one ("test 4f51...", "id 4f51...")
    (
        re.compile(
            r"(?<![\w/.])(?<!(?i:sha1)[:= ])(?<!(?i:sha256)[:= ])(?<!(?i:sha512)[:= ])"
            r"(?<!(?i:sha1): )(?<!(?i:sha256): )(?<!(?i:sha512): )(?<!(?i:digest)[:= ])"
            r"(?<!(?i:commit) )"
            r"(?!(?:(?<=\b(?i:test) )|(?<=\b(?i:id) ))[0-9a-f]{32}(?![A-Za-z0-9_+\-=]))"
            r"(?=[A-Za-z0-9_+\-]*\d)(?=[A-Za-z0-9_+\-]*[A-Za-z])[A-Za-z0-9_+\-]{32,}=*"
        ),
        MASK,
    ),
]


def redact_text(text: str) -> str:
    """`text` with the remembered credentials (`remember_credentials`), URL user info,
    bearer tokens and key-shaped strings replaced by ***."""
    text = mask_credentials(text)
    for pattern, replacement in _SECRETS:
        text = pattern.sub(replacement, text)
    return text


def remember_credentials(*values: str | None) -> None:
    """Mask these values (API keys, passwords) wherever `redact_text` and `mask_credentials`
    run in this process from now on; None, and placeholders too short or too plain to be
    secrets (`KNOWN_MIN_CHARS`, `KNOWN_MIN_LETTERS_ONLY`), are passed over."""
    global _KNOWN_PATTERN
    kept = {
        value
        for value in values
        if value
        and len(value) >= KNOWN_MIN_CHARS
        and (len(value) >= KNOWN_MIN_LETTERS_ONLY or not value.isalpha())
    }
    with _KNOWN_LOCK:
        if kept <= _KNOWN:
            return
        _KNOWN.update(kept)
        longest_first = sorted(_KNOWN, key=len, reverse=True)
        _KNOWN_PATTERN = re.compile("|".join(re.escape(value) for value in longest_first))


def remember_userinfo(userinfo: str | None) -> None:
    """Remember a URL's user info (`user:password`) as credentials: whole and its password,
    each as written in the URL and percent-decoded (as a server that quotes it decodes it)."""
    if not userinfo:
        return
    _, colon, password = userinfo.partition(":")
    values = [userinfo, password] if colon else [userinfo]
    remember_credentials(*values, *(unquote(value) for value in values))


def remember_url_credentials(url: str | None) -> None:
    """Remember the user info of `url` (`remember_userinfo`), if it has any."""
    if url:
        remember_userinfo(split_userinfo(url)[1])


def mask_credentials(text: str) -> str:
    """`text` with every remembered credential replaced by ***; nothing else changed (what
    a model generates goes through this, not through the key-shaped patterns)."""
    pattern = _KNOWN_PATTERN
    return pattern.sub(MASK, text) if pattern is not None else text


def split_userinfo(url: str) -> tuple[str, str | None]:
    """The URL without its user info (`user:password@`), and that user info (None: none)."""
    parts = urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    return urlunsplit(parts._replace(netloc=host)), userinfo


def url_without_credentials(url: str | None) -> str | None:
    """The URL as given; ValueError (for a record's validator) when it holds user info, as a
    URL that is recorded (manifests, saved configs, Prefect's parameters) must not."""
    if url is not None and split_userinfo(url)[1] is not None:
        raise ValueError(
            "holds credentials (user:password@): give the URL without them and the "
            "user info in TESTAUG_BASE_URL_USERINFO"
        )
    return url


def with_userinfo(url: str, userinfo: str | None) -> str:
    """The URL with `userinfo` put back in front of its host (unchanged when None)."""
    if not userinfo:
        return url
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))


def redact_url(url: str) -> str:
    """The URL without user info, query or fragment (the host lower-cased): safe to print
    and to record."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


__all__ = [
    "MASK",
    "mask_credentials",
    "redact_text",
    "redact_url",
    "remember_credentials",
    "remember_url_credentials",
    "remember_userinfo",
    "split_userinfo",
    "with_userinfo",
]
