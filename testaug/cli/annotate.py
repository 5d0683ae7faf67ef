"""`testaug annotate`: send doubtful candidates to people (Label Studio or the terminal),
bring their verdicts back, and merge the accepted candidates into the suite."""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from pydantic import SecretStr
from rich.table import Table

from testaug.cli.annotate_server import install_server_command, server_command
from testaug.cli.console import console, err_console
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import (
    Annotation,
    Candidate,
    LabelledCandidate,
    TestCase,
    label_options,
)
from testaug.core.runs import write_text_atomic
from testaug.core.settings import Settings
from testaug.review.acceptance import DEFAULT_TARGET, calibration_beside, check_target
from testaug.review.plans import add_annotations, read_annotations
from testaug.review.verdicts import Verdict, merge_verdicts, pairwise_agreement, status_counts
from testaug.steps.review import read_ranked

if TYPE_CHECKING:
    from testaug.review.label_studio import LabelStudio

annotate_app = typer.Typer(
    help="Review the doubtful candidates: Label Studio or the terminal, and merge verdicts.",
    no_args_is_help=True,
)
annotate_app.command("install-server")(install_server_command)
annotate_app.command("server")(server_command)

TOP = typer.Option(None, "--top", min=0.0, max=1.0, help="Fraction of the ranking people review.")
BUDGET = typer.Option(None, "--budget", min=0, help="At most this many candidates for people.")
PROJECT = typer.Option(None, "--project", help="Label Studio project (default: testaug <run>).")
URL = typer.Option(None, "--url", help="Label Studio URL (default: $LABEL_STUDIO_URL).")
API_KEY = typer.Option(
    None, "--api-key", help="Label Studio token (prefer $LABEL_STUDIO_API_KEY).", show_default=False
)
ACCEPT_PRECISION = typer.Option(
    DEFAULT_TARGET,
    "--accept-precision",
    help="The ranker accepts a candidate only under a rule whose out-of-fold precision "
    "reaches this with 95% confidence (0 < p <= 1).",
)
CASES = typer.Option(
    None, "--cases", help="The suite cases the seeds came from (default: cases.jsonl beside it)."
)


@annotate_app.command("push")
def push_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    top: float | None = TOP,
    budget: int | None = BUDGET,
    accept_precision: float = ACCEPT_PRECISION,
    project: str | None = PROJECT,
    annotations_path: Path | None = typer.Option(
        None, "--annotations", help="Annotations file (default: annotations.jsonl beside RANKED)."
    ),
    cases: Path | None = CASES,
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """The ranker accepts what its rule for --accept-precision vouches for (read from
    RANKED's .calibration.json); the top of the rest goes into a Label Studio project."""
    from testaug.steps.review import push_to_label_studio

    check_target(accept_precision, field="--accept-precision")
    seeds = _seed_cases(cases, ranked_path)
    annotations_path = annotations_path or ranked_path.with_name("annotations.jsonl")
    project = project or _default_project(ranked_path)
    pushed = push_to_label_studio(
        ranked_path,
        annotations_path,
        studio=_studio(url, api_key),
        project=project,
        seeds=seeds,
        top=_default_top(top, budget),
        budget=budget,
        target=accept_precision,
    )
    summary = pushed.summary
    state = "created" if summary["created"] else "reused"
    console.print(
        f"[green]pushed[/] {summary['sent']:,} candidates to project {project!r} ({state}, id "
        f"{summary['project_id']}): {summary['imported']:,} imported, "
        f"{summary['already_present']:,} already there",
        highlight=False,
    )
    _print_acceptance(summary, annotations_path)


@annotate_app.command("pull")
def pull_command(
    output: Path = typer.Option(..., "-o", "--output", help="Annotations file (JSONL) to update."),
    project: str | None = PROJECT,
    ranked_path: Path | None = typer.Option(
        None, "--ranked", help="Ranked candidates (default: ranked.jsonl beside the output)."
    ),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite cases to merge accepted ones into."
    ),
    url: str | None = URL,
    api_key: str | None = API_KEY,
) -> None:
    """Bring people's verdicts back, then write the accepted candidates as suite cases."""
    from testaug.review.label_studio import pull_verdicts

    ranked_path = ranked_path or output.with_name("ranked.jsonl")
    project = project or _default_project(output)
    reading = pull_verdicts(_studio(url, api_key), project)
    update = add_annotations(output, reading.annotations)
    for problem in reading.problems:
        err_console.print(f"[yellow]skipped[/] {problem}", highlight=False)
    console.print(
        f"[green]pulled[/] project {project!r}: {len(reading.annotations):,} verdicts "
        f"({update.added:,} new, {update.changed:,} changed), {reading.cancelled:,} skipped or "
        f"cancelled, {reading.unanswered:,} without a verdict; {len(update.annotations):,} "
        f"records in {output}",
        highlight=False,
    )
    candidates = dict(reading.candidates)
    if ranked_path.exists():
        candidates.update({item.candidate.id: item.candidate for item in read_ranked(ranked_path)})
    else:
        err_console.print(
            f"[yellow]no {ranked_path}[/]: only candidates sent to Label Studio can be merged "
            "(pass --ranked)",
            highlight=False,
        )
    _merge_and_report(update.annotations, candidates, suite, output)


@annotate_app.command("merge")
def merge_command(
    annotations_path: Path = typer.Argument(..., metavar="ANNOTATIONS"),
    ranked_path: Path = typer.Option(..., "--ranked", help="Ranked candidates (JSONL)."),
    suite: Path | None = typer.Option(
        None, "--suite", help="Suite cases to merge accepted ones into."
    ),
) -> None:
    """Decide every candidate from the annotations and write the accepted ones as suite cases."""
    candidates = {item.candidate.id: item.candidate for item in read_ranked(ranked_path)}
    annotations = list(read_jsonl(annotations_path, Annotation))
    _merge_and_report(annotations, candidates, suite, annotations_path)


@annotate_app.command("terminal")
def terminal_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    top: float | None = TOP,
    budget: int | None = BUDGET,
    accept_precision: float = ACCEPT_PRECISION,
    annotations_path: Path | None = typer.Option(
        None, "--annotations", help="Annotations file (default: annotations.jsonl beside RANKED)."
    ),
    annotator: str | None = typer.Option(None, help="Your name in the records (default: login)."),
    cases: Path | None = CASES,
) -> None:
    """Review, in the terminal, the top of the ranking among the candidates the ranker's rule
    does not accept: Enter valid, n invalid, s skip, q quit. Verdicts are saved one by one;
    run it again to go on where you stopped."""
    import sys

    from testaug.review.terminal import key_reader
    from testaug.steps.review import review_in_terminal

    check_target(accept_precision, field="--accept-precision")
    annotations_path = annotations_path or ranked_path.with_name("annotations.jsonl")
    done = review_in_terminal(
        ranked_path,
        annotations_path,
        seeds=_seed_cases(cases, ranked_path),
        annotator=annotator or getpass.getuser(),
        read_key=key_reader(sys.stdin),
        console=console,
        top=_default_top(top, budget),
        budget=budget,
        target=accept_precision,
    )
    session = done.session
    console.print(
        f"[green]{session.annotated:,} annotated[/] ({session.valid:,} valid, "
        f"{session.invalid:,} invalid), {session.skipped:,} skipped, {session.remaining:,} left; "
        f"saved to {annotations_path}",
        highlight=False,
    )
    _print_acceptance(
        {"pending": len(done.plan.pending), **done.plan.acceptance.summary()}, annotations_path
    )


@annotate_app.command("retrain")
def retrain_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    annotations_path: Path = typer.Option(..., "--annotations", help="Annotations so far."),
    rankers_out: Path = typer.Option(..., "--rankers-out", help="Folder for the new ensemble."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the re-ranked ones."),
    config: str = typer.Option("offline", help="Ensemble config: offline, paper, or a YAML file."),
    extra: Path | None = typer.Option(
        None, "--with", help="Labelled candidates to train on as well (e.g. data/validity)."
    ),
) -> None:
    """Active loop: retrain the rankers on every verdict so far and re-rank what is pending.
    Push the output again to send the next batch to people."""
    from rankers.active import retrain_and_rerank
    from rankers.ensemble import load_config

    ranked = read_ranked(ranked_path)
    labelled = list(read_jsonl(extra, LabelledCandidate)) if extra else []
    with err_console.status("retraining the ranker ensemble"):
        result = retrain_and_rerank(
            ranked,
            read_annotations(annotations_path),
            load_config(config),
            rankers_out,
            extra=labelled,
        )
    write_jsonl(output, result.reranked)
    if result.ensemble.calibration is not None:
        write_text_atomic(
            calibration_beside(output),
            result.ensemble.calibration.evidence.model_dump_json(indent=1) + "\n",
        )
    console.print(
        f"[green]retrained[/] ensemble {result.ensemble.version} on {result.from_people:,} "
        f"verdicts of people and {result.from_extra:,} other labelled candidates into "
        f"{rankers_out}; re-ranked {len(result.reranked):,} pending candidates into {output}",
        highlight=False,
    )


def _studio(url: str | None, api_key: str | None) -> LabelStudio:
    from testaug.review.label_studio import LabelStudio

    settings = Settings()
    key = SecretStr(api_key) if api_key else settings.label_studio_api_key
    if key is None:
        raise InputError(
            Problem("no Label Studio API key: set LABEL_STUDIO_API_KEY", field="api_key")
        )
    return LabelStudio(url or settings.label_studio_url, key)


def _seed_cases(cases: Path | None, ranked_path: Path) -> dict[str, TestCase]:
    """Seed cases by id, from --cases or the run's cases.jsonl; none when neither exists."""
    path = cases or ranked_path.with_name("cases.jsonl")
    if cases is None and not path.exists():
        err_console.print(
            f"[yellow]no {path}[/]: seed examples will not be shown (pass --cases)", highlight=False
        )
        return {}
    return {case.id: case for case in read_jsonl(path, TestCase)}


def _print_acceptance(summary: dict, annotations_path: Path) -> None:
    """What the ranker accepted (per calibration group) and how many wait, in a few lines."""
    console.print(
        f"the ranker accepted {summary['accepted_by_ranker']:,} candidates under its rules for "
        f"precision {summary['accept_precision']:.0%} (recorded in {annotations_path}); "
        f"{summary['pending']:,} more wait for people (not in this batch)",
        highlight=False,
    )
    for group, numbers in summary["groups"].items():
        rule = numbers["rule"]
        where = (
            "no threshold on P(valid) qualified"
            if rule is None
            else f"P(valid) >= {rule['threshold']:.3f}, out-of-fold precision "
            f"{rule['precision_estimate']:.1%} (lower bound {rule['precision_lower_bound']:.1%})"
        )
        console.print(
            f"  {group}: {where}; accepted {numbers['accepted']:,} of {numbers['candidates']:,}",
            highlight=False,
        )


def _default_top(top: float | None, budget: int | None) -> float | None:
    return 0.3 if top is None and budget is None else top


def _default_project(path: Path) -> str:
    return f"testaug {path.resolve().parent.name}"


def _merge_and_report(
    annotations: Sequence[Annotation],
    candidates: dict[str, Candidate],
    suite: Path | None,
    beside: Path,
) -> None:
    """Write verdicts.jsonl, accepted.jsonl and (with a suite) suite.jsonl beside a file."""
    suite_cases = list(read_jsonl(suite, TestCase)) if suite is not None else []
    merge = merge_verdicts(annotations, candidates, suite_cases)
    write_jsonl(beside.with_name("verdicts.jsonl"), merge.verdicts.values())
    accepted_path = beside.with_name("accepted.jsonl")
    write_jsonl(accepted_path, merge.accepted)
    _print_verdicts(merge.verdicts, annotations)
    message = f"[green]accepted[/] {len(merge.accepted):,} cases (source llm) into {accepted_path}"
    if suite is not None:
        suite_path = beside.with_name("suite.jsonl")
        write_jsonl(suite_path, merge.suite)
        message += f"; suite of {len(merge.suite):,} cases ({merge.added:,} new) in {suite_path}"
    console.print(message, highlight=False)


def _print_verdicts(verdicts: dict[str, Verdict], annotations: Sequence[Annotation]) -> None:
    table = Table(title="verdicts", title_justify="left")
    table.add_column("status")
    table.add_column("candidates", justify="right")
    for status, count in status_counts(verdicts).items():
        table.add_row(status, f"{count:,}")
    console.print(table)
    disagreements = [v for v in verdicts.values() if v.disagreement]
    if disagreements:
        table = Table(title=f"{len(disagreements)} disagreements", title_justify="left")
        table.add_column("candidate")
        table.add_column("status")
        table.add_column("votes")
        for verdict in disagreements[:20]:
            votes = ", ".join(
                f"{who}: {' or '.join(label_options(vote))}" for who, vote in verdict.votes.items()
            )
            table.add_row(verdict.candidate_id, verdict.status, votes)
        console.print(table)
    agreements = pairwise_agreement(annotations)
    if agreements:
        table = Table(title="agreement", title_justify="left")
        for column in ("annotators", "overlap", "agreement", "Cohen's kappa"):
            table.add_column(column, justify="left" if column == "annotators" else "right")
        for row in agreements:
            kappa = "n/a" if row.kappa is None else f"{row.kappa:.3f}"
            table.add_row(
                f"{row.annotator_a} / {row.annotator_b}",
                str(row.overlap),
                f"{row.observed:.1%}",
                kappa,
            )
        console.print(table)
