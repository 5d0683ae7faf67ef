"""Benchmark: generation against the scripted OpenAI-compatible server with 100 ms latency.

Sends 400 requests (one sample each) three ways and prints a table:
  serial      concurrency 1: the reference, about 400 x latency
  concurrent  concurrency 16, fresh cache: must take at most 1/10 of serial
  cached      the concurrent run again on its cache: must be at least 100x faster

Run: python benchmarks/generation.py [--requests 400] [--latency 0.1] [--concurrency 16]
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from testaug.core.bundled import resolve_suite
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.generation.cache import ResponseCache
from testaug.generation.prompts import prompt_for
from testaug.generation.sampling import GenerationConfig, generate
from testaug.generation.seeding import build_prompts
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.testing.benchmark import print_checks
from testaug.testing.openai_server import ScriptedOpenAIServer


def reply(prompt: str, index: int) -> str:
    return f" A generated case for prompt {hash(prompt) % 100_000}, sample {index}. }}\n- {{"


def timed_run(prompts, template, server, cache_path: Path, concurrency: int):
    backend = OpenAIBackend(model="bench", api_key="bench", base_url=server.base_url)
    cache = ResponseCache(cache_path)
    before = server.request_count
    started = time.perf_counter()
    result = generate(
        prompts,
        template,
        backend,
        cache,
        GenerationConfig(samples=1, concurrency=concurrency),
    )
    elapsed = time.perf_counter() - started
    cache.close()
    return elapsed, server.request_count - before, len(result.candidates)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()

    template = prompt_for("sentiment")
    cases = list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=20, seed=0))
    per_description = -(-args.requests // len({c.description_id for c in cases}))
    prompts = build_prompts(cases, template, per_description=per_description, seed=0)
    prompts = prompts[: args.requests]
    if len(prompts) < args.requests:
        print(f"only {len(prompts)} distinct prompts available", file=sys.stderr)
        return 1

    rows = []
    with (
        ScriptedOpenAIServer(reply, latency=args.latency) as server,
        tempfile.TemporaryDirectory() as tmp,
    ):
        serial = timed_run(prompts, template, server, Path(tmp) / "serial.sqlite", 1)
        concurrent = timed_run(
            prompts, template, server, Path(tmp) / "concurrent.sqlite", args.concurrency
        )
        cached = timed_run(
            prompts, template, server, Path(tmp) / "concurrent.sqlite", args.concurrency
        )
    rows = [
        ("serial (reference)", 1, *serial),
        ("concurrent", args.concurrency, *concurrent),
        ("cached re-run", args.concurrency, *cached),
    ]

    speedup = serial[0] / concurrent[0]
    cache_speedup = concurrent[0] / cached[0]
    table = Table(
        title=f"generation: {args.requests} requests at {args.latency * 1000:.0f} ms latency"
    )
    for column in ("run", "concurrency", "seconds", "requests sent", "candidates", "vs serial"):
        table.add_column(column, justify="left" if column == "run" else "right")
    for name, conc, seconds, sent, candidates in rows:
        table.add_row(
            name,
            str(conc),
            f"{seconds:.3f}",
            str(sent),
            str(candidates),
            f"{serial[0] / seconds:.1f}x",
        )
    console = Console()
    console.print(table)
    checks = [
        (
            f"concurrency {args.concurrency} takes at most 1/10 of serial",
            speedup >= 10,
            f"{speedup:.1f}x",
        ),
        (
            "cached re-run at least 100x faster than the first run",
            cache_speedup >= 100,
            f"{cache_speedup:.0f}x",
        ),
        ("cached re-run sends no request", cached[1] == 0, f"{cached[1]} sent"),
        (
            "same candidates from cache",
            cached[2] == concurrent[2],
            f"{cached[2]} vs {concurrent[2]}",
        ),
    ]
    return print_checks(console, checks)


if __name__ == "__main__":
    sys.exit(main())
