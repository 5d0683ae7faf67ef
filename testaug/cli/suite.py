"""`testaug suite ...`: validate, count, import and export suites."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import output_option
from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Source, TestCase
from testaug.suites.builtin_lexicons import builtin_lexicons, builtins_used
from testaug.suites.cases import SuiteStats, case_stats, suite_stats
from testaug.suites.export import (
    FORMATS,
    check_replaceable,
    export_cases,
    export_format,
    source_cases,
)
from testaug.suites.load import load_suite
from testaug.suites.tables import ImportNotes, RejectedRow, no_case_error, read_table
from testaug.suites.task_labels import bundled_task, check_labels, known_labels

suite_app = typer.Typer(
    help="Validate, count, import and export test suites.", no_args_is_help=True
)


@suite_app.command("validate")
def validate_command(
    suite: str = typer.Argument(
        ..., help="A suite YAML file, a folder holding suite.yaml, or a shipped suite's name."
    ),
) -> None:
    """Check a suite and its lexicons; list every problem with file, line and field."""
    path = resolve_suite(suite)
    try:
        loaded = load_suite(path)
    except InputError as exc:
        for problem in exc.problems:
            err_console.print(str(problem), highlight=False, soft_wrap=True)
        count = len(exc.problems)
        raise InputError(Problem(f"{count} problem{'s' * (count > 1)} found", path)) from None
    stats = suite_stats(loaded)
    console.print(
        styled(
            "[green]ok[/] {}: {} capabilities, {} descriptions, {} templates, {} lexicons, "
            "{:,} cases",
            path,
            stats.capabilities,
            stats.descriptions,
            stats.templates,
            len(loaded.lexicons),
            stats.cases,
        )
    )
    if used := builtins_used(loaded):
        console.print(f"built-in lexicons used: {', '.join(used)}", highlight=False)


@suite_app.command("stats")
def stats_command(
    source: str = typer.Argument(
        ..., help="A suite (YAML file, folder or shipped name) or a cases JSONL file."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
) -> None:
    """Count capabilities, descriptions, templates and cases (per description too)."""
    path = Path(source)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        stats = case_stats(read_jsonl(path, TestCase))
    else:
        stats = suite_stats(load_suite(resolve_suite(source)))
    if as_json:
        typer.echo(json.dumps(stats.model_dump(), ensure_ascii=False))
        return
    console.print(_stats_table(stats, str(source)))


def _stats_table(stats: SuiteStats, title: str) -> Table:
    table = Table(title=f"{title} ({stats.task})", title_justify="left")
    table.add_column("capability")
    table.add_column("description", overflow="fold")
    table.add_column("templates", justify="right")
    table.add_column("cases", justify="right")
    for row in stats.per_description:
        table.add_row(row.capability, row.description, str(row.templates), f"{row.cases:,}")
    table.add_section()
    table.add_row(
        f"{stats.capabilities} capabilities",
        f"{stats.descriptions} descriptions",
        str(stats.templates),
        f"{stats.cases:,}",
        style="bold",
    )
    return table


@suite_app.command("lexicons")
def lexicons_command(
    name: str | None = typer.Argument(None, help="Print this built-in lexicon's words."),
) -> None:
    """List the built-in lexicons any suite may use ({first_name}, {city}, ...), with
    counts and sources; a suite's own lexicon of the same name wins."""
    lexicons = builtin_lexicons()
    if name is not None:
        if name not in lexicons:
            known = ", ".join(lexicons)
            raise InputError(Problem(f"no built-in lexicon {name!r} (built-in: {known})"))
        for word in lexicons[name].words:
            typer.echo(word)
        return
    table = Table(title="built-in lexicons", title_justify="left")
    for column in ("lexicon", "words", "examples", "file", "source", "licence"):
        table.add_column(column, overflow="fold", justify="right" if column == "words" else "left")
    for lexicon in lexicons.values():
        source = f"alias of {lexicon.alias_of}" if lexicon.alias_of else lexicon.source
        examples = ", ".join(lexicon.words[:3])
        row = (lexicon.name, str(len(lexicon.words)), examples, lexicon.file, source)
        table.add_row(*row, "" if lexicon.alias_of else lexicon.licence)
    console.print(table)


@suite_app.command("import")
def import_command(
    table: Path = typer.Argument(
        ...,
        help="A case table: .jsonl or .csv with capability, description, text (or a pair), "
        "label. Pickles are refused (never unpickled).",
    ),
    output: Path = output_option(..., "-o", "--output", help="Where to write the cases (JSONL)."),
    task: str | None = typer.Option(
        None,
        help="The task, where the table has no task column; a paper's name (qqp, sst2, mnli, "
        "snli) is read as the bundled task.",
    ),
    labels: str | None = typer.Option(
        None, help="The task's labels, comma-separated; other labels are rejected."
    ),
    label_map: str | None = typer.Option(
        None,
        help="Raw-to-label mapping, e.g. '0=negative,1=positive'; without it numeric labels "
        "follow the task's documented order (sentiment 0=negative, 1=neutral, 2=positive; "
        "sst2 0=negative, 1=positive; qqp/paraphrase 0=not_duplicate, 1=duplicate; "
        "mnli/snli/nli 0=entailment, 1=neutral, 2=contradiction).",
    ),
    source: str | None = typer.Option(
        None,
        "--source",
        help="Where the cases came from: template, llm or expansion (default: template). "
        "Import LLM-written published suites, such as TestAug's released GPT-3 suites, with "
        "--source llm, so that reports do not count them as verified template cases. A row's own "
        "source cell wins over this option.",
    ),
) -> None:
    """Import a published case table as test cases; rows that cannot be read go to a rejects file."""
    mapping = _parse_label_map(label_map)
    chosen = _source(source)
    wanted_labels = tuple(labels.split(",")) if labels else None
    if wanted_labels is None and task:
        wanted_labels = known_labels(bundled_task(task)) or None
    rejects: list[RejectedRow] = []
    notes = ImportNotes()
    found = 0

    def cases() -> Iterator[TestCase]:
        nonlocal found
        items = read_table(
            table, task=task, labels=wanted_labels, label_map=mapping, notes=notes, source=chosen
        )
        task_labels: dict[str, tuple[str, ...]] = {}  # each task's labels, read once
        for item in items:
            if isinstance(item, RejectedRow):
                rejects.append(item)
            else:
                check_labels(
                    [item], known=wanted_labels, file=table, lines=[None], cache=task_labels
                )
                found += 1
                yield item
        if not found:
            raise no_case_error(table, rejects)

    written = write_jsonl(output, cases())
    rejects_path = output.with_name(output.stem + ".rejects.jsonl")
    if rejects:
        write_jsonl(rejects_path, rejects)
        for reject in rejects[:10]:
            err_console.print(str(reject.problem(table)), highlight=False, soft_wrap=True)
        if len(rejects) > 10:
            err_console.print(f"... and {len(rejects) - 10} more rows", highlight=False)
    for note, count in notes.counts.items():
        console.print(f"{note} ({count:,} rows)", highlight=False, soft_wrap=True)
    line = styled("[green]imported[/] {:,} cases to {}", written, output)
    if rejects:
        line += styled("; [yellow]{:,} rows rejected[/] (kept in {})", len(rejects), rejects_path)
    console.print(line)


@suite_app.command("export")
def export_command(
    source: str = typer.Argument(
        ...,
        help="A suite (YAML file, folder or shipped name; its cases expanded) or a cases "
        "JSONL file.",
    ),
    output: Path = output_option(
        ...,
        "-o",
        "--output",
        kind="file or folder",
        help="Where to write: .csv, .jsonl, .parquet, or a folder for a Hugging Face "
        "datasets folder (load_from_disk).",
    ),
    fmt: str | None = typer.Option(
        None, "--format", help=f"One of {', '.join(FORMATS)} (default: by the output's suffix)."
    ),
    per_template: int | None = typer.Option(
        None,
        "--per-template",
        min=1,
        help="For a suite: sample this many cases per template (default: every case).",
    ),
    seed: int = typer.Option(0, help="Seed of the per-template samples."),
) -> None:
    """Export a suite's cases as a table that pandas and `datasets` read, one row a case."""
    chosen = export_format(output, fmt)
    check_replaceable(output)
    written = export_cases(
        source_cases(source, per_template=per_template, seed=seed), output, chosen
    )
    console.print(styled("[green]exported[/] {:,} cases to {} ({})", written, output, chosen))


def _source(text: str | None) -> Source | None:
    if text is None:
        return None
    for source in get_args(Source):
        if text.strip().lower() == source:
            return source
    sources = ", ".join(get_args(Source))
    raise InputError(Problem(f"expected one of {sources}, got {text!r}", field="--source"))


def _parse_label_map(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    mapping = {}
    for item in text.split(","):
        raw, sep, label = item.partition("=")
        if not sep or not raw.strip() or not label.strip():
            raise InputError(Problem(f"expected RAW=LABEL, got {item!r}", field="--label-map"))
        mapping[raw.strip()] = label.strip()
    return mapping
