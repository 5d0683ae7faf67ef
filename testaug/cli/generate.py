"""`testaug generate`: prompts from seed cases, sent to an LLM backend, parsed into candidates."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, progress, styled
from testaug.cli.options import build_config, output_option, renamed_option
from testaug.core.runs import sibling
from testaug.core.settings import Settings
from testaug.generation.backend_config import BackendConfig, backend_from_options
from testaug.generation.backends import BACKENDS, Backend
from testaug.generation.parsing import REJECT_REASONS
from testaug.generation.sampling import GenerationConfig, GenerationResult
from testaug.steps.augment import (
    Generation,
    PromptPlan,
    PromptSet,
    build_prompt_set,
    generate_prompt_set,
    read_seed_cases,
)

SOURCE = typer.Argument(
    ...,
    metavar="CASES_OR_SUITE",
    help="Seed cases (a .jsonl file of test cases), or a suite: file, folder or shipped name.",
)
BASE_URL = typer.Option(
    None, help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL, else OpenAI)."
)
LLM = typer.Option(
    None,
    "--llm",
    help="The LLM: a model id on the server (openai backend), or a model folder (local "
    "backend; default: the embedded SmolLM2).",
)
PROMPT_FILE = typer.Option(
    None, "--prompt", help="A prompt file (default: the shipped one for the task)."
)
ENDPOINT = typer.Option("completions", help="The openai backend's endpoint: completions or chat.")
CAPABILITY = typer.Option([], help="Only these capabilities (repeat the option for several).")
PER_TEMPLATE = typer.Option(
    20, min=1, help="For a suite: cases sampled per template to draw seeds from."
)
CACHE = output_option(
    None, "--cache", help="Response cache file (default: $TESTAUG_CACHE_DIR/responses.sqlite)."
)


def generate_command(
    source: str = SOURCE,
    output: Path = output_option(..., "-o", "--output", help="Where to write candidates (JSONL)."),
    backend: str = typer.Option("local", help=f"LLM backend: {' or '.join(BACKENDS)}."),
    base_url: str | None = BASE_URL,
    llm: str | None = LLM,
    endpoint: str = ENDPOINT,
    prompt_file: Path | None = PROMPT_FILE,
    prompts_per_description: int = typer.Option(10, min=1, help="Prompts per description."),
    seeds_per_prompt: int = typer.Option(
        3, "--seeds-per-prompt", min=1, help="Seed cases shown as examples in each prompt."
    ),
    samples: int = typer.Option(5, min=1, help="Completions asked per prompt."),
    seed: int = typer.Option(0, help="Seed of the seed-case sampling."),
    capability: list[str] = CAPABILITY,
    per_template: int = PER_TEMPLATE,
    temperature: float = typer.Option(1.0, min=0.0),
    max_tokens: int = typer.Option(48, min=1),
    concurrency: int = typer.Option(8, min=1, help="Requests in flight at once."),
    rpm: float | None = typer.Option(None, min=0.001, help="At most this many requests a minute."),
    timeout: float = typer.Option(60.0, min=0.1, help="Seconds before a request times out."),
    max_attempts: int = typer.Option(6, min=1, help="Tries per request on timeouts, 429, 5xx."),
    cache: Path | None = CACHE,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the first prompt; send nothing."),
    old_model: str | None = typer.Option(None, "--model", hidden=True),
    old_k: int | None = typer.Option(None, "-k", min=1, hidden=True),
) -> None:
    """Generate candidate test cases from seed cases with an LLM, and parse them by brackets."""
    llm = renamed_option(
        llm, old_model, old="--model", new="--llm", default=None, command="generate"
    )
    seeds_per_prompt = renamed_option(
        seeds_per_prompt, old_k, old="-k", new="--seeds-per-prompt", default=3, command="generate"
    )
    settings = Settings()
    plan = PromptPlan(
        prompts_per_description=prompts_per_description,
        seeds_per_prompt=seeds_per_prompt,
        seed=seed,
    )
    cases = read_seed_cases(source, per_template=per_template, seed=seed)
    prompt_set = build_prompt_set(
        cases, source, plan=plan, capabilities=capability, prompt_file=prompt_file
    )
    if dry_run:
        _print_dry_run(prompt_set, samples, backend)
        return
    spec, client = backend_from_options(
        backend, llm, base_url, endpoint, timeout, settings, build=backend_spec
    )
    generation = GenerationConfig(
        samples=samples,
        temperature=temperature,
        max_tokens=max_tokens,
        concurrency=concurrency,
        requests_per_minute=rpm,
        max_attempts=max_attempts,
    )
    done = _generate(
        prompt_set,
        output,
        client,
        spec,
        generation,
        plan,
        cache_path=cache or settings.response_cache_path,
        capabilities=capability,
        arguments={"source": source, "per_template": per_template},
    )
    _print_summary(done.result, output)


def _generate(
    prompt_set: PromptSet,
    output: Path,
    llm: Backend,
    spec: BackendConfig,
    generation: GenerationConfig,
    plan: PromptPlan,
    **options: Any,
) -> Generation:
    """The generation step with a progress bar on stderr, one tick per prompt answered."""
    with progress() as bar:
        task_id = bar.add_task(
            f"generating ({llm.name}: {llm.model})", total=len(prompt_set.prompts)
        )
        return generate_prompt_set(
            prompt_set,
            output,
            backend=llm,
            generation=generation,
            plan=plan,
            generator=spec,
            on_prompt_done=lambda: bar.advance(task_id),
            **options,
        )


def _print_dry_run(prompt_set: PromptSet, samples: int, backend: str) -> None:
    """The first prompt on stdout; what would be sent, on stderr."""
    console.print(prompt_set.prompts[0].text, highlight=False)
    err_console.print(
        styled(
            "[dim]dry run: {:,} prompts x {} samples would go to the {} backend; nothing sent[/]",
            len(prompt_set.prompts),
            samples,
            backend,
        )
    )


def backend_spec(**fields: Any) -> BackendConfig:
    """A `BackendConfig` from the flags' values; a refused value names its flag."""
    return build_config(BackendConfig, flags={"kind": "--backend", "model": "--llm"}, **fields)


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
        "total",
        f"{len(result.candidates):,}",
        *(f"{sum(n for (_, r), n in rejects.items() if r == reason):,}" for reason in reasons),
        style="bold",
    )
    console.print(table)
    stats = result.stats
    console.print(
        styled(
            "[green]wrote[/] {:,} candidates to {}, {:,} rejects to {}",
            len(result.candidates),
            output,
            len(result.rejects),
            sibling(output, "rejects"),
        )
    )
    console.print(
        f"{stats.requests:,} requests ({stats.retries:,} retries), "
        f"{stats.cached_samples:,} samples from the cache, "
        f"{stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} completion tokens",
        highlight=False,
    )
