"""`testaug generate`: prompts from seed cases, sent to an LLM backend, parsed into candidates."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, progress
from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.core.runs import sibling
from testaug.core.settings import Settings
from testaug.generation.backends import BACKENDS, create_backend
from testaug.generation.backends.openai_compatible import Endpoint
from testaug.generation.cache import ResponseCache
from testaug.generation.parsing import REJECT_REASONS
from testaug.generation.prompts import prompt_for
from testaug.generation.sampling import GenerationResult, GenerationSettings, generate
from testaug.generation.seeding import build_prompts
from testaug.steps.augment import one_task, write_generation
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


def generate_command(
    source: str = typer.Argument(
        ...,
        metavar="CASES_OR_SUITE",
        help="Seed cases (a .jsonl file of test cases), or a suite: file, folder or shipped name.",
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write candidates (JSONL)."),
    backend: str = typer.Option("local", help=f"LLM backend: {' or '.join(BACKENDS)}."),
    base_url: str | None = typer.Option(
        None, help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL, else OpenAI)."
    ),
    model: str | None = typer.Option(
        None, help="Model id (openai), or a model path (local; default: the embedded SmolLM2)."
    ),
    endpoint: str = typer.Option("completions", help="openai endpoint: completions or chat."),
    prompt_file: Path | None = typer.Option(
        None, "--prompt", help="A prompt file (default: the shipped one for the task)."
    ),
    prompts_per_description: int = typer.Option(10, min=1, help="Prompts per description."),
    seeds_per_prompt: int = typer.Option(3, "--seeds-per-prompt", "-k", min=1),
    samples: int = typer.Option(5, min=1, help="Completions asked per prompt."),
    seed: int = typer.Option(0, help="Seed of the seed-case sampling."),
    capability: list[str] = typer.Option(
        [], help="Only these capabilities (repeat the option for several)."
    ),
    per_template: int = typer.Option(
        20, min=1, help="For a suite: cases sampled per template to draw seeds from."
    ),
    temperature: float = typer.Option(1.0, min=0.0),
    max_tokens: int = typer.Option(48, min=1),
    concurrency: int = typer.Option(8, min=1, help="Requests in flight at once."),
    rpm: float | None = typer.Option(None, min=0.001, help="At most this many requests a minute."),
    timeout: float = typer.Option(60.0, min=0.1, help="Seconds before a request times out."),
    max_attempts: int = typer.Option(6, min=1, help="Tries per request on timeouts, 429, 5xx."),
    cache: Path | None = typer.Option(
        None, help="Response cache file (default: $TESTAUG_CACHE_DIR/responses.sqlite)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the first prompt; send nothing."),
) -> None:
    """Generate candidate test cases from seed cases with an LLM, and parse them by brackets."""
    settings = Settings()
    cases = _seed_cases(source, per_template, seed)
    if capability:
        cases = [case for case in cases if case.capability in capability]
    if not cases:
        raise InputError(Problem("no seed cases (check --capability)", source))
    task = one_task(cases, source)
    template = prompt_for(task, path=prompt_file)
    prompts = build_prompts(
        cases, template, per_description=prompts_per_description, k=seeds_per_prompt, seed=seed
    )
    if dry_run:
        console.print(prompts[0].text, highlight=False, markup=False)
        err_console.print(
            f"[dim]dry run: {len(prompts):,} prompts x {samples} samples would go to the "
            f"{backend} backend; nothing sent[/]",
            highlight=False,
        )
        return

    llm = create_backend(
        backend,
        model=model,
        base_url=base_url or settings.base_url,
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else None,
        endpoint=_endpoint(endpoint),
        timeout=timeout,
        cache_dir=settings.cache_dir,
    )
    generation = GenerationSettings(
        samples=samples,
        temperature=temperature,
        max_tokens=max_tokens,
        concurrency=concurrency,
        requests_per_minute=rpm,
        max_attempts=max_attempts,
    )
    response_cache = ResponseCache(cache or settings.response_cache_path)
    with progress() as bar:
        task_id = bar.add_task(f"generating ({llm.name}: {llm.model})", total=len(prompts))
        result = generate(
            prompts,
            template,
            llm,
            response_cache,
            generation,
            known_cases=cases,
            on_prompt_done=lambda: bar.advance(task_id),
        )
    response_cache.close()

    arguments = {
        "source": source,
        "backend": backend,
        "base_url": _without_credentials(base_url or settings.base_url),
        "model": llm.model,
        "endpoint": endpoint,
        "prompts_per_description": prompts_per_description,
        "seeds_per_prompt": seeds_per_prompt,
        "capability": capability,
        "per_template": per_template,
        **generation.model_dump(),
    }
    write_generation(output, result, prompts, template, llm, arguments, seed=seed)
    _print_summary(result, output)


def _seed_cases(source: str, per_template: int, seed: int) -> list[TestCase]:
    path = Path(source)
    if path.suffix == ".jsonl" and path.is_file():
        return list(read_jsonl(path, TestCase))
    suite = load_suite(resolve_suite(source))
    return list(expand_suite(suite, per_template=per_template, seed=seed))


def _endpoint(value: str) -> Endpoint:
    if value not in ("chat", "completions"):
        raise InputError(Problem("expected chat or completions", field="--endpoint"))
    return value  # type: ignore[return-value]


def _without_credentials(url: str | None) -> str | None:
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _print_summary(result: GenerationResult, output: Path) -> None:
    candidates = Counter(c.capability for c in result.candidates)
    rejects = Counter((r.capability, r.reason) for r in result.rejects)
    reasons = [r for r in REJECT_REASONS if any(reason == r for _, reason in rejects)]
    capabilities = list(dict.fromkeys([*candidates, *(c for c, _ in rejects)]))
    table = Table(title_justify="left")
    table.add_column("capability")
    table.add_column("candidates", justify="right")
    for reason in reasons:
        table.add_column(reason.replace("_", " "), justify="right", style="yellow")
    for name in capabilities:
        table.add_row(name, f"{candidates[name]:,}", *(f"{rejects[(name, r)]:,}" for r in reasons))
    table.add_row(
        "[bold]total[/]",
        f"[bold]{len(result.candidates):,}[/]",
        *(
            f"[bold]{sum(n for (_, r), n in rejects.items() if r == reason):,}[/]"
            for reason in reasons
        ),
    )
    console.print(table)
    stats = result.stats
    console.print(
        f"[green]wrote[/] {len(result.candidates):,} candidates to {output}, "
        f"{len(result.rejects):,} rejects to {sibling(output, 'rejects')}",
        highlight=False,
    )
    console.print(
        f"{stats.requests:,} requests ({stats.retries:,} retries), "
        f"{stats.cached_samples:,} samples from the cache, "
        f"{stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} completion tokens",
        highlight=False,
    )
