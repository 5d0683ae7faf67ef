"""An LLM as a zero-shot validity judge: the `llm-judge` member kind.

For each candidate the judge asks a backend (the embedded model, or any
OpenAI-compatible server) whether the case fits its description and its proposed
label, with a short reason (`prompts/judge-validity.yaml`). The invalidity score is
P(invalid) read from the log-probabilities of the verdict token where the backend
gives them (the masses of the "valid" and "invalid" tokens among the top
alternatives, normalised), else from the verdict's text: valid 0.0, invalid 1.0,
no verdict 0.5 (counted and logged).

Requests take generation's path: the response cache (a repeated scoring sends
nothing), retries of transient faults with backoff, a requests-per-minute limit and
a bound on requests in flight. Training learns nothing (the judge is zero-shot; the
ensemble earns its weight on the user's labels); a fold saves its config as JSON.
The API key and the URL's user info come from the environment (`OPENAI_API_KEY`,
`TESTAUG_BASE_URL_USERINFO`) and are never saved or logged.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from rankers.members.cross_encoder import RankerError
from rankers.members.judge_prompt import DEFAULT_PROMPT, load_judge_prompt
from testaug.core.records import Candidate, LabelledCandidate, TestCase
from testaug.core.secrets import split_userinfo, url_without_credentials
from testaug.generation.single_answers import AnswerStats

if TYPE_CHECKING:
    from testaug.generation.backends import Backend, Completion, CompletionRequest
    from testaug.generation.cache import ResponseCache

logger = logging.getLogger(__name__)

FILE_NAME = "llm-judge.json"


class LlmJudgeConfig(BaseModel):
    """Which LLM judges, with which prompt, and how its requests are paced and retried."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["llm-judge"] = "llm-judge"
    name: str
    backend: str = Field(default="local", description="a backend kind: local, openai, ...")
    model: str | None = None
    base_url: str | None = None
    endpoint: Literal["chat", "completions"] = "completions"
    prompt: str = Field(default=DEFAULT_PROMPT, description="a shipped prompt name or a file")
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=32, ge=1)
    logprobs: int = Field(default=5, ge=0, le=20, description="alternatives per token; 0: none")
    timeout: float = Field(default=60.0, gt=0)
    concurrency: int = Field(default=4, ge=1, description="requests in flight at once")
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_attempts: int = Field(default=6, ge=1, description="tries per request")
    base_delay: float = Field(default=0.5, ge=0.0, description="first backoff, in seconds")
    cache_dir: Path | None = Field(default=None, description="default: TESTAUG_CACHE_DIR")

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, url: str | None) -> str | None:
        """A URL without user info: the config is saved with every fold."""
        return url_without_credentials(url)


# -- reading a reply ---------------------------------------------------------------------------

Verdict = Literal["valid", "invalid"]
_LEADING = re.compile(r"(?i)^[\s*_`\"'#:.-]*(not\s+valid|invalid|valid)\b")
_LABELLED = re.compile(r"(?i)\bverdict\b[\s*_`\"':=-]*(not\s+valid|invalid|valid)\b")
_REASON = re.compile(r"(?i)\breason\b[\s*_`\"':=-]*([^\n]*)")


class JudgeVerdict(BaseModel):
    """What the judge said of one candidate, and the score read from it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    candidate_id: str
    verdict: Verdict | None  # None: the reply held no verdict
    reason: str | None = None
    p_invalid: float
    from_logprobs: bool = False


def parse_verdict(text: str) -> tuple[Verdict | None, int, str | None]:
    """The verdict of a reply, where its word starts (-1: none), and the reason."""
    match = _LEADING.match(text) or _LABELLED.search(text)
    reason = _REASON.search(text)
    why = (reason.group(1).strip() or None) if reason else None
    if match is None:
        return None, -1, why
    word = match.group(1).lower()
    return ("valid" if word == "valid" else "invalid"), match.start(1), why


def _side(token: str) -> Verdict | None:
    """Which verdict a token begins (" in" begins "invalid"), if any."""
    word = token.strip().lower().lstrip("*_`\"'")
    if len(word) < 2:  # "i" is as often "I", and "v" a "verdict"
        return None
    if word == "not" or "invalid".startswith(word) or word.startswith("invalid"):
        return "invalid"
    if "valid".startswith(word) or word.startswith("valid"):
        return "valid"
    return None


def logprob_score(completion: Completion, offset: int) -> float | None:
    """P(invalid) from the alternatives at the token covering `offset`; None when there
    are no log-probabilities there or none of their tokens begins a verdict."""
    start = 0
    for token in completion.logprobs or ():
        if start + len(token.token) > offset:
            mass = {"valid": 0.0, "invalid": 0.0}
            for alternative, logprob in token.top or ((token.token, token.logprob),):
                side = _side(alternative)
                if side is not None:
                    mass[side] += math.exp(logprob)
            total = mass["valid"] + mass["invalid"]
            return mass["invalid"] / total if total > 0 else None
        start += len(token.token)
    return None


# -- the ranker --------------------------------------------------------------------------------


@dataclass
class JudgeStats(AnswerStats):
    """What the judge's scoring cost and found, over this ranker's calls; how many
    verdicts were read from the verdict token's log-probabilities."""

    from_logprobs: int = 0


_CONNECTIONS: dict[tuple, tuple[Backend, ResponseCache]] = {}
_CONNECTIONS_LOCK = threading.Lock()


def _connect(config: LlmJudgeConfig) -> tuple[Backend, ResponseCache]:
    """The backend and response cache of a config, built once per process; the key and the
    URL's user info come from the environment."""
    from testaug.core.secrets import with_userinfo
    from testaug.core.settings import Settings
    from testaug.generation.backends import BackendError, create_backend
    from testaug.generation.backends.openai_compatible import (
        DEFAULT_OPENAI_MODELS,
        OpenAIBackend,
    )
    from testaug.generation.cache import ResponseCache

    settings = Settings()
    cache_dir = config.cache_dir or settings.cache_dir
    url, userinfo = split_userinfo(config.base_url or settings.base_url or "")
    key = (config.backend, config.model, url, config.endpoint, config.timeout, cache_dir)
    with _CONNECTIONS_LOCK:
        if key not in _CONNECTIONS:
            secret = settings.openai_api_key
            api_key = secret.get_secret_value() if secret else None
            if userinfo is None and settings.base_url_userinfo is not None:
                userinfo = settings.base_url_userinfo.get_secret_value()
            base_url = with_userinfo(url, userinfo) if url else None
            try:
                if config.backend == "openai":  # the judge's instructions are the user message
                    backend: Backend = OpenAIBackend(
                        model=config.model or DEFAULT_OPENAI_MODELS[config.endpoint],
                        api_key=api_key,
                        base_url=base_url,
                        endpoint=config.endpoint,
                        timeout=config.timeout,
                        system_prompt="",
                    )
                else:
                    backend = create_backend(
                        config.backend,
                        model=config.model,
                        base_url=base_url,
                        api_key=api_key,
                        endpoint=config.endpoint,
                        timeout=config.timeout,
                        cache_dir=cache_dir,
                    )
            except BackendError as exc:
                raise RankerError(f"llm-judge {config.name}: {exc}") from exc
            _CONNECTIONS[key] = (backend, ResponseCache(cache_dir / "responses.sqlite"))
        return _CONNECTIONS[key]


class LlmJudgeRanker:
    """Scores candidates by asking an LLM for a verdict; implements the `Ranker` protocol."""

    def __init__(self, config: LlmJudgeConfig) -> None:
        self.name = config.name
        self.config = config
        self.prompt = load_judge_prompt(config.prompt)
        self.stats = JudgeStats()

    def score(
        self,
        candidates: Sequence[Candidate],
        *,
        batch_size: int = 64,
        reference: Sequence[TestCase] = (),
    ) -> np.ndarray:
        """P(invalid) of each candidate (the reference is not read)."""
        return np.array([v.p_invalid for v in self.judge(candidates)], dtype=np.float64)

    def judge(self, candidates: Sequence[Candidate]) -> list[JudgeVerdict]:
        """Each candidate's verdict, reason and P(invalid), in order."""
        if not candidates:
            return []
        backend, cache = _connect(self.config)
        requests = [self._request(c) for c in candidates]
        completions = self._complete(backend, cache, requests)
        verdicts = [
            self._read(candidate, completion, backend.continues_prompt)
            for candidate, completion in zip(candidates, completions, strict=True)
        ]
        unparsed = sum(v.verdict is None for v in verdicts)
        with self.stats._lock:
            self.stats.unparsed += unparsed
            self.stats.from_logprobs += sum(v.from_logprobs for v in verdicts)
        if unparsed:
            logger.warning(
                "llm-judge %s: %d of %d replies held no verdict (scored 0.5 where no "
                "log-probabilities told)",
                self.name,
                unparsed,
                len(verdicts),
            )
        return verdicts

    def _request(self, candidate: Candidate) -> CompletionRequest:
        from testaug.generation.backends import CompletionRequest

        return CompletionRequest(
            prompt=self.prompt.render(candidate),
            temperature=self.config.temperature,
            max_tokens=self.config.max_tokens,
            stop=self.prompt.stop,
            logprobs=self.config.logprobs,
        )

    def _read(self, candidate: Candidate, completion: Completion, continues: bool) -> JudgeVerdict:
        verdict, offset, reason = parse_verdict(completion.text)
        # A completion continues the prompt's "verdict:", so its first token is the verdict.
        position = offset if offset >= 0 else (0 if continues else -1)
        told = logprob_score(completion, position) if position >= 0 else None
        fallback = {"valid": 0.0, "invalid": 1.0, None: 0.5}[verdict]
        return JudgeVerdict(
            candidate_id=candidate.id,
            verdict=verdict,
            reason=reason,
            p_invalid=fallback if told is None else told,
            from_logprobs=told is not None,
        )

    def _complete(
        self, backend: Backend, cache: ResponseCache, requests: list[CompletionRequest]
    ) -> list[Completion]:
        """One completion per request: from the cache, else from the backend with retries
        (stored as soon as it comes), as generation asks."""
        from testaug.generation.single_answers import AnswerPace, UnansweredError, single_answers

        pace = AnswerPace(
            requests_per_minute=self.config.requests_per_minute,
            attempts=self.config.max_attempts,
            base_delay=self.config.base_delay,
            concurrency=self.config.concurrency,
        )
        what = f"llm-judge {self.name} request"
        try:
            return single_answers(backend, requests, cache, pace, self.stats, what=what)
        except UnansweredError as exc:
            raise RankerError(
                f"llm-judge {self.name}: {exc} ({exc.answered} of {exc.total} replies are "
                "cached; score again to resume)"
            ) from exc

    def save(self, path: Path) -> None:
        """The config as JSON (no key: it is never part of the config)."""
        path.mkdir(parents=True, exist_ok=True)
        saved = JudgeFile(config=self.config).model_dump_json(indent=1)
        tmp = path / f".{FILE_NAME}.tmp"
        tmp.write_text(saved + "\n", encoding="utf-8")
        tmp.replace(path / FILE_NAME)

    @classmethod
    def load(cls, path: Path) -> LlmJudgeRanker:
        """The judge saved in `path`; InputError naming the file when it is not one."""
        from testaug.core.jsonl import read_json

        return cls(read_json(path / FILE_NAME, JudgeFile).config)


class JudgeFile(BaseModel):
    """What a judge fold saves: its config."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config: LlmJudgeConfig


def train_llm_judge(
    labelled: Sequence[LabelledCandidate], config: LlmJudgeConfig, **_: Any
) -> LlmJudgeRanker:
    """The judge: zero-shot, so the labels teach it nothing (the ensemble weighs it by them)."""
    return LlmJudgeRanker(config)
