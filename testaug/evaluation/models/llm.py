"""An LLM prompted to classify, as a model under test: the `llm:` kind.

    llm:BACKEND[:MODEL][?OPTION=VALUE&...]
    llm:openai:gpt-4o-mini?labels=positive,negative
    llm:openai:scripted?base_url=http://127.0.0.1:8000/v1
    llm:local

BACKEND is a generation backend kind (`openai`, `local`, or a registered one); MODEL is
the backend's model (default: the backend's). Options:

- `labels`: the labels the model is asked to choose from, in the order offered (default:
  the task's); mapped to the task's labels by name, as other models' labels are.
- `base_url`: the OpenAI-compatible server (default: TESTAUG_BASE_URL or OPENAI_BASE_URL).
- `endpoint`: `chat` (default for `openai`) or `completions`.
- `task`: whose shipped prompt to use, `prompts/<task>-classify.yaml` (default: read from
  the task's labels); `prompt`: a prompt file instead.
- `max_tokens` (default 16), `timeout` (seconds, 60), `concurrency` (requests in flight, 4),
  `rpm` (requests per minute, unlimited), `attempts` (tries per request, 6).

Each distinct case becomes one request at temperature 0, sent as generation sends its
requests: through the response cache (a repeated evaluation sends nothing), with retries
of transient faults (backoff, Retry-After), a requests-per-minute limit and a bound on
requests in flight. The answer's first label word is its label (`llm_prompt`): the
probability row is one-hot. An answer with no label word is unparseable: it is counted
(`unparsed`, input -> answer), its row is uniform, and the evaluation leaves the case out
of the error rates and counts it apart. A request that keeps failing is a `ModelError`.
The API key (OPENAI_API_KEY) and the URL's user info come from the environment and never
reach a spec, a record or a log line. An `openai` spec with neither a key nor a server URL
(`base_url`, TESTAUG_BASE_URL) is refused when specs are checked, before any work.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

import numpy as np

from testaug.core.errors import close_names, did_you_mean
from testaug.core.records import Record
from testaug.core.secrets import split_userinfo
from testaug.evaluation.models.base import Inputs, ModelError, ModelSpec, model_kind, unknown_spec
from testaug.evaluation.models.labels import canonical, map_labels
from testaug.evaluation.models.llm_prompt import AnswerReader, ClassifyPrompt, classify_prompt
from testaug.generation.single_answers import AnswerStats

if TYPE_CHECKING:
    from testaug.core.settings import Settings
    from testaug.generation.backends import Backend, Completion, CompletionRequest

logger = logging.getLogger(__name__)

LLM_OPTIONS = (
    "labels",
    "base_url",
    "endpoint",
    "task",
    "prompt",
    "max_tokens",
    "timeout",
    "concurrency",
    "rpm",
    "attempts",
)
ENDPOINTS = ("chat", "completions")
# Which shipped prompt a task's labels call for, by the labels' canonical names.
TASK_BY_LABEL = {
    "entailment": "nli",
    "contradiction": "nli",
    "duplicate": "paraphrase",
    "not_duplicate": "paraphrase",
    "positive": "sentiment",
    "negative": "sentiment",
}
KEPT_ANSWER_CHARS = 200


class LlmConfig(Record):
    """A parsed `llm:` spec: the backend, its model and the options (module docstring)."""

    backend: str
    model: str | None = None
    labels: tuple[str, ...] | None = None
    base_url: str | None = None
    endpoint: str | None = None
    task: str | None = None
    prompt: Path | None = None
    max_tokens: int = 16
    timeout: float = 60.0
    concurrency: int = 4
    rpm: float | None = None
    attempts: int = 6


def _number(spec: str, name: str, value: str, kind: type, low: float) -> int | float:
    try:
        number = kind(value)
    except ValueError:
        raise unknown_spec(spec, f"option {name}={value!r} is not a number in") from None
    if not math.isfinite(number):
        raise unknown_spec(spec, f"option {name}={value!r} is not a finite number in")
    if number < low:
        raise unknown_spec(spec, f"option {name}={value!r} must be at least {low:g} in")
    return number


def parse_llm_spec(spec: str, argument: str) -> LlmConfig:
    """An `llm:` spec's backend, model and options, checked without loading anything:
    an unknown backend or option is a `ModelError` suggesting the nearest."""
    from testaug.generation.backends import BACKEND_KINDS

    head, _, query = argument.partition("?")
    options = parse_qs(query, keep_blank_values=True)
    # Before any message quotes the spec: a spec is printed and recorded, a password never.
    if any(split_userinfo(url)[1] is not None for url in options.get("base_url", [])):
        raise ModelError(
            "a model spec's base_url holds credentials (user:password@): give the URL "
            "without them and the user info in TESTAUG_BASE_URL_USERINFO"
        )
    backend, _, model = head.partition(":")
    kinds = BACKEND_KINDS.names()
    if not backend:
        raise unknown_spec(spec, "no backend (one of: " + ", ".join(kinds) + ") in")
    if backend not in kinds:
        near = close_names(backend.casefold(), kinds, cutoff=0.6)
        rest = f":{model}" if model else ""
        rest += f"?{query}" if query else ""
        raise unknown_spec(
            spec,
            f"unknown backend {backend!r} (known: {', '.join(kinds)}) in",
            suggestions=[f"llm:{name}{rest}" for name in near],
        )
    for name in sorted(set(options) - set(LLM_OPTIONS)):
        near = close_names(name, LLM_OPTIONS, n=1)
        raise ModelError(
            f"unknown option {name!r} in model spec {spec!r}{did_you_mean(near)} "
            f"(accepted: {', '.join(LLM_OPTIONS)})"
        )
    value = {name: values[-1].strip() for name, values in options.items()}
    parsed: dict[str, object] = {"backend": backend, "model": model or None}
    if "labels" in value:
        labels = tuple(label.strip() for label in value["labels"].split(",") if label.strip())
        if not labels:
            raise unknown_spec(spec, "option labels= names no label in")
        parsed["labels"] = labels
    if value.get("endpoint") and value["endpoint"] not in ENDPOINTS:
        wrong = value["endpoint"]
        raise unknown_spec(
            spec,
            f"option endpoint={wrong!r} (expected {' or '.join(ENDPOINTS)}) in",
            suggestions=[
                spec.replace(f"endpoint={wrong}", f"endpoint={near}")
                for near in close_names(wrong, ENDPOINTS, n=1)
            ],
        )
    for name in ("base_url", "endpoint", "task"):
        if value.get(name):
            parsed[name] = value[name]
    if value.get("prompt"):
        path = Path(value["prompt"]).expanduser()
        if not path.is_file():
            raise ModelError(f"{spec!r}: no prompt file {str(path)!r}")
        parsed["prompt"] = path
    for name, kind, low in (
        ("max_tokens", int, 1),
        ("timeout", float, 0.001),
        ("concurrency", int, 1),
        ("rpm", float, 0.001),
        ("attempts", int, 1),
    ):
        if value.get(name):
            parsed[name] = _number(spec, name, value[name], kind, low)
    return LlmConfig.model_validate(parsed)


def task_of(labels: Sequence[str]) -> str | None:
    """The task whose shipped prompt fits these labels; None when they tell no task."""
    tasks = {TASK_BY_LABEL.get(canonical(label)) for label in labels} - {None}
    return tasks.pop() if len(tasks) == 1 else None


class LlmModel:
    """A chat or completion model asked to classify each case with a prompt."""

    def __init__(
        self,
        backend: Backend,
        prompt: ClassifyPrompt,
        task_labels: Sequence[str],
        *,
        cache_path: Path | None,
        name: str,
        labels: Sequence[str] | None = None,
        options: LlmConfig | None = None,
    ) -> None:
        self.name = name
        self.labels = tuple(task_labels)
        self.backend = backend
        self.prompt = prompt
        self.cache_path = cache_path
        self.options = options or LlmConfig(backend=backend.name)
        self.offered = tuple(labels) if labels else self.labels
        self._mapping = map_labels(self.offered, self.labels)
        self._reader = AnswerReader(self.offered, prompt.synonyms)
        self.stats = AnswerStats()
        # Inputs whose answer held no label word, with the answer (cut to KEPT_ANSWER_CHARS).
        self.unparsed: dict[tuple[str, str | None], str] = {}

    def request(self, text: str, text_pair: str | None) -> CompletionRequest:
        """The request that asks for one case's label."""
        from testaug.generation.backends import CompletionRequest

        return CompletionRequest(
            prompt=self.prompt.render(text, text_pair, self.offered),
            n=1,
            temperature=0.0,
            max_tokens=self.options.max_tokens,
            stop=self.prompt.stop,
        )

    def predict_proba(self, inputs: Inputs, *, batch_size: int = 32) -> np.ndarray:
        """One-hot rows over the task labels from each case's answer; uniform rows for
        answers without a label word (kept in `unparsed`)."""
        inputs = [(text, pair) for text, pair in inputs]
        if not inputs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        answers = self.answers([self.request(text, pair) for text, pair in inputs])
        rows = np.zeros((len(inputs), len(self.offered)), dtype=np.float64)
        unparsed = 0
        for row, case, answer in zip(rows, inputs, answers, strict=True):
            label = self._reader.read(answer.text)
            if label is None:
                row[:] = 1.0
                self.unparsed[case] = answer.text[:KEPT_ANSWER_CHARS]
                unparsed += 1
            else:
                row[self.offered.index(label)] = 1.0
        if unparsed:
            with self.stats._lock:
                self.stats.unparsed += unparsed
            logger.warning(
                "%s: %d of %d answers held no label word (counted apart, not as errors)",
                self.name,
                unparsed,
                len(inputs),
            )
        probs = self._mapping(rows)
        for i, case in enumerate(inputs):  # unparsed stays uniform over the task labels
            if case in self.unparsed:
                probs[i] = 1.0 / len(self.labels)
        return probs

    def answers(self, requests: Sequence[CompletionRequest]) -> list[Completion]:
        """One answer per request: from the response cache, else from the backend (retried
        with backoff, paced, a bounded number in flight), stored as soon as it comes."""
        from testaug.generation.cache import ResponseCache
        from testaug.generation.single_answers import AnswerPace, UnansweredError, single_answers

        pace = AnswerPace(
            requests_per_minute=self.options.rpm,
            attempts=self.options.attempts,
            concurrency=self.options.concurrency,
        )
        cache = ResponseCache(self.cache_path)
        try:
            return single_answers(
                self.backend, requests, cache, pace, self.stats, what=f"{self.name} request"
            )
        except UnansweredError as exc:
            raise ModelError(
                f"{self.name}: {exc} ({exc.answered} of {exc.total} answers are cached; "
                "evaluate again to resume)"
            ) from exc
        finally:
            cache.close()


_LOCAL_BACKENDS: dict[tuple[str, str | None, Path], Backend] = {}
_LOCAL_LOCK = threading.Lock()


def check_api_key(spec: str, options: LlmConfig, settings: Settings) -> None:
    """An `openai` spec needs an API key, or a server of its own that may take none; a
    `ModelError` saying what to set otherwise (the same in a command and in Python)."""
    if options.backend != "openai" or settings.openai_api_key:
        return
    if options.base_url or settings.base_url:
        return
    raise ModelError(
        f"{spec!r} needs an API key: set OPENAI_API_KEY (or TESTAUG_OPENAI_API_KEY), or, for "
        "a local OpenAI-compatible server, give its URL in the spec "
        "(llm:openai:MODEL?base_url=http://127.0.0.1:8000/v1) or in TESTAUG_BASE_URL"
    )


def connect(options: LlmConfig, spec: str) -> tuple[Backend, Path]:
    """The backend an `llm:` spec (`options`, parsed from `spec`) names (an in-process model
    loaded once per process) and the response cache's file. The key, the URL's user info
    and the cache folder come from the settings (the environment)."""
    from testaug.core.secrets import with_userinfo
    from testaug.core.settings import Settings
    from testaug.generation.backends import BackendError, create_backend
    from testaug.generation.backends.openai_compatible import DEFAULT_OPENAI_MODELS, OpenAIBackend

    settings = Settings()
    check_api_key(spec, options, settings)
    url, userinfo = split_userinfo(options.base_url or settings.base_url or "")
    if userinfo is None and settings.base_url_userinfo is not None:
        userinfo = settings.base_url_userinfo.get_secret_value()
    secret = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    base_url = with_userinfo(url, userinfo) if url else None
    endpoint = options.endpoint or ("chat" if options.backend == "openai" else "completions")
    try:
        if options.backend == "openai":  # the prompt is the whole user message, no system one
            backend: Backend = OpenAIBackend(
                model=options.model or DEFAULT_OPENAI_MODELS[endpoint],
                api_key=secret,
                base_url=base_url,
                endpoint=endpoint,  # type: ignore[arg-type]
                timeout=options.timeout,
                system_prompt="",
            )
            return backend, settings.response_cache_path
        key = (options.backend, options.model, settings.cache_dir)
        with _LOCAL_LOCK:
            if options.backend != "local" or key not in _LOCAL_BACKENDS:
                backend = create_backend(
                    options.backend,
                    model=options.model,
                    base_url=base_url,
                    api_key=secret,
                    endpoint=endpoint,  # type: ignore[arg-type]
                    timeout=options.timeout,
                    cache_dir=settings.cache_dir,
                )
                if options.backend != "local":
                    return backend, settings.response_cache_path
                _LOCAL_BACKENDS[key] = backend
            return _LOCAL_BACKENDS[key], settings.response_cache_path
    except BackendError as exc:
        raise ModelError(f"cannot reach the model under test: {exc}") from exc


def check_llm(spec: str, argument: str) -> None:
    """An `llm:` spec's backend and options, and the API key it needs, without connecting."""
    from testaug.core.settings import Settings

    check_api_key(spec, parse_llm_spec(spec, argument), Settings())


@model_kind("llm", "llm:BACKEND[:MODEL][?labels=a,b&base_url=URL]", check=check_llm)
def load_llm(spec: ModelSpec) -> LlmModel:
    """An `llm:` spec: its prompt (the task's shipped one, or `prompt=FILE`) and backend."""
    from testaug.core.errors import InputError

    options = parse_llm_spec(spec.text, spec.argument)
    task = options.task or task_of(spec.task_labels)
    if task is None and options.prompt is None:
        raise ModelError(
            f"{spec.text!r}: the task labels {list(spec.task_labels)} tell no task; "
            "add task=sentiment|paraphrase|nli or prompt=FILE"
        )
    try:
        prompt = classify_prompt(task, options.prompt)
    except InputError as exc:
        raise ModelError(f"{spec.text!r}: {exc}") from exc
    backend, cache_path = connect(options, spec.text)
    return LlmModel(
        backend,
        prompt,
        spec.task_labels,
        cache_path=cache_path,
        name=spec.text,
        labels=options.labels,
        options=options,
    )
