"""`testaug suite diversity`: Self-BLEU and unique dependency paths of test cases, by group."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import choice
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase

if TYPE_CHECKING:
    from testaug.diversity.measures import DiversityReport, DiversityRow


def diversity_command(
    cases: Path = typer.Argument(
        ..., help="Test cases (JSONL), e.g. from `testaug templates expand`."
    ),
    by: str = typer.Option(
        "source", help="Group by a comma list of capability, description, source ('' for none)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    per_description: int | None = typer.Option(
        None,
        "--per-description",
        min=1,
        help="Cases kept per description in each group (default: the smallest count).",
    ),
    no_equalize: bool = typer.Option(
        False, "--no-equalize", help="Measure every case: no per-description sub-sampling."
    ),
    seed: int = typer.Option(0, help="Seed of the sub-samples."),
    variant: str = typer.Option(
        "sacrebleu",
        help="How Self-BLEU is computed: sacrebleu, or texygen (NLTK's BLEU with its "
        "smoothing method 1, as the Texygen benchmark does).",
    ),
    sample: int | None = typer.Option(
        None,
        "--sample",
        min=2,
        help="In larger groups, estimate Self-BLEU from this many sampled cases (with a 95% "
        "interval).",
    ),
    batch_size: int = typer.Option(256, min=1, help="Texts per spaCy parsing batch."),
) -> None:
    """How diverse test cases are: how much they share word sequences with each other
    (Self-BLEU-4; lower is more diverse) and how many distinct sentence structures they have
    (unique dependency paths; higher is more diverse)."""
    from testaug.core.errors import TestAugError
    from testaug.diversity.measures import diversity_report, diversity_summary, parse_dimensions
    from testaug.diversity.self_bleu import Variant

    checked: Variant = choice(Variant, variant, "--variant")
    items = list(read_jsonl(cases, TestCase))
    if not items:
        raise TestAugError(f"{cases}: no test cases")
    dimensions = parse_dimensions(by)
    err_console.print(styled("[dim]measuring {:,} cases[/]", len(items)))
    report = diversity_report(
        items,
        by=dimensions,
        per_description=per_description,
        equalize_sizes=not no_equalize,
        seed=seed,
        variant=checked,
        sample=sample,
        batch_size=batch_size,
    )
    if as_json:
        typer.echo(json.dumps(diversity_summary(report).model_dump(mode="json")))
        return
    console.print(_table(report))
    size = (
        f"{report.per_description} per description within each group"
        if report.per_description
        else "every case"
    )
    console.print(
        f"{report.n_cases:,} of {report.n_input:,} cases measured ({size}, seed {report.seed})",
        highlight=False,
    )
    if report.n_short_cells:
        console.print(
            styled(
                "[yellow]{} description(s) have fewer cases than that in some group[/] and "
                "were kept whole",
                report.n_short_cells,
            )
        )


def _table(report: DiversityReport) -> Table:
    """A rich table: the whole input first, then each group."""
    scale = "Self-BLEU-4" if report.max_order == 4 else f"Self-BLEU-{report.max_order}"
    table = Table(
        title=f"diversity ({scale}, {report.variant}; lower is more diverse)",
        title_justify="left",
    )
    for dimension in report.by or ("cases",):
        table.add_column(dimension)
    for column in ("n", "descriptions", "Self-BLEU", "95% interval", "dependency paths"):
        table.add_column(column, justify="right")
    table.add_row(*_cells(report.whole, report.by or ("cases",), "whole input"), style="bold")
    table.add_row(*_cells(report.overall, report.by or ("cases",), "equalized"), style="bold")
    for row in report.groups:
        table.add_row(*_cells(row, report.by, ""))
    return table


def _cells(row: DiversityRow, by: tuple[str, ...], fill: str) -> list[str]:
    """One table row: group values, counts, Self-BLEU (and its interval), dependency paths."""
    interval = ""
    if row.self_bleu_ci is not None:
        low, high = row.self_bleu_ci
        interval = f"{low:.3f}-{high:.3f} ({row.self_bleu_sampled:,} sampled)"
    return [
        *(row.group.get(dimension, fill) for dimension in by),
        f"{row.n_cases:,}",
        f"{row.n_descriptions:,}",
        f"{row.self_bleu:.3f}",
        interval,
        f"{row.dependency_paths:,}",
    ]
