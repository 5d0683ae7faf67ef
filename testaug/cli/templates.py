"""`testaug templates induce`: new templates from accepted generated cases."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer
import yaml
from rich.table import Table

from testaug.bundled import resolve_suite
from testaug.cases import template_case_counts
from testaug.cli.console import console, err_console
from testaug.errors import InputError, Problem
from testaug.jsonl import read_jsonl, write_jsonl
from testaug.records import TestCase
from testaug.runs import sibling
from testaug.suites import load_suite
from testaug.templates import lexicon_of

templates_app = typer.Typer(help="Templates from generated cases.", no_args_is_help=True)


@templates_app.command("induce")
def induce_command(
    accepted_path: Path = typer.Argument(
        ..., metavar="ACCEPTED", help="Accepted generated cases (JSONL), e.g. accepted.jsonl."
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the templates (YAML)."),
    cases: Path | None = typer.Option(
        None, "--cases", help="The seed cases with their fills (default: cases.jsonl beside it)."
    ),
    suite: str | None = typer.Option(
        None, "--suite", help="The suite whose lexicons fill the slots (default: the task's)."
    ),
) -> None:
    """Turn reused slot words of the seed cases back into slots: one template per case.
    Writes the templates as a suite (source `expansion`) that `testaug expand` takes."""
    from testaug.induction import induce_templates, induced_suite, lexicons_used
    from testaug.spacy_pipeline import load_spacy

    accepted = list(read_jsonl(accepted_path, TestCase))
    if not accepted:
        raise InputError(Problem("no accepted cases in the file", file=accepted_path))
    cases = cases or accepted_path.with_name("cases.jsonl")
    seeds = {case.id: case for case in read_jsonl(cases, TestCase)}
    loaded = load_suite(resolve_suite(suite or accepted[0].task))
    with err_console.status(f"parsing {len(accepted):,} cases and their seeds with spaCy"):
        result = induce_templates(accepted, seeds, load_spacy())
    templates = []
    skipped = Counter(result.skipped)
    for template in result.templates:
        if all(lexicon_of(t) in loaded.lexicons for t in template.slots):
            templates.append(template)
        else:
            skipped["unknown_lexicon"] += 1

    lexicon_path = sibling(output, "lexicons", ".yaml")
    used = lexicons_used(templates)
    _write_yaml(lexicon_path, {name: list(loaded.lexicons[name].words) for name in used})
    document = induced_suite(
        templates,
        name=f"{loaded.name}-induced",
        task=loaded.task,
        labels=loaded.labels,
        lexicon_file=lexicon_path.name,
    )
    _write_yaml(output, document)
    write_jsonl(sibling(output, "induced"), templates)
    expanded = sum(template_case_counts(load_suite(output)).values()) if templates else 0

    table = Table(title_justify="left")
    table.add_column("capability")
    table.add_column("templates", justify="right")
    for capability, count in Counter(t.capability for t in templates).items():
        table.add_row(capability, f"{count:,}")
    console.print(table)
    reasons = ", ".join(f"{n} {reason}" for reason, n in skipped.items()) or "none"
    console.print(
        f"[green]induced[/] {len(templates):,} templates from {len(accepted):,} cases into "
        f"{output} (lexicons: {lexicon_path.name}; provenance: "
        f"{sibling(output, 'induced').name}); they fill {expanded:,} cases; skipped: {reasons}",
        highlight=False,
    )


def _write_yaml(path: Path, data: object) -> None:
    """Write YAML atomically."""
    import os
    import uuid

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
