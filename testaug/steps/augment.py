"""Steps from a suite to candidates: seed cases and generation (ranking is `rank`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Candidate, Prompt, Record, Reject, TestCase
from testaug.core.runs import new_manifest, sibling, write_manifest
from testaug.core.settings import Settings
from testaug.generation.backend_config import BackendConfig, backend_arguments
from testaug.generation.backends import Backend
from testaug.generation.cache import ResponseCache
from testaug.generation.prompts import PromptTemplate, prompt_for
from testaug.generation.sampling import GenerationConfig, GenerationResult, generate
from testaug.generation.seeding import build_prompts
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.cases import capability_names, check_capabilities, expand_suite
from testaug.suites.load import load_suite
from testaug.suites.task_labels import checked

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset(
    {
        "build_prompt_set",
        "generate_prompt_set",
        "one_task",
        "read_seed_cases",
        "write_generation",
    }
)


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


class ExpandConfig(Record):
    """Seed cases from a suite (a file, folder or shipped name): where they go, and the
    seeded sample of cases per template (`per_template`; None: every case)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    suite: str
    out: Path
    per_template: int | None
    seed: int


class GenerateConfig(Record):
    """One generation: the seed cases' file (`cases`), where the candidates go (`out`),
    the sampling (`generation`) and prompt plan (`plan`), the response cache (none: the
    settings' cache where the step runs, so a Dask worker keeps its own), the
    capabilities whose seed cases are used (none: all), a prompt file (default: the task's
    shipped one), the `arguments` recorded in the manifest, and the LLM's record
    (`generator`, recorded without credentials)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out", "cache")

    cases: Path
    out: Path
    generation: GenerationConfig
    plan: PromptPlan
    cache: Path | None = None
    capabilities: tuple[str, ...] = ()
    prompt_file: Path | None = None
    arguments: dict[str, Any] | None = None
    generator: BackendConfig | None = None


class CombineConfig(Record):
    """Several generation steps' outputs (`parts`) and where their candidates go together."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    parts: tuple[StepOutput, ...]
    out: Path


def expand_seed_cases(config: ExpandConfig) -> StepOutput:
    """The suite's templates filled into seed cases (a seeded sample per template)."""
    out = config.out
    loaded = load_suite(resolve_suite(config.suite))
    cases = expand_suite(loaded, per_template=config.per_template, seed=config.seed)
    written = write_jsonl(out, cases)
    logger.info("wrote %d seed cases of suite %s to %s", written, loaded.name, out)
    summary = ExpandSummary(suite=loaded.name, task=loaded.task)
    return step_output("expand", out, written, summary=summary)


def one_task(cases: Sequence[TestCase], source: str | Path) -> str:
    """The task all the cases belong to; an error naming the source when they mix tasks."""
    tasks = sorted({case.task for case in cases})
    if len(tasks) != 1:
        raise InputError(Problem(f"seed cases of several tasks ({', '.join(tasks)})", source))
    return tasks[0]


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
    capabilities: str | Sequence[str] = (),
    prompt_file: Path | None = None,
) -> PromptSet:
    """Prompts from the seed cases of some capabilities (or all; a string is one), with the
    task's shipped template or the one in `prompt_file`; an error naming `source` for a
    capability no seed case has, or when no case is left."""
    named = capability_names(capabilities)
    check_capabilities(named, {case.capability for case in cases}, where=source)
    chosen = [case for case in cases if not named or case.capability in named]
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


def generate_candidates(
    config: GenerateConfig,
    *,
    backend: Backend,
    on_prompt_done: Callable[[], None] | None = None,
) -> StepOutput:
    """Prompts from the seed cases in `config.cases` (of some capabilities, or all), sent
    through the response cache, parsed into candidates; rejects, prompts and the manifest
    are written beside them."""
    cases = list(read_jsonl(config.cases, TestCase))
    prompt_set = build_prompt_set(
        cases,
        config.cases,
        plan=config.plan,
        capabilities=config.capabilities,
        prompt_file=config.prompt_file,
    )
    return generate_prompt_set(
        prompt_set,
        config.out,
        backend=backend,
        generation=config.generation,
        plan=config.plan,
        cache_path=config.cache or Settings().response_cache_path,
        capabilities=config.capabilities,
        generator=config.generator,
        arguments=config.arguments,
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


def combine_candidates(config: CombineConfig) -> StepOutput:
    """Candidates (and rejects) of several generation steps in one file, each candidate once."""
    parts, out = config.parts, config.out
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
