"""`testaug rankers train|evaluate|hard-cases` and `testaug rank`: the validity triage
stage's doors (the work is in testaug.steps.rankers and testaug.steps.rank)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, progress, styled
from testaug.cli.options import (
    OLD_CASES,
    output_option,
    seed_cases_given,
    seed_cases_option,
)
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import RankedCandidate
from testaug.core.triage import CalibrationCheck, SourceEvaluation, TriageSummary

# The seed cases the neighbour members compare candidates with (once `--cases`).
SEED_CASES = seed_cases_option("the bundled suites'")

rankers_app = typer.Typer(
    help="Train and evaluate the validity ranker ensemble.", no_args_is_help=True
)


@rankers_app.command("train")
def train_command(
    labelled: Path = typer.Argument(
        ..., help="Labelled candidates (JSONL: candidate + valid), or a folder of JSONL parts."
    ),
    output: Path = output_option(
        ..., "-o", "--output", kind="folder", help="Folder for the trained ensemble."
    ),
    config: str = typer.Option("offline", help="Ensemble config: offline, paper, or a YAML file."),
) -> None:
    """Train every member of an ensemble on labelled candidates and save it."""
    from rankers.ensemble import load_config
    from testaug.cli.options import build_config
    from testaug.steps.rankers import RankersSummary, TrainEnsembleConfig, train_rankers_on_labels

    record = build_config(
        TrainEnsembleConfig,
        flags={"labelled": "LABELLED", "out": "--output", "ensemble": "--config"},
        labelled=labelled,
        out=output,
        ensemble=config,
    )
    ensemble_config = load_config(record.ensemble)
    member_named = {m.name: m for m in ensemble_config.members}
    steps = len(ensemble_config.members) * ensemble_config.folds
    with progress() as bar:
        task = bar.add_task("training", total=steps)

        def advanced(name: str, fold: int, folds: int) -> None:
            done = ensemble_config.members.index(member_named[name]) * folds + fold
            bar.update(
                task, completed=done, description=f"training {name} (fold {fold + 1} of {folds})"
            )

        trained = train_rankers_on_labels(record, on_progress=advanced)
        bar.update(task, completed=steps)
    summary = trained.summary
    assert isinstance(summary, RankersSummary)
    table = Table(title_justify="left")
    table.add_column("member")
    table.add_column("kind")
    table.add_column("seconds", justify="right")
    for member in ensemble_config.members:
        table.add_row(member.name, member.kind, f"{summary.train_seconds[member.name]:.1f}")
    if "adaptation" in summary.train_seconds:
        table.add_row("adaptation", "per generator", f"{summary.train_seconds['adaptation']:.1f}")
    console.print(table)
    console.print(
        styled(
            "[green]trained[/] ensemble {!r} version {} on {:,} candidates ({:,} invalid) into {}",
            ensemble_config.name,
            summary.version,
            summary.trained_on,
            summary.invalid or 0,
            output,
        )
    )


def rank_command(
    candidates: Path = typer.Argument(..., help="Candidates (JSONL) from `testaug generate`."),
    rankers: Path = typer.Option(..., "--rankers", help="A trained ensemble folder."),
    output: Path = output_option(..., "-o", "--output", help="Where to write ranked candidates."),
    cases: Path | None = SEED_CASES,
    batch_size: int = typer.Option(64, min=1, help="Candidates scored per batch."),
    old_cases: Path | None = OLD_CASES,
) -> None:
    """Order candidates, the likeliest invalid first: every ranker of the ensemble scores
    them and their rankings are combined (Borda count); the ensemble's calibration evidence is
    written beside (`<output>.calibration.json`)."""
    from itertools import islice

    from testaug.cli.options import build_config
    from testaug.steps.rank import RankConfig, rank_candidates

    cases = seed_cases_given(cases, old_cases, command="rank")
    config = build_config(
        RankConfig,
        flags={"candidates": "CANDIDATES", "out": "--output", "cases": "--seed-cases"},
        candidates=candidates,
        rankers=rankers,
        out=output,
        cases=cases,
        batch_size=batch_size,
    )
    err_console.print(styled("[dim]scoring candidates in {}[/]", candidates))
    done = rank_candidates(config)
    table = Table(title="most likely invalid", title_justify="left")
    table.add_column("rank", justify="right")
    table.add_column("description")
    table.add_column("candidate")
    for item in islice(read_jsonl(output, RankedCandidate), 5):
        text = item.candidate.text + (
            f" || {item.candidate.text_pair}" if item.candidate.text_pair else ""
        )
        table.add_row(str(item.rank), item.candidate.description, text)
    console.print(table)
    console.print(
        styled(
            "[green]ranked[/] {:,} candidates with ensemble {} into {}",
            done.records,
            done.summary.ensemble,
            output,
        )
    )
    print_bases(done.summary.bases)


@rankers_app.command("evaluate")
def evaluate_command(
    labelled: Path = typer.Argument(
        ..., help="Held-out labelled candidates (JSONL, or a folder of JSONL parts)."
    ),
    rankers: Path = typer.Option(..., "--rankers", help="A trained ensemble folder."),
    target: float = typer.Option(0.9, min=0.0, max=1.0, help="Target accuracy."),
    cases: Path | None = SEED_CASES,
    plot: Path | None = output_option(
        None,
        "--plot",
        help="Where to write the ACC@k curve (PNG; default: RANKERS/acc_curve.png).",
    ),
    by: str | None = typer.Option(
        None, "--by", help="Also per source (`source`: each generator, and rule-made hard cases)."
    ),
    output: Path | None = output_option(
        None, "-o", "--output", help="Also write triage.json (what --json prints) here."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    old_cases: Path | None = OLD_CASES,
) -> None:
    """How much review the rankers save: the share of candidates people must review to reach
    the target accuracy in the order `testaug rank` gives them (the triage people review),
    beside each part of that order alone (the members' plain Borda count, each member,
    each learner and signal the triage stacks), a random order and a perfect one (oracle)."""
    from testaug.cli.options import build_config
    from testaug.steps.rankers import (
        EvaluateRankersConfig,
        RankersEvaluationSummary,
        evaluate_rankers,
    )

    if by not in (None, "source", "generator"):
        raise InputError(Problem("expected source (or generator)", field="--by"))
    cases = seed_cases_given(cases, old_cases, command="rankers evaluate")
    record = build_config(
        EvaluateRankersConfig,
        flags={"labelled": "LABELLED", "out": "--output", "cases": "--seed-cases"},
        labelled=labelled,
        rankers=rankers,
        target=target,
        cases=cases,
        plot=plot,
        out=output,
        per_source=by is not None,
    )
    done = evaluate_rankers(record)
    assert isinstance(done.summary, RankersEvaluationSummary)
    summary = done.summary.triage
    if as_json:
        typer.echo(summary.model_dump_json())
        return
    console.print(_effort_table(summary))
    for pair, tau in summary.kendall_tau.items():
        console.print(f"Kendall tau {pair}: {tau:.3f}", highlight=False)
    if summary.by_source:
        console.print(_source_table(summary.by_source))
    if summary.calibration is not None:
        console.print(_calibration_line(summary.calibration, summary.n), highlight=False)
    print_bases(summary.bases)
    console.print(styled("[green]wrote[/] the ACC@k curve to {}", done.files["plot"]))


TRIAGE_ROW = "triage (the order `rank` gives)"


def _effort_table(summary: TriageSummary) -> Table:
    """Review effort at the target of the triage order, each part, random and oracle order."""
    table = Table(title=f"review effort for {summary.target:.0%} accuracy", title_justify="left")
    for column in (
        "ranking", "candidates", "effort", "vs random", "gap closed", "ACC@10%", "ACC@30%"
    ):  # fmt: skip
        table.add_column(column, justify="left" if column == "ranking" else "right")
    reports = {TRIAGE_ROW: summary.triage, **summary.parts}
    for name, report in reports.items():
        table.add_row(
            name,
            f"{report.n:,}",
            f"{report.effort_at_target:.1%}",
            f"{-report.reduction_vs_random:+.1%}",
            "" if report.gap_closed is None else f"{report.gap_closed:.0%}",
            f"{_acc_at(report.curve, 0.1):.1%}",
            f"{_acc_at(report.curve, 0.3):.1%}",
            style="bold" if name == TRIAGE_ROW else None,
        )
    first = summary.triage
    table.add_row("random order", "", f"{first.random_effort_at_target:.1%}", "", "0%", style="dim")
    table.add_row(
        "oracle order",
        "",
        f"{first.oracle_effort_at_target:.1%}",
        f"{-(first.oracle_reduction_vs_random or 0.0):+.1%}",
        "100%",
        style="dim",
    )
    return table


def _source_table(rows: Sequence[SourceEvaluation]) -> Table:
    """The ensemble's review effort on each source's candidates."""
    table = Table(title="per source", title_justify="left")
    for column in ("source", "candidates", "invalid", "effort", "random", "oracle", "gap closed"):
        table.add_column(column, justify="left" if column == "source" else "right")
    for row in rows:
        table.add_row(
            row.source,
            f"{row.n:,}",
            f"{row.n_invalid:,}",
            f"{row.effort_at_target:.1%}",
            f"{row.random_effort_at_target:.1%}",
            f"{row.oracle_effort_at_target:.1%}",
            f"{row.gap_closed:.0%}",
        )
    return table


def _calibration_line(calibration: CalibrationCheck, n: int) -> str:
    """What the ranker's acceptance rule accepts at its precision, and the ECE of P(valid)."""
    valid = (
        f", {calibration.precision:.1%} of them valid" if calibration.precision is not None else ""
    )
    return (
        f"P(valid): expected calibration error {calibration.ece:.3f}; "
        f"at precision {calibration.target:.0%} the ranker accepts "
        f"{calibration.accepted} of {n}{valid}"
    )


def _acc_at(curve: list[float], fraction: float) -> float:
    n = len(curve) - 1
    return curve[round(fraction * n)] if n else 1.0


@rankers_app.command("hard-cases")
def hard_cases_command(
    suite: str = typer.Argument(..., help="A suite: file, folder or shipped name."),
    output: Path = output_option(..., "-o", "--output", help="Where to write them (JSONL)."),
    per_description: int = typer.Option(
        6, min=1, help="Valid hard cases per description (and as many invalid)."
    ),
    seed: int = typer.Option(0, help="Seed of the sampling."),
) -> None:
    """Labelled hard cases made by rule from a suite, to train rankers on your own suite:
    cases of other templates (valid), of sibling descriptions or other capabilities
    (invalid: capability) and under a wrong label (invalid: label)."""
    from testaug.cli.options import build_config
    from testaug.steps.rankers import HardCasesConfig, HardCasesSummary, make_hard_cases

    record = build_config(
        HardCasesConfig,
        flags={"suite": "SUITE", "out": "--output"},
        suite=suite,
        out=output,
        per_description=per_description,
        seed=seed,
    )
    done = make_hard_cases(record)
    summary = done.summary
    assert isinstance(summary, HardCasesSummary)
    table = Table(title_justify="left")
    table.add_column("kind")
    table.add_column("cases", justify="right")
    for kind, count in summary.kinds.items():
        table.add_row(kind, f"{count:,}")
    console.print(table)
    console.print(
        styled(
            "[green]wrote[/] {:,} hard cases ({:,} valid) to {}",
            done.records,
            summary.valid,
            output,
        )
    )


def print_bases(bases: dict[str, int]) -> None:
    """Say what the order rests on for each generator, a weak prior included."""
    for basis, count in sorted(bases.items(), key=lambda kv: -kv[1]):
        style = "yellow" if basis.startswith("zero-shot") else "dim"
        console.print(styled("{:,} candidates: {}", count, basis), style=style)
