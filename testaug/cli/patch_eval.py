"""`testaug evaluate patching`: which of two suites finds more errors? Fine-tune the model
under test on part of each and compare the error on the same held-out cases (TestAug's
patching protocol), or hold out whole functionalities, classes or test types instead."""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from testaug.cli.console import console, err_console
from testaug.cli.options import build_config, output_option
from testaug.core.jsonl import read_json
from testaug.core.run_folder import RunFolder

if TYPE_CHECKING:
    from testaug.fixing.patching.report import PatchingReport


def patch_eval_command(
    suite_a: Path = typer.Option(..., "--suite-a", help="Suite A's cases (JSONL)."),
    suite_b: Path = typer.Option(..., "--suite-b", help="Suite B's cases (JSONL)."),
    model: str = typer.Option(
        ...,
        "--model",
        help="The model under test, a Hugging Face classifier: hf:PATH_OR_ID[?labels=neg,pos], "
        "a path or hub id, or minilm (the shipped MiniLM encoder with a new head).",
    ),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Runs, with seeds 42, 43, ..."),
    split: str = typer.Option(
        "random",
        "--split",
        help="Which cases are held out for testing: random cases, or whole functionalities "
        "(func), capabilities (class) or test types (type).",
    ),
    iid: Path | None = typer.Option(
        None,
        "--iid",
        help="Ordinary labelled examples (JSONL with text, label), to also score the "
        "generalization of each patched model.",
    ),
    test_fraction: float = typer.Option(
        0.5, min=0.05, max=0.95, help="The share of cases held out for testing."
    ),
    epochs: int = typer.Option(3, min=1, help="Fine-tuning epochs (TestAug used 3)."),
    learning_rate: float = typer.Option(
        5e-6, help="Fine-tuning learning rate (TestAug used 5e-6)."
    ),
    batch_size: int = typer.Option(8, min=1, help="Fine-tuning batch size (TestAug used 8)."),
    max_length: int = typer.Option(128, min=8, help="Tokens kept per text (TestAug used 128)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    output: Path | None = output_option(None, "-o", "--output", help="Also write the JSON here."),
) -> None:
    """Which of two suites finds more errors: the model's error rate on the same held-out
    cases before and after fine-tuning on suite A and on suite B (mean and standard
    deviation over seeds, overall and per capability)."""
    from testaug.steps.patch import PatchingConfig, PatchSuitesConfig, patch_suites

    options = build_config(
        PatchingConfig,
        seeds=seeds,
        split=split,
        test_fraction=test_fraction,
        epochs=epochs,
        learning_rate=learning_rate,
        batch_size=batch_size,
        max_length=max_length,
    )
    with TemporaryDirectory(prefix="testaug-patch-") as work:
        target = output or RunFolder(Path(work)).patching
        config = build_config(
            PatchSuitesConfig,
            flags={"out": "--output"},
            suite_a=suite_a,
            suite_b=suite_b,
            model=model,
            out=target,
            iid=iid,
            patching=options,
        )
        with err_console.status("patching") as status:
            patch_suites(config, on_progress=lambda message: status.update(message))
        summary = read_json(target, patching_report())
    if as_json:
        typer.echo(json.dumps(summary.model_dump(mode="json")))
        return
    _print(summary)


def _print(summary: PatchingReport) -> None:
    a, b = summary.suite_names
    table = Table(
        title=f"ERR% on the same test split ({summary.strategy} split, "
        f"{summary.overall.n_runs} run(s)); mean ± std",
        title_justify="left",
    )
    for column in ("", "unpatched", f"patched on {a}", "Δ", f"patched on {b}", "Δ"):
        table.add_column(column, justify="left" if not column else "right")
    rows = {"overall": summary.overall, **summary.per_capability}
    for name, row in rows.items():
        stats = (row.err_unpatched, row.err_patched_a, row.delta_a, row.err_patched_b, row.delta_b)
        table.add_row(
            name,
            *(f"{stat.mean:.1f} ± {stat.std:.1f}" for stat in stats),
            style="bold" if name == "overall" else None,
        )
    console.print(table)


def patching_report() -> type[PatchingReport]:
    """The record patching.json holds (imported when a command needs it)."""
    from testaug.fixing.patching.report import PatchingReport

    return PatchingReport
