"""`testaug evaluate generalization`: BeLUGA's cross-functional analysis. Train a classifier in each
configuration with each method, and score every functionality seen and unseen (left out
alone, with its class, with its test type); the G table over seeds."""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING

import typer
from rich.table import Table
from rich.text import Text

from testaug.cli.console import console, err_console
from testaug.cli.options import OLD_SUITE, output_option, required, suite_cases_given

if TYPE_CHECKING:
    from testaug.fixing.crossfunctional.analysis import CrossFunctionalReport


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def _numbers(text: str, kind: type) -> tuple:
    try:
        return tuple(kind(part) for part in _names(text))
    except ValueError as exc:
        raise typer.BadParameter(f"not a list of numbers: {text!r}") from exc


def generalize_command(
    suite: Path | None = typer.Option(
        None,
        "--suite-cases",
        help="The suite's cases (JSONL): the tests trained and scored on. Required.",
        show_default=False,
    ),
    iid: Path = typer.Option(
        ...,
        "--iid",
        help="Ordinary labelled examples (i.i.d.; JSONL with text, label): half of them train "
        "the model, the other half measure its accuracy, unless --iid-test is given.",
    ),
    iid_test: Path | None = typer.Option(
        None,
        "--iid-test",
        help="Ordinary labelled examples to measure accuracy on (then all of --iid trains).",
    ),
    perturbed: Path | None = typer.Option(
        None,
        "--perturbed",
        help="The suite's perturbation tests (perturbed.jsonl of a run folder): changed "
        "copies of cases that should keep, or change, the model's answer.",
    ),
    model: str = typer.Option(
        ...,
        "--model",
        help="The model under test, a Hugging Face classifier: hf:PATH_OR_ID[?labels=neg,pos], "
        "a path or hub id, or minilm (the shipped MiniLM encoder with a new head).",
    ),
    configs: str = typer.Option(
        "IID->T,IID+T,IID->(IID+T)",
        "--configs",
        help="How training uses the ordinary examples (IID) and the suite's tests (T), "
        "comma-separated: IID->T (the examples, then the tests), IID+T (both mixed), "
        "IID->(IID+T) (the examples, then both mixed).",
    ),
    methods: str = typer.Option(
        "vanilla",
        "--methods",
        help="Training methods, comma-separated: vanilla, l2, dropout, lp (train the head "
        "only), lp_ft (the head, then everything), group_dro, irm, fish.",
    ),
    scenarios: str = typer.Option(
        "seen,func,class,type",
        "--scenarios",
        help="What is held out of training when a functionality (a description) is scored, "
        "comma-separated: seen (nothing), func (the functionality), class (its capability), "
        "type (its test type).",
    ),
    no_standard: bool = typer.Option(
        False,
        "--no-standard",
        help="Skip scoring the baseline, a model trained on the ordinary examples only.",
    ),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Runs, with seeds 42, 43, ..."),
    per_functionality: int | None = typer.Option(
        None, "--per-functionality", min=2, help="Use at most this many cases per functionality."
    ),
    labels: str | None = typer.Option(None, "--labels", help="The task's labels, comma-separated."),
    test_fraction: float = typer.Option(
        0.5, min=0.05, max=0.95, help="The share of the suite's tests held out for scoring."
    ),
    epochs: int = typer.Option(3, min=1, help="Fine-tuning epochs."),
    learning_rate: float = typer.Option(2e-5, help="Fine-tuning learning rate."),
    batch_size: int = typer.Option(16, min=1, help="Fine-tuning batch size."),
    max_length: int = typer.Option(128, min=8, help="Tokens kept per text."),
    device: str = typer.Option("cpu", help="Where to fine-tune: cpu, cuda, cuda:1, ..."),
    select: bool = typer.Option(
        False,
        "--select",
        help="Tune how each configuration and method trains on the tests: half of the "
        "held-out tests become a validation set, and the grid's setting that scores best on "
        "it is used everywhere.",
    ),
    grid_learning_rates: str = typer.Option(
        "2e-5,3e-5,5e-5", "--grid-learning-rates", help="Learning rates tried with --select."
    ),
    grid_epochs: str = typer.Option("1,2,3", "--grid-epochs", help="Epochs tried with --select."),
    grid_batch_sizes: str = typer.Option(
        "16", "--grid-batch-sizes", help="Batch sizes tried with --select (BeLUGA tried 8,16)."
    ),
    significance_trials: int = typer.Option(
        10_000,
        "--trials",
        min=100,
        help="Random shuffles of the significance test against the baseline.",
    ),
    output: Path | None = output_option(
        None, "-o", "--output", help="Write the report here (crossfunctional.json)."
    ),
    old_suite: Path | None = OLD_SUITE,
) -> None:
    """How well training on some tests carries over to tests held out of training: for each
    configuration and method, the generalization score G (the harmonic mean of the pass rate
    on the suite and the accuracy on ordinary examples), on seen and held-out tests, mean ±
    standard deviation over seeds; the report (every functionality's pass rate too) as JSON."""
    from testaug.fixing.crossfunctional.analysis import CROSSFUNCTIONAL_FILE, read_report
    from testaug.steps.generalize import (
        GeneralizeConfig,
        GeneralizeFilesConfig,
        generalize_files,
    )

    given = suite_cases_given(suite, old_suite, command="evaluate generalization")
    suite_cases = required(given, "--suite-cases", "the suite's cases (JSONL)")
    options = GeneralizeConfig(
        configurations=_names(configs),
        methods=_names(methods),
        scenarios=_names(scenarios),
        standard=not no_standard,
        seeds=seeds,
        per_functionality=per_functionality,
        labels=labels,
        test_fraction=test_fraction,
        epochs=epochs,
        learning_rate=learning_rate,
        batch_size=batch_size,
        max_length=max_length,
        device=device,
        select=select,
        grid_learning_rates=_numbers(grid_learning_rates, float),
        grid_epochs=_numbers(grid_epochs, int),
        grid_batch_sizes=_numbers(grid_batch_sizes, int),
        significance_trials=significance_trials,
    )
    with TemporaryDirectory(prefix="testaug-generalize-") as work:
        target = output or Path(work) / CROSSFUNCTIONAL_FILE
        with err_console.status("generalize") as status:
            files = GeneralizeFilesConfig(
                suite=suite_cases,
                iid=iid,
                model=model,
                out=target,
                iid_test=iid_test,
                perturbed=perturbed,
                analysis=options,
            )
            done = generalize_files(files, on_progress=lambda message: status.update(message))
        report = read_report(done.path)
    print_g_table(report)
    if output is not None:
        err_console.print(f"wrote {output}")


MARKS = {"above": ("▲", "green"), "below": ("▼", "red"), "": ("", "")}


def print_g_table(report: CrossFunctionalReport) -> None:
    """The G table: accuracy on the ordinary examples and G per scenario and their mean, in
    percent; ▲ (green) and ▼ (red) mark scores significantly above or below the baseline's
    (the model trained on the ordinary examples only)."""
    from testaug.fixing.crossfunctional.analysis import PAIR_SCENARIOS

    table = Table(
        title=f"generalization score G in %, mean ± std over seeds {list(report.seeds)}",
        title_justify="left",
        caption="▲ / ▼: significantly above / below the IID baseline (p < 0.05; G: "
        "randomization test, accuracy: binomial test)",
        caption_justify="left",
    )
    columns = ["", "accuracy", "G standard", *(f"G {s}" for s in PAIR_SCENARIOS), "Avg"]
    for column in columns:
        table.add_column(column, justify="left" if not column else "right")

    def cell(value, mark: str = "") -> Text | str:
        if value is None:
            return ""
        symbol, colour = MARKS[mark]
        text = f"{100 * value.mean:.1f} ± {100 * value.std:.1f}"
        return Text(f"{text} {symbol}", style=colour) if symbol else text

    def marked(summary, attribute: str) -> Text | str:
        if summary is None:
            return ""
        versus = summary.versus_baseline
        mark = "" if versus is None else getattr(versus, f"{attribute}_mark")
        return cell(summary.iid_score if attribute == "iid" else summary.g, mark)

    if report.standard is not None:
        table.add_row(
            "IID (standard)",
            cell(report.standard.iid_score),
            cell(report.standard.g),
            *[""] * (len(PAIR_SCENARIOS) + 1),
        )
    for pair in report.pairs:
        table.add_row(
            pair.name,
            marked(pair.scenarios.get("seen"), "iid"),
            "",
            *(marked(pair.scenarios.get(s), "g") for s in PAIR_SCENARIOS),
            cell(pair.g_average),
        )
    console.print(table)
    print_selection(report)


def print_selection(report: CrossFunctionalReport) -> None:
    """Each pair's settings tried on the validation tests with their pass rate there; ✓ the
    chosen one."""
    chosen = [pair for pair in report.pairs if pair.selection is not None]
    if not chosen:
        return
    table = Table(title="Settings chosen on the validation tests (--select)", title_justify="left")
    for column in ("", "setting", "validation pass rate %", "chosen"):
        table.add_column(column, justify="left" if column in ("", "setting", "chosen") else "right")
    for pair in chosen:
        assert pair.selection is not None
        for index, score in enumerate(pair.selection.scores):
            table.add_row(
                pair.name if index == 0 else "",
                score.setting.name,
                f"{100 * score.val_score:.1f}",
                "✓" if score.setting == pair.selection.chosen else "",
            )
    console.print(table)
