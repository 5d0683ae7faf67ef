"""`testaug evaluate models`: error rates of models under test on a suite's cases, per
capability, description, test type, source and provenance, with CheckList's INV and DIR
perturbation tests; the headline rates rest on verified evidence unless `--evidence all`."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from tempfile import TemporaryDirectory

import typer
from rich.progress import Progress, TaskID
from rich.table import Table

from testaug.cli import gate
from testaug.cli.console import console, err_console, progress, styled
from testaug.cli.options import build_config, output_option
from testaug.core.jsonl import read_json
from testaug.core.overwrites import existing, refuse_overwriting_inputs
from testaug.core.run_folder import RunFolder
from testaug.core.runs import sibling
from testaug.evaluation.failures import FailureRate, interval_text
from testaug.evaluation.summary import EvaluationSummary, ModelSummary
from testaug.suites.provenance import MEANINGS, PROVENANCES


def evaluate_command(
    cases_path: Path = typer.Argument(..., metavar="CASES", help="Test cases (JSONL)."),
    model: list[str] = typer.Option(
        ...,
        "--model",
        help="A model under test (repeatable): vader, spacy:NAME, hf:PATH[?labels=..], "
        "llm:openai:MODEL[?labels=..&base_url=URL], llm:local, py:MODULE:FUNCTION.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    output: Path | None = output_option(
        None, "-o", "--output", help="Also write the JSON here (and every case's result beside it)."
    ),
    perturb: int = typer.Option(
        100,
        "--perturb",
        min=0,
        help="Cases each perturbation test changes (typos, names, negations, ...; 0: none).",
    ),
    labels: str | None = typer.Option(
        None, help="The task's labels, comma-separated (default: the bundled suite's)."
    ),
    seed: int = typer.Option(0, help="Seed of the perturbation samples."),
    batch_size: int = typer.Option(32, min=1, help="Cases a model predicts at once."),
    examples: int = typer.Option(3, min=0, help="Failing examples kept per group."),
    evidence: str = typer.Option(
        "verified",
        help="What the headline error rates rest on: verified (template seeds, cases accepted "
        "by people, their expansions) or all (ranker-accepted cases too).",
    ),
    suite: str | None = typer.Option(
        None, "--suite", help="A suite (file, folder or shipped name) whose gate: section to check."
    ),
    gate_file: Path | None = gate.GATE_FILE_OPTION,
    max_error: list[str] = gate.MAX_ERROR_OPTION,
    max_unverified: float | None = gate.MAX_UNVERIFIED_OPTION,
    min_precision: float | None = gate.MIN_PRECISION_OPTION,
    pool_test_types: bool | None = gate.POOL_OPTION,
    junit: Path | None = gate.JUNIT_OPTION,
) -> None:
    """Error rates of models under test: each model on the cases, and on perturbed copies
    of them that should keep (or change) its answer. With a gate, exit 1 on a breach."""
    from testaug.steps.measure import EvaluationConfig, SuiteEvaluationConfig, evaluate_suite

    refuse_overwriting_inputs(
        {
            "--output": output,
            "--output's results file": sibling(output, "results") if output else None,
            "--junit": junit,
        },
        {"CASES": cases_path, "--gate": gate_file, "--suite": existing(suite)},
    )
    config = gate.build_gate(
        suite=suite,
        gate_file=gate_file,
        max_error=max_error,
        max_unverified=max_unverified,
        min_precision=min_precision,
        pool_test_types=pool_test_types,
        junit=junit,
    )

    options = build_config(
        EvaluationConfig,
        perturb=perturb,
        labels=labels,
        seed=seed,
        batch_size=batch_size,
        examples=examples,
        evidence=evidence,
    )
    with TemporaryDirectory(prefix="testaug-evaluate-") as work, progress() as bar:
        target = output or RunFolder(Path(work)).evaluation
        evaluation = build_config(
            SuiteEvaluationConfig,
            flags={"cases": "CASES", "models": "--model", "out": "--output"},
            cases=cases_path,
            models=tuple(model),
            out=target,
            work=Path(work),
            evaluation=options,
        )
        evaluate_suite(evaluation, on_progress=_progress_on(bar))
        summary = read_json(target, EvaluationSummary)
    if as_json:
        typer.echo(json.dumps(summary.model_dump(mode="json")))
    else:
        _print(summary)
        if output is not None:
            console.print(styled("[green]wrote[/] {} and {}", output, sibling(output, "results")))
    if config is not None:
        from testaug.evaluation.gate import check_gate

        gate.enforce_gate(
            check_gate(summary, config), junit, out=err_console if as_json else console
        )


def _progress_on(bar: Progress) -> Callable[[str, int, int | None], None]:
    """A progress callback that shows each stage as a row of the bar."""
    rows: dict[str, TaskID] = {}

    def update(what: str, done: int, total: int | None) -> None:
        if what not in rows:
            rows[what] = bar.add_task(what, total=total)
        bar.update(rows[what], completed=done, total=total)

    return update


def _print(summary: EvaluationSummary) -> None:
    models = summary.models
    table = Table(
        title="error rate per capability and test type (95% interval)", title_justify="left"
    )
    table.add_column("capability")
    table.add_column("test type")
    for item in models:
        table.add_column(item.model, justify="right")
    keys = list(
        dict.fromkeys((c, t) for item in models for c, row in item.matrix.items() for t in row)
    )
    for capability, test_type in keys:
        cells = [_rate(item.matrix.get(capability, {}).get(test_type)) for item in models]
        table.add_row(capability, test_type, *cells)
    table.add_row("all", "", *(_rate(item.overall) for item in models), style="bold")
    console.print(table)
    _print_provenance(models)
    console.print(
        f"{summary.n_cases:,} cases and {summary.n_perturbed:,} perturbed cases",
        highlight=False,
    )
    for item in models:
        head = item.headline
        unverified = head is not None and (head.fallback or head.evidence == "all")
        line = styled(
            "[" + ("yellow" if unverified else "bold") + "]{}[/]: error rate {}; {}",
            item.model,
            _rate(head.overall if head else None),
            head.note if head else "",
        )
        if head and head.interval_note and unverified:
            line.append(f"; {head.interval_note}")
        console.print(line)
        if item.overall.unparsed:
            console.print(
                styled(
                    "[yellow]{}[/]: {:,} unparseable answers (no label in them), left out of "
                    "the error rates",
                    item.model,
                    item.overall.unparsed,
                )
            )


def _print_provenance(models: Sequence[ModelSummary]) -> None:
    """Error rates by provenance, the unverified rows marked."""
    table = Table(title="error rate per provenance (95% interval)", title_justify="left")
    table.add_column("provenance")
    for item in models:
        table.add_column(item.model, justify="right")
    table.add_column("what")
    for name in PROVENANCES:
        if not any(name in item.by_provenance for item in models):
            continue
        meaning = MEANINGS[name]
        cells = [_rate(item.by_provenance.get(name)) for item in models]
        style = "yellow" if meaning.startswith("unverified") else None
        table.add_row(name, *cells, meaning, style=style)
    console.print(table)


def _rate(cell: FailureRate | None) -> str:
    return interval_text(cell)
