"""`testaug review candidates` (once `testaug annotate`): send doubtful candidates to people
(Label Studio or the terminal), bring their verdicts back, and apply them: the accepted
candidates join the suite (`apply`, once `merge`), and the rankers learn from the verdicts
(`retrain`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import (
    OLD_CASES,
    OLD_SUITE,
    output_option,
    renamed_option,
    seed_cases_given,
    seed_cases_option,
    suite_cases_given,
)
from testaug.cli.rankers import print_bases
from testaug.cli.review.common import (
    API_KEY,
    OLD_ANNOTATIONS,
    URL,
    annotator_option,
    kind_door,
    old_verb,
    print_pulled,
    print_pushed,
    terminal_reviewer,
    verdicts_given,
    verdicts_option,
)
from testaug.cli.review.server import install_server_command, server_command
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, label_options
from testaug.core.run_folder import RunFolder
from testaug.review.acceptance import DEFAULT_TARGET, check_target
from testaug.review.plans import read_annotations
from testaug.review.selection import DEFAULT_CALIBRATION_SIZE, SelectionConfig
from testaug.review.verdicts import Verdict, pairwise_agreement, status_counts
from testaug.steps.contract import StepOutput
from testaug.steps.rank import RetrainConfig, retrain_ranking
from testaug.steps.review import (
    AnnotateSummary,
    ReviewConfig,
    connect_label_studio,
    merge_reviewed,
    pull_and_merge,
    push_to_label_studio,
    review_in_terminal,
)

TOP = typer.Option(None, "--top", min=0.0, max=1.0, help="Fraction of the ranking people review.")
BUDGET = typer.Option(None, "--budget", min=0, help="At most this many candidates for people.")
PROJECT = typer.Option(None, "--project", help="Label Studio project (default: testaug <run>).")
ACCEPT_PRECISION = typer.Option(
    DEFAULT_TARGET,
    "--accept-precision",
    help="The ranker accepts a candidate only under a rule whose out-of-fold precision "
    "reaches this with 95% confidence (0 < p <= 1).",
)
SEED_CASES = seed_cases_option("cases.jsonl beside RANKED", ", shown beside each candidate")
CALIBRATION_SAMPLE = typer.Option(
    DEFAULT_CALIBRATION_SIZE,
    "--calibration-sample",
    min=0,
    help="For a generator with fewer than 200 labels, people first label this many of its "
    "candidates drawn at random (then those the ranker is least sure of).",
)
POOLED_RULE = typer.Option(
    False,
    "--pooled-rule",
    help="Let the ranker accept candidates of a generator with no random labels of its own "
    "under the rule pooled over other generators (off: it accepts none of them).",
)


VERDICTS = verdicts_option(
    None, "People's verdicts (JSONL; default: annotations.jsonl beside RANKED)."
)
PULLED = verdicts_option(None, "People's verdicts (JSONL) to update.")
SUITE_CASES = typer.Option(
    None, "--suite-cases", help="The suite's cases (JSONL) the accepted candidates join."
)


def push_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    top: float | None = TOP,
    budget: int | None = BUDGET,
    accept_precision: float = ACCEPT_PRECISION,
    project: str | None = PROJECT,
    verdicts: Path | None = VERDICTS,
    cases: Path | None = SEED_CASES,
    calibration_sample: int = CALIBRATION_SAMPLE,
    pooled_rule: bool = POOLED_RULE,
    url: str | None = URL,
    api_key: str | None = API_KEY,
    old_annotations: Path | None = OLD_ANNOTATIONS,
    old_cases: Path | None = OLD_CASES,
) -> None:
    """Send candidates to people in Label Studio: the ranker accepts what its rule for
    --accept-precision vouches for (read from RANKED's .calibration.json), and the top of the
    rest goes into a Label Studio project."""
    verdicts = verdicts_given(verdicts, old_annotations, command="review candidates push")
    cases = seed_cases_given(cases, old_cases, command="review candidates push")
    check_target(accept_precision, field="--accept-precision")
    config = ReviewConfig(
        ranked=ranked_path,
        annotations=verdicts,
        cases=cases,
        project=project,
        top=top,
        budget=budget,
        accept_precision=accept_precision,
        selection=SelectionConfig(calibration_sample=calibration_sample, pooled_rule=pooled_rule),
    )
    pushed = push_to_label_studio(config, studio=connect_label_studio(url, api_key))
    summary = pushed.summary
    print_pushed(f"{summary.sent:,} candidates", summary.project, summary)
    _print_acceptance(summary, pushed.path)


def pull_command(
    verdicts: Path | None = PULLED,
    project: str | None = PROJECT,
    ranked_path: Path | None = typer.Option(
        None, "--ranked", help="Ranked candidates (default: ranked.jsonl beside the verdicts)."
    ),
    suite: Path | None = SUITE_CASES,
    url: str | None = URL,
    api_key: str | None = API_KEY,
    old_output: Path | None = output_option(None, "-o", "--output", help="", hidden=True),
    old_suite: Path | None = OLD_SUITE,
) -> None:
    """Bring people's verdicts back, then write the accepted candidates as suite cases."""
    output = renamed_option(
        verdicts,
        old_output,
        old="--output",
        new="--verdicts",
        default=None,
        command="review candidates pull",
    )
    suite = suite_cases_given(suite, old_suite, command="review candidates pull")
    if output is None:
        raise InputError(
            Problem("give --verdicts, the verdicts file to update", field="--verdicts")
        )
    config = ReviewConfig(
        ranked=ranked_path or RunFolder.of(output).ranked,
        annotations=output,
        suite=suite,
        project=project,
    )
    merged = pull_and_merge(config, studio=connect_label_studio(url, api_key))
    pulled = merged.summary.pulled
    fresh = f"{pulled.added:,} new, {pulled.changed:,} changed"
    print_pulled(pulled.project, pulled, fresh, f"{pulled.annotations:,} records in {output}")
    _print_merge(merged, output)


def apply_command(
    annotations_path: Path = typer.Argument(
        ..., metavar="VERDICTS", help="People's verdicts (JSONL, from terminal or pull)."
    ),
    ranked_path: Path = typer.Option(..., "--ranked", help="Ranked candidates (JSONL)."),
    suite: Path | None = SUITE_CASES,
    old_suite: Path | None = OLD_SUITE,
) -> None:
    """Decide every candidate from people's verdicts and write the accepted ones as suite
    cases."""
    suite = suite_cases_given(suite, old_suite, command="review candidates apply")
    merged = merge_reviewed(
        ReviewConfig(ranked=ranked_path, annotations=annotations_path, suite=suite)
    )
    _print_merge(merged, annotations_path)


def terminal_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    top: float | None = TOP,
    budget: int | None = BUDGET,
    accept_precision: float = ACCEPT_PRECISION,
    verdicts: Path | None = VERDICTS,
    annotator: str | None = annotator_option("the records"),
    cases: Path | None = SEED_CASES,
    calibration_sample: int = CALIBRATION_SAMPLE,
    pooled_rule: bool = POOLED_RULE,
    old_annotations: Path | None = OLD_ANNOTATIONS,
    old_cases: Path | None = OLD_CASES,
) -> None:
    """Review, in the terminal, the top of the ranking among the candidates the ranker's rule
    does not accept: Enter valid, n invalid, s skip, q quit. Verdicts are saved one by one;
    run it again to go on where you stopped."""
    verdicts = verdicts_given(verdicts, old_annotations, command="review candidates terminal")
    cases = seed_cases_given(cases, old_cases, command="review candidates terminal")
    check_target(accept_precision, field="--accept-precision")
    config = ReviewConfig(
        ranked=ranked_path,
        annotations=verdicts,
        cases=cases,
        top=top,
        budget=budget,
        accept_precision=accept_precision,
        selection=SelectionConfig(calibration_sample=calibration_sample, pooled_rule=pooled_rule),
        annotator=annotator,
    )
    reviewer = terminal_reviewer(annotator)
    done = review_in_terminal(config, read_key=reviewer["read_key"], console=reviewer["console"])
    summary = done.summary
    console.print(
        styled(
            "[green]{:,} annotated[/] ({:,} valid, {:,} invalid), {:,} skipped, {:,} left; "
            "saved to {}",
            summary.annotated,
            summary.valid,
            summary.invalid,
            summary.skipped,
            summary.remaining,
            done.path,
        )
    )
    _print_acceptance(summary, done.path)


def retrain_command(
    ranked_path: Path = typer.Argument(..., metavar="RANKED", help="Ranked candidates (JSONL)."),
    verdicts: Path | None = typer.Option(None, "--verdicts", help="People's verdicts so far."),
    rankers_out: Path = output_option(
        ..., "--rankers-out", kind="folder", help="Folder for the new ensemble."
    ),
    output: Path = output_option(..., "-o", "--output", help="Where to write the re-ranked ones."),
    config: str = typer.Option("offline", help="Ensemble config: offline, paper, or a YAML file."),
    extra: Path | None = typer.Option(
        None,
        "--with",
        help="Labelled candidates to train on as well (JSONL, or a folder of parts).",
    ),
    old_annotations: Path | None = OLD_ANNOTATIONS,
) -> None:
    """Active loop: retrain the rankers on every verdict so far and re-rank what is pending.
    Push the output again to send the next batch to people."""
    from testaug.cli.options import build_config

    annotations_path = verdicts_given(
        verdicts, old_annotations, command="review candidates retrain"
    )
    if annotations_path is None:
        raise InputError(Problem("give --verdicts, people's verdicts so far", field="--verdicts"))

    with err_console.status("retraining the ranker ensemble"):
        done = retrain_ranking(
            build_config(
                RetrainConfig,
                flags={
                    "ranked": "RANKED",
                    "out": "--output",
                    "ensemble": "--config",
                    "extra": "--with",
                },
                ranked=ranked_path,
                annotations=annotations_path,
                out=output,
                ensemble=config,
                rankers_out=rankers_out,
                extra=extra,
            )
        )
    summary = done.summary
    console.print(
        styled(
            "[green]retrained[/] ensemble {} on {:,} verdicts of people and {:,} other "
            "labelled candidates into {}; re-ranked {:,} pending candidates into {}",
            summary.ensemble,
            summary.from_people,
            summary.from_extra,
            rankers_out,
            done.records,
            output,
        )
    )
    print_bases(summary.bases)


COMMANDS = {
    "terminal": terminal_command,
    "push": push_command,
    "pull": pull_command,
    "apply": apply_command,
    "retrain": retrain_command,
}


def candidates_door() -> typer.Typer:
    """`testaug review candidates`: its verbs, and `merge`, the old name of `apply`."""
    return kind_door(
        "Generated candidates the rankers cannot vouch for: people judge them in the "
        "terminal or in Label Studio, the accepted ones join the suite, and the rankers "
        "learn from the verdicts.",
        "Generated candidates: judge, apply to the suite, retrain.",
        COMMANDS,
        hidden={
            "merge": old_verb(apply_command, "review candidates merge", "review candidates apply")
        },
    )


def annotate_door() -> typer.Typer:
    """`testaug annotate`, the old name of `testaug review candidates` (with `merge`, and the
    server commands, now `testaug review server` and `install-server`)."""
    old = {
        "install-server": install_server_command,
        "server": server_command,
        "push": push_command,
        "pull": pull_command,
        "merge": apply_command,
        "terminal": terminal_command,
        "retrain": retrain_command,
    }
    return kind_door(
        "Review the doubtful candidates: Label Studio or the terminal, and merge verdicts.",
        None,
        old,
    )


def _print_acceptance(summary: AnnotateSummary, annotations_path: Path) -> None:
    """What the ranker accepted (per calibration group) and how many wait, in a few lines."""
    acceptance = summary.acceptance
    console.print(
        f"the ranker accepted {acceptance.accepted_by_ranker:,} candidates under its rules for "
        f"precision {acceptance.accept_precision:.0%} (recorded in {annotations_path}); "
        f"{summary.pending:,} more wait for people (not in this batch)",
        highlight=False,
    )
    for group, numbers in acceptance.groups.items():
        rule = numbers.rule
        if group == acceptance.unpooled:
            where = (
                "no random labels of its own generator, so no rule (--pooled-rule opts in "
                "to the rule pooled over other generators)"
            )
        elif rule is None:
            where = "no threshold on P(valid) qualified"
        else:
            where = (
                f"P(valid) >= {rule.threshold:.3f}, out-of-fold precision "
                f"{rule.precision_estimate:.1%} (lower bound {rule.precision_lower_bound:.1%})"
            )
        console.print(
            f"  {group}: {where}; accepted {numbers.accepted:,} of {numbers.candidates:,}",
            highlight=False,
        )


def _print_merge(merged: StepOutput, beside: Path) -> None:
    """The verdicts, disagreements and agreement of a merge, and where the cases went."""
    verdicts = {v.candidate_id: v for v in read_jsonl(merged.files["verdicts"], Verdict)}
    _print_verdicts(verdicts, read_annotations(beside))
    message = styled(
        "[green]accepted[/] {:,} cases (source llm) into {}", merged.records, merged.path
    )
    if "suite" in merged.files:
        summary = merged.summary
        message.append(
            f"; suite of {summary.suite:,} cases ({summary.added:,} new) in {merged.files['suite']}"
        )
    console.print(message)


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
