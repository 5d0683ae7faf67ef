"""`testaug templates expand`: a suite's templates filled into test cases (JSONL)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, progress, styled
from testaug.cli.options import output_option
from testaug.core.bundled import resolve_suite
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.suites.cases import expand_suite, template_case_counts
from testaug.suites.load import load_suite


def expand_command(
    suite: str = typer.Argument(
        ..., help="A suite YAML file, a folder holding suite.yaml, or a shipped suite's name."
    ),
    output: Path = output_option(..., "-o", "--output", help="Where to write the cases (JSONL)."),
    per_template: int | None = typer.Option(
        None,
        "--per-template",
        min=1,
        help="Sample this many cases per template (default: every case).",
    ),
    seed: int = typer.Option(0, help="Seed of the per-template samples."),
    exclude: list[Path] = typer.Option(
        [], "--exclude", help="Leave out cases already in these files (JSONL; repeatable)."
    ),
) -> None:
    """Fill the suite's templates with its lexicons: every case, or a seeded sample per template."""
    loaded = load_suite(resolve_suite(suite))
    known = {case.id for path in exclude for case in read_jsonl(path, TestCase)}
    excluded = 0
    expected = sum(min(n, per_template or n) for n in template_case_counts(loaded).values())
    per_capability: Counter[str] = Counter()

    with progress() as bar:
        task = bar.add_task("expanding", total=expected)

        def counted() -> Iterator[TestCase]:
            nonlocal excluded
            for case in expand_suite(loaded, per_template=per_template, seed=seed):
                bar.advance(task)
                if case.id in known:
                    excluded += 1
                    continue
                per_capability[case.capability] += 1
                yield case

        cases = counted()
        if loaded.source == "expansion":  # induced templates: trace each case to its origin
            from testaug.core.runs import sibling
            from testaug.steps.grow import traced_to_origin

            cases = traced_to_origin(cases, sibling(resolve_suite(suite), "induced"))
        written = write_jsonl(output, cases)

    table = Table(title_justify="left")
    table.add_column("capability")
    table.add_column("cases", justify="right")
    for capability, count in per_capability.items():
        table.add_row(capability, f"{count:,}")
    console.print(table)
    console.print(styled("[green]wrote[/] {:,} cases to {}", written, output))
    if excluded:
        listed = ", ".join(map(str, exclude))
        console.print(styled("[yellow]{:,} cases left out[/]: already in {}", excluded, listed))
    if written + excluded < expected:
        skipped = expected - written - excluded
        console.print(
            styled(
                "[yellow]{:,} duplicate cases skipped[/] (same text from two templates)", skipped
            )
        )
