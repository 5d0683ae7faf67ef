"""A SQLite cache of LLM completions, one row per sample, so no request is ever sent twice.

The key is a hash of the backend, its scope (the server), the model, the prompt,
the sampling parameters and the sample index: sample 3 of a prompt is the same
completion however many samples a request asked for, and a repeated or resumed
run gets the same candidates without a request. The first answer stored for a key
stays the answer, also when concurrent runs against a varying server race. A completion
longer than `MAX_COMPLETION_CHARS` is stored cut to that length and marked as cut off
("length"), as `max_tokens` would have cut it, so a runaway reply never fills the file. A
credential this process was given (`core.secrets.remember_credentials`) that a server echoes
in a completion is stored as ***, so no suggestion, candidate or printed table holds it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from testaug.core.secrets import mask_credentials
from testaug.generation.backends import Completion, CompletionRequest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    created REAL NOT NULL DEFAULT (julianday('now')),
    logprobs TEXT
)
"""


def cache_key(
    backend: str, scope: str, model: str, request: CompletionRequest, sample_index: int
) -> str:
    """The cache key of one sample of a request (its `n` and `sample_offset` do not count;
    `logprobs` counts only when asked for, so keys of requests without it never change)."""
    fields: dict[str, object] = {
        "backend": backend,
        "scope": scope,
        "model": model,
        "prompt": request.prompt,
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "stop": list(request.stop),
        "sample": sample_index,
    }
    if request.logprobs:
        fields["logprobs"] = request.logprobs
    payload = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


MAX_COMPLETION_CHARS = 100_000

_INIT_LOCK = threading.Lock()
_INIT_ATTEMPTS = 100


class ResponseCache:
    """Completions by cache key in a SQLite file (or in memory with `path=None`); thread-safe."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            str(path) if path is not None else ":memory:",
            check_same_thread=False,
            isolation_level=None,
            timeout=30,
        )
        self._initialise(wal=path is not None)

    def _initialise(self, *, wal: bool) -> None:
        """WAL mode and the table. Switching the journal mode does not wait on SQLite's busy
        timeout, so two caches opening one new file at once (concurrent generation tasks)
        take turns in this process and retry briefly across processes."""
        with _INIT_LOCK:
            for attempt in range(_INIT_ATTEMPTS):
                try:
                    if wal:
                        self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute(_SCHEMA)
                    self._add_logprobs_column()
                    return
                except sqlite3.OperationalError as exc:
                    if "locked" not in str(exc) or attempt == _INIT_ATTEMPTS - 1:
                        raise
                    time.sleep(0.1)

    def _add_logprobs_column(self) -> None:
        """Give a cache file written before log-probabilities were kept their column."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(completions)")}
        if "logprobs" in columns:
            return
        try:
            self._db.execute("ALTER TABLE completions ADD COLUMN logprobs TEXT")
        except sqlite3.OperationalError as exc:
            if "duplicate column" not in str(exc):  # another process added it first
                raise

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The cached completions among `keys`."""
        with self._lock:
            return self._select(list(keys))

    def _select(self, keys: list[str]) -> dict[str, Completion]:
        """The stored completions among `keys` (the caller holds the lock)."""
        found: dict[str, Completion] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = self._db.execute(
                "SELECT key, text, finish_reason, logprobs FROM completions WHERE key IN "
                f"({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for key, text, finish_reason, logprobs in rows:
                found[key] = Completion(
                    text=text,
                    finish_reason=finish_reason,
                    logprobs=None if logprobs is None else json.loads(logprobs),
                )
        return found

    def put_many(
        self, backend: str, model: str, completions: Mapping[str, Completion]
    ) -> dict[str, Completion]:
        """Store completions by key, in one transaction (a crash keeps all or none of them), and
        return what is stored for those keys. The first answer stored for a key stays the
        answer: a concurrent run that stored another one first wins, and its answer is returned
        here, so every run uses (and a replay repeats) the same completions."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO completions (key, backend, model, text, finish_reason, logprobs) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                    [
                        (k, backend, model, *_capped(c), _logprobs_json(c))
                        for k, c in completions.items()
                    ],
                )
                stored = self._select(list(completions))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return stored

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _capped(completion: Completion) -> tuple[str, str]:
    """A completion's text and finish reason as stored: the credentials this process was
    given masked (a server may echo its key), cut to `MAX_COMPLETION_CHARS`."""
    text = mask_credentials(completion.text)
    if len(text) <= MAX_COMPLETION_CHARS:
        return text, completion.finish_reason
    return text[:MAX_COMPLETION_CHARS], "length"


def _logprobs_json(completion: Completion) -> str | None:
    """A completion's log-probabilities as stored (JSON), or None when it has none."""
    if completion.logprobs is None:
        return None
    return json.dumps([t.model_dump(mode="json") for t in completion.logprobs], ensure_ascii=False)
