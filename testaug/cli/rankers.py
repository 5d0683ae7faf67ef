"""`testaug rankers train|evaluate` and `testaug rank`: the validity triage stage."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, progress, styled
from testaug.cli.options import output_option
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, read_jsonl_parts, write_jsonl
from testaug.core.records import LabelledCandidate, RankedCandidate, TestCase
from testaug.core.triage import CalibrationCheck, SourceEvaluation, TriageSummary

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
    from rankers.ensemble_training import train_ensemble

    ensemble_config = load_config(config)
    items = list(read_jsonl_parts(labelled, LabelledCandidate))
    if not items:
        raise InputError(Problem("no labelled candidates to train on", file=labelled))
    if len({item.valid for item in items}) < 2:
        kind = "valid" if items[0].valid else "invalid"
        message = f"all {len(items):,} labelled candidates are {kind}; training needs both"
        raise InputError(Problem(message, file=labelled))
    steps = len(ensemble_config.members) * ensemble_config.folds
    with progress() as bar:
        task = bar.add_task("training", total=steps)

        def advanced(name: str, fold: int, folds: int) -> None:
            done = ensemble_config.members.index(member_named[name]) * folds + fold
            bar.update(
                task, completed=done, description=f"training {name} (fold {fold + 1} of {folds})"
            )

        member_named = {m.name: m for m in ensemble_config.members}
        ensemble = train_ensemble(items, ensemble_config, output, on_progress=advanced)
        bar.update(task, completed=steps)
    table = Table(title_justify="left")
    table.add_column("member")
    table.add_column("kind")
    table.add_column("seconds", justify="right")
    for member in ensemble_config.members:
        seconds = ensemble.manifest.train_seconds[member.name]
        table.add_row(member.name, member.kind, f"{seconds:.1f}")
    console.print(table)
    console.print(
        styled(
            "[green]trained[/] ensemble {!r} version {} on {:,} candidates ({:,} invalid) into {}",
            ensemble_config.name,
            ensemble.version,
            len(items),
            ensemble.manifest.invalid,
            output,
        )
    )


def rank_command(
    candidates: Path = typer.Argument(..., help="Candidates (JSONL) from `testaug generate`."),
    rankers: Path = typer.Option(..., "--rankers", help="A trained ensemble folder."),
    output: Path = output_option(..., "-o", "--output", help="Where to write ranked candidates."),
    cases: Path | None = typer.Option(
        None, "--cases", help="The suite's seed cases (JSONL; default: the bundled suites')."
    ),
    batch_size: int = typer.Option(64, min=1, help="Candidates scored per batch."),
) -> None:
    """Order candidates, the likeliest invalid first: every ranker of the ensemble scores
    them and their rankings are combined (Borda count); the ensemble's calibration evidence is
    written beside (`<output>.calibration.json`)."""
    from itertools import islice

    from testaug.cli.options import build_config
    from testaug.steps.rank import RankConfig, rank_candidates

    config = build_config(
        RankConfig,
        flags={"candidates": "CANDIDATES", "out": "--output"},
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
    cases: Path | None = typer.Option(
        None, "--cases", help="The suite's seed cases (JSONL; default: the bundled suites')."
    ),
    plot: Path | None = output_option(
        None,
        "--plot",
        help="Where to write the ACC@k curve (PNG; default: RANKERS/acc_curve.png).",
    ),
    by: str | None = typer.Option(
        None, "--by", help="Also per source (`source`: each generator, and rule-made hard cases)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """How much review the rankers save: the share of candidates people must review to reach
    the target accuracy in the order `testaug rank` gives them (the triage people review),
    beside each part of that order alone (the members' plain Borda count, each member,
    each learner and signal the triage stacks), a random order and a perfect one (oracle)."""
    from rankers.ensemble import Ensemble
    from rankers.evaluation import evaluate_triage
    from testaug.reports.plots import plot_acc_curves

    if by not in (None, "source", "generator"):
        raise InputError(Problem("expected source (or generator)", field="--by"))
    items = list(read_jsonl_parts(labelled, LabelledCandidate))
    ensemble = Ensemble.load(rankers)
    reference = list(read_jsonl(cases, TestCase)) if cases else None
    plot_path = plot or rankers / "acc_curve.png"
    summary = evaluate_triage(
        ensemble,
        items,
        target=target,
        reference=reference,
        per_source=by is not None,
        plot=str(plot_path),
    )
    curves = {TRIAGE_ROW: summary.triage.curve}
    curves.update({name: report.curve for name, report in summary.parts.items()})
    curves.update(random=summary.random_curve, oracle=summary.oracle_curve)
    plot_acc_curves(
        curves,
        plot_path,
        target=target,
        title=f"{labelled.name}: {summary.n} candidates, {summary.n_invalid} invalid",
    )
    if as_json:
        typer.echo(json.dumps(summary.model_dump()))
        return
    console.print(_effort_table(summary))
    for pair, tau in summary.kendall_tau.items():
        console.print(f"Kendall tau {pair}: {tau:.3f}", highlight=False)
    if summary.by_source:
        console.print(_source_table(summary.by_source))
    if summary.calibration is not None:
        console.print(_calibration_line(summary.calibration, summary.n), highlight=False)
    print_bases(summary.bases)
    console.print(styled("[green]wrote[/] the ACC@k curve to {}", plot_path))


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
    from collections import Counter

    from rankers.hard_cases import hard_cases
    from testaug.core.bundled import resolve_suite
    from testaug.suites.load import load_suite

    made = hard_cases(load_suite(resolve_suite(suite)), per_description=per_description, seed=seed)
    write_jsonl(output, made)
    kinds = Counter(item.candidate.model.removeprefix("hard-cases:") for item in made)
    table = Table(title_justify="left")
    table.add_column("kind")
    table.add_column("cases", justify="right")
    for kind, count in sorted(kinds.items()):
        table.add_row(kind, f"{count:,}")
    console.print(table)
    valid = sum(i.valid for i in made)
    console.print(
        styled("[green]wrote[/] {:,} hard cases ({:,} valid) to {}", len(made), valid, output)
    )


def print_bases(bases: dict[str, int]) -> None:
    """Say what the order rests on for each generator, a weak prior included."""
    for basis, count in sorted(bases.items(), key=lambda kv: -kv[1]):
        style = "yellow" if basis.startswith("zero-shot") else "dim"
        console.print(styled("{:,} candidates: {}", count, basis), style=style)
