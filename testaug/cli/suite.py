"""`testaug suite ...`: validate, count and import suites."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console
from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.suites.builtin_lexicons import builtin_lexicons
from testaug.suites.cases import SuiteStats, case_stats, suite_stats
from testaug.suites.load import load_suite
from testaug.suites.tables import RejectedRow, no_case_error, read_table
from testaug.suites.task_labels import check_labels, known_labels

suite_app = typer.Typer(help="Validate, count and import test suites.", no_args_is_help=True)


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
        f"[green]ok[/] {path}: {stats.capabilities} capabilities, {stats.descriptions} descriptions, "
        f"{stats.templates} templates, {len(loaded.lexicons)} lexicons, {stats.cases:,} cases",
        highlight=False,
    )


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
        help="A case table: .jsonl or .csv with capability, description, text (or a pair), label.",
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the cases (JSONL)."),
    task: str | None = typer.Option(None, help="The task, where the table has no task column."),
    labels: str | None = typer.Option(
        None, help="The task's labels, comma-separated; other labels are rejected."
    ),
    label_map: str | None = typer.Option(
        None, help="Raw-to-label mapping, e.g. '0=negative,1=positive'."
    ),
) -> None:
    """Import a published case table as test cases; rows that cannot be read go to a rejects file."""
    mapping = _parse_label_map(label_map)
    wanted_labels = tuple(labels.split(",")) if labels else None
    if wanted_labels is None and task:
        wanted_labels = known_labels(task) or None
    rejects: list[RejectedRow] = []
    found: list[str] = []

    def cases() -> Iterator[TestCase]:
        for item in read_table(table, task=task, labels=wanted_labels, label_map=mapping):
            if isinstance(item, RejectedRow):
                rejects.append(item)
            else:
                check_labels([item], known=wanted_labels, file=table, lines=[None])
                found.append(item.id)
                yield item
        if not found:
            raise no_case_error(table, rejects)

    written = write_jsonl(output, cases())
    rejects_path = output.with_name(output.stem + ".rejects.jsonl")
    if rejects:
        write_jsonl(rejects_path, rejects)
        for reject in rejects[:10]:
            err_console.print(f"{table}:{reject.line}: {reject.reason}", highlight=False)
        if len(rejects) > 10:
            err_console.print(f"... and {len(rejects) - 10} more rows", highlight=False)
    console.print(
        f"[green]imported[/] {written:,} cases to {output}"
        + (
            f"; [yellow]{len(rejects):,} rows rejected[/] (kept in {rejects_path})"
            if rejects
            else ""
        ),
        highlight=False,
    )


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
