"""Steps from a suite to candidates: seed cases and generation (ranking is `rank`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator

from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Candidate, Prompt, Record, Reject, TestCase
from testaug.core.runs import new_manifest, sibling, write_manifest
from testaug.core.secrets import redact_url, split_userinfo, with_userinfo
from testaug.core.settings import Settings
from testaug.generation.backends import BACKEND_KINDS, Backend, create_backend
from testaug.generation.cache import ResponseCache
from testaug.generation.prompts import PromptTemplate, prompt_for
from testaug.generation.sampling import GenerationConfig, GenerationResult, generate
from testaug.generation.seeding import build_prompts
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.suites.task_labels import checked

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset(
    {
        "backend_arguments",
        "backend_from_options",
        "build_prompt_set",
        "connect_backend",
        "generate_prompt_set",
        "one_task",
        "read_seed_cases",
        "write_generation",
    }
)


class BackendConfig(Record):
    """Which LLM to ask: the embedded model, any OpenAI-compatible server, or a registered
    kind. The API key is not part of it: it comes from the environment where the step runs."""

    kind: str = "local"
    model: str | None = None
    base_url: str | None = None
    endpoint: Literal["chat", "completions"] = "completions"
    timeout: float = Field(default=60.0, gt=0)

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        """A kind `create_backend` knows (plugins included)."""
        kinds = BACKEND_KINDS.names()
        if kind not in kinds:
            raise ValueError(f"expected one of {', '.join(kinds)}")
        return kind

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, url: str | None) -> str | None:
        """A URL without user info: a spec is recorded (manifests, Prefect's parameters)."""
        if url is not None and split_userinfo(url)[1] is not None:
            raise ValueError(
                "holds credentials (user:password@): give the URL without them and the "
                "user info in TESTAUG_BASE_URL_USERINFO"
            )
        return url


class PromptPlan(Record):
    """How many prompts each description gets, and how their seed cases are sampled."""

    prompts_per_description: int = Field(default=1, ge=1)
    seeds_per_prompt: int = Field(default=3, ge=1)
    seed: int = 0


class ExpandSummary(StepSummary):
    """The seed cases' suite and task."""

    kind: Literal["expand"] = "expand"
    suite: str
    task: str


class GenerateSummary(StepSummary):
    """One generation: the prompts sent, the replies' rejects, and what the requests cost
    (`GenerationStats`)."""

    kind: Literal["generate"] = "generate"
    prompts: int
    rejects: int
    requests: int
    retries: int
    cached_samples: int
    fresh_samples: int
    prompt_tokens: int
    completion_tokens: int


class CombineSummary(StepSummary):
    """Several generations' candidates in one file: their rejects and summed counts."""

    kind: Literal["combine"] = "combine"
    rejects: int
    prompts: int
    requests: int
    cached_samples: int
    fresh_samples: int


def expand_seed_cases(suite: str, out: Path, *, per_template: int | None, seed: int) -> StepOutput:
    """The suite's templates filled into seed cases (a seeded sample per template)."""
    loaded = load_suite(resolve_suite(suite))
    written = write_jsonl(out, expand_suite(loaded, per_template=per_template, seed=seed))
    logger.info("wrote %d seed cases of suite %s to %s", written, loaded.name, out)
    summary = ExpandSummary(suite=loaded.name, task=loaded.task)
    return step_output("expand", out, written, summary=summary)


def one_task(cases: Sequence[TestCase], source: str | Path) -> str:
    """The task all the cases belong to; an error naming the source when they mix tasks."""
    tasks = sorted({case.task for case in cases})
    if len(tasks) != 1:
        raise InputError(Problem(f"seed cases of several tasks ({', '.join(tasks)})", source))
    return tasks[0]


def connect_backend(
    spec: BackendConfig,
    *,
    api_key: SecretStr | None,
    cache_dir: Path,
    userinfo: SecretStr | None = None,
) -> Backend:
    """A backend for the spec, its URL's user info (`userinfo`) put back; the embedded model
    is loaded once per process and shared."""
    if spec.kind == "local":
        return _shared_local_backend(spec.model, cache_dir)
    base_url = spec.base_url
    if base_url is not None and userinfo is not None:
        base_url = with_userinfo(base_url, userinfo.get_secret_value())
    return create_backend(
        spec.kind,
        model=spec.model,
        base_url=base_url,
        api_key=api_key.get_secret_value() if api_key else None,
        endpoint=spec.endpoint,
        timeout=spec.timeout,
        cache_dir=cache_dir,
    )


def backend_from_options(
    kind: str,
    model: str | None,
    base_url: str | None,
    endpoint: str,
    timeout: float,
    settings: Settings,
    *,
    build: Callable[..., BackendConfig] = BackendConfig,
) -> tuple[BackendConfig, Backend]:
    """The LLM backend the options name, and its spec (what a run records): a base URL's
    user info is split off and passed to the backend, never into the spec; the URL, API
    key and cache folder not given come from `settings`. `build` makes the spec from its
    fields (the CLI's names the flag of a value it refuses)."""
    url, userinfo = split_userinfo(base_url or settings.base_url or "")
    spec = build(kind=kind, model=model, base_url=url or None, endpoint=endpoint, timeout=timeout)
    backend = connect_backend(
        spec,
        api_key=settings.openai_api_key,
        cache_dir=settings.cache_dir,
        userinfo=SecretStr(userinfo) if userinfo else settings.base_url_userinfo,
    )
    return spec, backend


_LOCAL_BACKENDS: dict[tuple[str | None, Path], Backend] = {}
_LOCAL_BACKENDS_LOCK = threading.Lock()


def _shared_local_backend(model: str | None, cache_dir: Path) -> Backend:
    """One in-process model per (model, cache) for every step and thread of the process."""
    key = (model, cache_dir)
    with _LOCAL_BACKENDS_LOCK:
        if key not in _LOCAL_BACKENDS:
            _LOCAL_BACKENDS[key] = create_backend("local", model=model, cache_dir=cache_dir)
        return _LOCAL_BACKENDS[key]


def read_seed_cases(source: str | Path, *, per_template: int | None, seed: int) -> list[TestCase]:
    """Seed cases: a JSONL file of test cases as it is, or a suite (file, folder or shipped
    name) with a seeded sample of `per_template` cases per template."""
    path = Path(source)
    if path.suffix == ".jsonl" and path.is_file():
        return checked(read_jsonl(path, TestCase), path)
    suite = load_suite(resolve_suite(str(source)))
    return list(expand_suite(suite, per_template=per_template, seed=seed))


@dataclass(frozen=True)
class PromptSet:
    """The prompts a generation sends, the template they fill, and every seed case (the
    suite's cases a candidate must not repeat)."""

    cases: list[TestCase]
    template: PromptTemplate
    prompts: list[Prompt]


def build_prompt_set(
    cases: Sequence[TestCase],
    source: str | Path,
    *,
    plan: PromptPlan,
    capabilities: Sequence[str] = (),
    prompt_file: Path | None = None,
) -> PromptSet:
    """Prompts from the seed cases of some capabilities (or all), with the task's shipped
    template or the one in `prompt_file`; an error naming `source` when no case is left."""
    chosen = [case for case in cases if not capabilities or case.capability in capabilities]
    if not chosen:
        raise InputError(Problem("no seed cases (check the capabilities)", source))
    template = prompt_for(one_task(chosen, source), path=prompt_file)
    prompts = build_prompts(
        chosen,
        template,
        per_description=plan.prompts_per_description,
        k=plan.seeds_per_prompt,
        seed=plan.seed,
    )
    return PromptSet(list(cases), template, prompts)


@dataclass(frozen=True)
class Generation:
    """What a generation step wrote (its record) and what it got (candidates, rejects and
    the request statistics)."""

    output: StepOutput
    result: GenerationResult


def generate_prompt_set(
    prompt_set: PromptSet,
    out: Path,
    *,
    backend: Backend,
    generation: GenerationConfig,
    plan: PromptPlan,
    cache_path: Path,
    capabilities: Sequence[str] = (),
    generator: BackendConfig | None = None,
    arguments: dict[str, Any] | None = None,
    on_prompt_done: Callable[[], None] | None = None,
) -> Generation:
    """The prompts sent through the response cache and parsed into candidates; rejects,
    prompts and the manifest (recording `arguments`, the plan, the generation settings and
    the `generator`, its URL without credentials) are written beside them."""
    response_cache = ResponseCache(cache_path)
    try:
        result = generate(
            prompt_set.prompts,
            prompt_set.template,
            backend,
            response_cache,
            generation,
            known_cases=prompt_set.cases,
            on_prompt_done=on_prompt_done,
        )
    finally:
        response_cache.close()
    recorded = {
        **(arguments or {}),
        **(backend_arguments(generator, backend) if generator is not None else {}),
        **plan.model_dump(),
        "capability": list(capabilities),
        **generation.model_dump(),
    }
    files = write_generation(
        out, result, prompt_set.prompts, prompt_set.template, backend, recorded, seed=plan.seed
    )
    output = step_output(
        "generate",
        out,
        len(result.candidates),
        files=files,
        summary=GenerateSummary(
            prompts=len(prompt_set.prompts), rejects=len(result.rejects), **result.stats.as_dict()
        ),
    )
    return Generation(output, result)


def backend_arguments(spec: BackendConfig, backend: Backend) -> dict[str, Any]:
    """How a manifest records the generator: kind, server URL without credentials, the
    model it answered with, and the endpoint."""
    return {
        "backend": spec.kind,
        "base_url": redact_url(spec.base_url) if spec.base_url else spec.base_url,
        "model": backend.model,
        "endpoint": spec.endpoint,
    }


def generate_candidates(
    cases_path: Path,
    out: Path,
    *,
    backend: Backend,
    generation: GenerationConfig,
    plan: PromptPlan,
    cache_path: Path,
    capabilities: Sequence[str] = (),
    prompt_file: Path | None = None,
    arguments: dict[str, Any] | None = None,
    on_prompt_done: Callable[[], None] | None = None,
    generator: BackendConfig | None = None,
) -> StepOutput:
    """Prompts from the seed cases in `cases_path` (of some capabilities, or all), sent
    through the response cache, parsed into candidates; rejects, prompts and the manifest
    are written beside them."""
    cases = list(read_jsonl(cases_path, TestCase))
    prompt_set = build_prompt_set(
        cases, cases_path, plan=plan, capabilities=capabilities, prompt_file=prompt_file
    )
    return generate_prompt_set(
        prompt_set,
        out,
        backend=backend,
        generation=generation,
        plan=plan,
        cache_path=cache_path,
        capabilities=capabilities,
        generator=generator,
        arguments=arguments,
        on_prompt_done=on_prompt_done,
    ).output


def write_generation(
    out: Path,
    result: GenerationResult,
    prompts: Sequence[Prompt],
    template: PromptTemplate,
    backend: Backend,
    arguments: dict[str, Any],
    *,
    seed: int,
) -> dict[str, Path]:
    """Candidates at `out`; rejects, prompts and the manifest beside it."""
    files = {
        "rejects": sibling(out, "rejects"),
        "prompts": sibling(out, "prompts"),
        "manifest": sibling(out, "manifest", ".json"),
    }
    write_jsonl(out, result.candidates)
    write_jsonl(files["rejects"], result.rejects)
    write_jsonl(files["prompts"], prompts)
    write_manifest(
        files["manifest"],
        new_manifest(
            "generate",
            arguments,
            seed=seed,
            model_ids={"generator": f"{backend.name}:{backend.model}"},
            prompt_hashes={template.name: template.sha},
            token_usage=result.stats.as_dict(),
        ),
    )
    return files


def combine_candidates(parts: Sequence[StepOutput], out: Path) -> StepOutput:
    """Candidates (and rejects) of several generation steps in one file, each candidate once."""
    seen: set[str] = set()
    candidates: list[Candidate] = []
    rejects: list[Reject] = []
    for part in parts:
        for candidate in read_jsonl(part.path, Candidate):
            if candidate.id not in seen:
                seen.add(candidate.id)
                candidates.append(candidate)
        rejects_path = part.files.get("rejects")
        if rejects_path is not None and rejects_path.exists():
            rejects.extend(read_jsonl(rejects_path, Reject))
    write_jsonl(out, candidates)
    rejects_out = sibling(out, "rejects")
    write_jsonl(rejects_out, rejects)
    summaries = [part.summary for part in parts]
    totals = CombineSummary(
        rejects=len(rejects),
        prompts=sum(summary.prompts for summary in summaries),
        requests=sum(summary.requests for summary in summaries),
        cached_samples=sum(summary.cached_samples for summary in summaries),
        fresh_samples=sum(summary.fresh_samples for summary in summaries),
    )
    return step_output(
        "generate", out, len(candidates), files={"rejects": rejects_out}, summary=totals
    )
