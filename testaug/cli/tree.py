"""`testaug tree`: test trees built from suites, imported from and exported to AdaTest's CSV,
scored on models, and re-tested to see which topics newly fail."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer
from rich.table import Table

from testaug.cli import gate
from testaug.cli.console import console, err_console, styled
from testaug.cli.options import build_config, choice, output_option
from testaug.core.errors import InputError, Problem
from testaug.core.overwrites import refuse_overwriting_inputs
from testaug.core.run_sizes import TREE_PER_TEMPLATE as DEFAULT_PER_TEMPLATE

tree_app = typer.Typer(
    help="Test trees (AdaTest): topics of tests, scored on models and re-tested.",
    no_args_is_help=True,
)

MODEL_HELP = "A model under test: vader, spacy:NAME, hf:PATH[?labels=..], py:MODULE:FUNCTION."
TASK_HELP = "The task whose shipped suite gives the labels (sentiment, paraphrase, nli)."
LABELS_HELP = "The task's labels, comma-separated (instead of --task)."
LABEL_MAP_HELP = (
    "Rename the tree's output labels as they are read, FROM=TO comma-separated "
    "(neg=negative,pos=positive)."
)
RESOLVE_HELP = (
    LABEL_MAP_HELP + " Labels the model lacks are also matched ignoring case, and AdaTest's "
    "neg/neu/pos read as negative/neutral/positive."
)
SHOWN_NOTES = 10


@tree_app.command("from-suite")
def from_suite_command(
    suite: str = typer.Argument(
        ...,
        help="A suite YAML file, a folder holding suite.yaml, a shipped suite's name, "
        "or test cases (JSONL).",
    ),
    output: Path = output_option(..., "-o", "--output", help="Where to write the tree (JSONL)."),
    perturbed: Path | None = typer.Option(
        None,
        "--perturbed",
        help="Perturbed cases (JSONL, a run's perturbed.jsonl) to add as tests that a change "
        "keeps, or changes, the answer.",
    ),
    per_template: int = typer.Option(
        DEFAULT_PER_TEMPLATE,
        "--per-template",
        min=0,
        help="A suite: a seeded sample of this many cases per template (0: every fill; a "
        "whole suite is hundreds of thousands of tests).",
    ),
    perturb: int = typer.Option(
        0,
        "--perturb",
        min=0,
        help="Also perturbation tests (a changed copy of a case should keep, or change, the "
        "answer), as `testaug evaluate models` makes them: cases each perturbation changes "
        "(0: none).",
    ),
    labels: str | None = typer.Option(
        None, "--labels", help="Cases: the task's labels, comma-separated (default: shipped)."
    ),
    seed: int = typer.Option(0, help="Seed of the per-template and perturbation samples."),
) -> None:
    """Build a tree: one topic per capability and description, a test per case."""
    from testaug.adaptive.from_suite import battery_cases, tree_from_cases, tree_from_suite
    from testaug.adaptive.tree_files import write_tree
    from testaug.core.bundled import resolve_suite
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import TestCase
    from testaug.evaluation.perturbations.cases import PerturbedCase
    from testaug.suites.load import load_suite
    from testaug.suites.task_labels import check_labels, task_labels_and_lexicons

    extra = list(read_jsonl(perturbed, PerturbedCase)) if perturbed is not None else []
    if suite.lower().endswith((".jsonl", ".ndjson")):
        cases = list(read_jsonl(suite, TestCase))
        if not cases:
            raise InputError(Problem("no test cases in the file", file=suite))
        given = [name.strip() for name in labels.split(",")] if labels else None
        check_labels(cases, known=given, file=suite)
        task_labels, lexicons = task_labels_and_lexicons(cases, labels)
        extra += battery_cases(cases, task_labels, lexicons, per_test=perturb, seed=seed)
        tree = tree_from_cases(cases, extra)
    else:
        loaded = load_suite(resolve_suite(suite))
        tree = tree_from_suite(
            loaded, extra, per_template=per_template or None, per_test=perturb, seed=seed
        )
    if not tree.tests:
        raise InputError(Problem("no test cases to build a tree from", file=suite))
    write_tree(output, tree)
    console.print(
        styled(
            "[green]wrote[/] {:,} tests in {:,} topics to {}",
            len(tree.tests),
            len(tree.topics()),
            output,
        )
    )


@tree_app.command("import")
def import_command(
    source: Path = typer.Argument(..., metavar="ADATEST.csv", help="An AdaTest test tree (CSV)."),
    output: Path = output_option(..., "-o", "--output", help="Where to write the tree (JSONL)."),
    label_map: str | None = typer.Option(None, "--label-map", help=LABEL_MAP_HELP),
) -> None:
    """Import an AdaTest CSV tree (current or older columns)."""
    from testaug.adaptive.adatest_csv import read_adatest_csv
    from testaug.adaptive.adatest_layout import save_layout
    from testaug.adaptive.label_map import parse_label_map
    from testaug.adaptive.tree_files import write_tree

    imported = read_adatest_csv(source, label_map=parse_label_map(label_map))
    if not imported.tree.rows:
        raise InputError(Problem("no tests or topics in the file", file=source))
    write_tree(output, imported.tree)
    save_layout(output, imported.layout)  # for `tree export` to give the file back
    tree = imported.tree
    unlabelled = sum(row.kind == "unlabelled" for row in tree.rows)
    pending = f" and {unlabelled:,} without a verdict (Unknown)" if unlabelled else ""
    console.print(
        styled(
            "[green]wrote[/] {:,} tests{} in {:,} topics to {} (AdaTest {} columns)",
            len(tree.tests),
            pending,
            len(tree.topics()),
            output,
            imported.format,
        )
    )
    for row in imported.skipped:
        err_console.print(styled("[yellow]skipped[/] line {}: {}", row.line, row.reason))


@tree_app.command("export")
def export_command(
    tree_path: Path = typer.Argument(..., metavar="TREE", help="A tree (JSONL)."),
    output: Path = output_option(..., "-o", "--output", help="Where to write the CSV."),
    format: str = typer.Option(
        "label",
        "--format",
        help="AdaTest's columns: label (topic, input, output, label, ...; what AdaTest loads "
        "today) or type (adatest 0.x; holds same-as and no-more-than tests too).",
    ),
    task: str | None = typer.Option(None, "--task", help=TASK_HELP),
    labels: str | None = typer.Option(None, "--labels", help=LABELS_HELP),
) -> None:
    """Export a tree as an AdaTest CSV; tests the format cannot hold are listed, not written.
    A tree imported from AdaTest is written as its file was (the same columns and topic
    spelling, kept beside the tree by `tree import`). With the task's labels, "should be
    a|b" is written as "should not be" each other label."""
    from testaug.adaptive.adatest_export import write_adatest_csv
    from testaug.adaptive.adatest_layout import load_layout
    from testaug.adaptive.tree_files import read_tree
    from testaug.adaptive.tree_jobs import tree_task_labels

    columns = choice(Literal["label", "type"], format, "--format")
    task_labels = tree_task_labels(task, labels) if task or labels else None
    tree = read_tree(tree_path)
    layout = load_layout(tree_path)  # the AdaTest file's, when the tree was imported
    result = write_adatest_csv(output, tree, format=columns, labels=task_labels, layout=layout)
    console.print(styled("[green]wrote[/] {:,} rows to {}", result.rows, output))
    changed = sum(note.written for note in result.notes)
    left_out = len(result.notes) - changed
    if result.notes:
        err_console.print(
            styled(
                "[yellow]{:,} tests written changed, {:,} left out[/] (AdaTest's format cannot "
                "hold them as they are):",
                changed,
                left_out,
            )
        )
    for note in result.notes[:SHOWN_NOTES]:
        what = "changed" if note.written else "left out"
        err_console.print(f"  {what} {note.test_id} ({note.topic}): {note.reason}", highlight=False)
    if len(result.notes) > SHOWN_NOTES:
        err_console.print(f"  ... and {len(result.notes) - SHOWN_NOTES:,} more", highlight=False)


@tree_app.command("score")
def score_command(
    tree_path: Path = typer.Argument(..., metavar="TREE", help="A tree (JSONL)."),
    model: list[str] = typer.Option(..., "--model", help=MODEL_HELP),
    output: Path = output_option(..., "-o", "--output", help="Where to write the scored tree."),
    task: str | None = typer.Option(None, "--task", help=TASK_HELP),
    labels: str | None = typer.Option(None, "--labels", help=LABELS_HELP),
    label_map: str | None = typer.Option(None, "--label-map", help=RESOLVE_HELP),
    batch_size: int = typer.Option(32, min=1),
) -> None:
    """Score every test on every model (failure score: above 0 is a failing test)."""
    from testaug.adaptive.label_map import parse_label_map
    from testaug.adaptive.tree_jobs import score_file

    mapping = parse_label_map(label_map)
    scored = score_file(
        tree_path, model, output, task=task, labels=labels, batch_size=batch_size, label_map=mapping
    )
    table = Table(title_justify="left")
    for column in ("model", "tests", "failing", "failure rate"):
        table.add_column(column, justify="left" if column == "model" else "right")
    names = list(dict.fromkeys(name for test in scored.tests for name in test.scores))
    for name in names:
        scores = [test.scores[name] for test in scored.tests if name in test.scores]
        failing = sum(score > 0 for score in scores)
        table.add_row(
            name, f"{len(scores):,}", f"{failing:,}", f"{100 * failing / len(scores):.1f}%"
        )
    console.print(table)
    console.print(styled("[green]wrote[/] {}", output))


@tree_app.command("retest")
def retest_command(
    tree_path: Path = typer.Argument(..., metavar="TREE", help="A tree (JSONL)."),
    model: str = typer.Option(..., "--model", help=MODEL_HELP),
    output: Path = output_option(..., "-o", "--output", help="Where to write the report (JSON)."),
    previous: Path | None = typer.Option(
        None, "--previous", help="An earlier report of the tree, to see which topics got worse."
    ),
    threshold: float = typer.Option(
        5.0, "--threshold", min=0.0, help="A topic is worse when its rate rose by more (points)."
    ),
    scored_tree: Path | None = output_option(
        None, "--scored-tree", help="Also write the tree with this model's scores."
    ),
    task: str | None = typer.Option(None, "--task", help=TASK_HELP),
    labels: str | None = typer.Option(None, "--labels", help=LABELS_HELP),
    label_map: str | None = typer.Option(None, "--label-map", help=RESOLVE_HELP),
    batch_size: int = typer.Option(32, min=1),
    fail_on_new_failures: bool = typer.Option(
        False,
        "--fail-on-new-failures",
        help="Exit 1 when a topic newly fails against --previous (a CI gate).",
    ),
    gate_file: Path | None = gate.GATE_FILE_OPTION,
    max_error: list[str] = gate.MAX_ERROR_OPTION,
    junit: Path | None = gate.JUNIT_OPTION,
) -> None:
    """Apply a tree to a model: failure rates per topic, and the topics that newly fail.
    A gate's capability is a first-level topic, its description a second-level one."""
    from testaug.adaptive.label_map import parse_label_map
    from testaug.adaptive.retest import read_tree_report
    from testaug.steps.retest import RetestConfig, retest_tree

    if fail_on_new_failures and previous is None:
        raise InputError(
            Problem("needs --previous to compare with", field="--fail-on-new-failures")
        )
    refuse_overwriting_inputs(
        {"--output": output, "--scored-tree": scored_tree, "--junit": junit},
        {"TREE": tree_path, "--previous": previous, "--gate": gate_file},
    )
    config = gate.build_gate(
        gate_file=gate_file,
        max_error=max_error,
        fail_on_new_failures=fail_on_new_failures,
        junit=junit,
    )
    retest = build_config(
        RetestConfig,
        flags={"tree": "TREE", "out": "--output"},
        tree=tree_path,
        model=model,
        out=output,
        previous=previous,
        threshold=threshold,
        task=task,
        labels=labels,
        scored_tree=scored_tree,
        batch_size=batch_size,
        label_map=parse_label_map(label_map),
    )
    report = read_tree_report(retest_tree(retest).path)
    changed = {change.topic: change for change in report.changes}
    title = f"{report.model} on {tree_path}"
    if report.previous_model is not None:
        title += f" (against {report.previous_model})"
    table = Table(title=title, title_justify="left")
    table.add_column("topic")
    for column in ("tests", "failing", "failure rate", "direct", "change"):
        table.add_column(column, justify="right")
    for result in report.topics:
        change = changed.get(result.topic)
        style = "bold red" if change and change.kind == "newly failing" else None
        style = style or ("yellow" if change else None)
        direct = (
            "" if result.direct_tests == 0 else f"{result.direct_failing}/{result.direct_tests}"
        )
        note = ""
        if change is not None:
            note = (
                change.kind
                if change.kind == "newly failing"
                else f"+{change.after - change.before:.1f} pts"
            )
        table.add_row(
            result.topic,
            f"{result.tests:,}",
            f"{result.failing:,}",
            "-" if result.failure_rate is None else f"{result.failure_rate:.1f}%",
            direct,
            note,
            style=style,
        )
    console.print(table)
    newly = report.newly_failing
    if newly:
        topics = ", ".join(change.topic for change in newly)
        console.print(styled("[bold red]{} topic(s) newly failing[/]: {}", len(newly), topics))
    console.print(styled("[green]wrote[/] {}", output))
    if config is not None:
        from testaug.adaptive.tree_gate import check_tree_gate

        gate.enforce_gate(check_tree_gate(report, config), junit)
