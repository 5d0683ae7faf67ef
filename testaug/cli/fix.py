"""`testaug tree fix`: rounds of AdaTest's debugging loop. Fine-tune a Hugging Face classifier
from its last checkpoint on the tests it fails mixed 1:1 with i.i.d. data, re-test every
topic, say which topics each round fixed and which it broke, and why the run stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import OLD_CASES, OLD_MODEL, build_config, output_option, renamed_option

if TYPE_CHECKING:
    from testaug.fixing.debugging.records import FixLoop, FixRound
    from testaug.fixing.patching.report import Stat

TASK_HELP = "The task whose shipped suite gives the labels (sentiment, paraphrase, nli)."
LABELS_HELP = "The task's labels, comma-separated (instead of --task)."
STYLES = {"fixed": "green", "broken": "bold red"}


def fix_command(
    work: Path = output_option(
        ..., "--work", kind="folder", help="The loop's folder: each round writes round-NNN/ there."
    ),
    iid: Path = typer.Option(
        ...,
        "--iid",
        help="Ordinary labelled examples (i.i.d.; JSONL: text, text_pair, label), as many "
        "mixed in as failing tests, so the model does not forget its task.",
    ),
    model: str | None = typer.Option(
        None,
        "--start-model",
        help="The checkpoint the first round fine-tunes, hf:PATH (a local folder); later "
        "rounds start from the last round's checkpoint in --work.",
    ),
    tree: Path | None = typer.Option(None, "--tree", help="A test tree (JSONL)."),
    cases: Path | None = typer.Option(
        None,
        "--test-cases",
        help="Instead of a tree: test cases (JSONL), e.g. a run's failing cases.",
    ),
    topic: list[str] = typer.Option(
        [], "--topic", help="Train only on failing tests within this topic (repeatable)."
    ),
    iid_eval: Path | None = typer.Option(
        None,
        "--iid-eval",
        help="Ordinary labelled examples to measure accuracy on (default: a seeded half of "
        "--iid, held out).",
    ),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Fine-tunings with seeds 0, 1, ..."),
    continue_from: str = typer.Option(
        "best-iid",
        "--continue-from",
        help="Which seed's checkpoint the next round starts from: best-iid (the best accuracy "
        "on the ordinary examples) or first.",
    ),
    rounds: int = typer.Option(
        1, "--rounds", min=1, help="Rounds to run at most (each from the last one's checkpoint)."
    ),
    iid_tolerance: float = typer.Option(
        5.0,
        "--iid-tolerance",
        min=0.0,
        help="Stop when accuracy on the ordinary examples falls more than this many points "
        "below the run's start.",
    ),
    trainer: str = typer.Option(
        "behaviour",
        "--trainer",
        help="How tests become training targets: behaviour (each test's own expectation: a "
        "label, the same answer as the original, a change in a direction) or hard (one label "
        "per test; tests that expect a change are left out).",
    ),
    fail_above: float = typer.Option(
        20.0, "--fail-above", min=0.0, max=100.0, help="A topic fails above this rate (%)."
    ),
    epochs: int = typer.Option(3, min=1, help="Fine-tuning epochs."),
    learning_rate: float = typer.Option(5e-6, help="Fine-tuning learning rate."),
    batch_size: int = typer.Option(8, min=1, help="Fine-tuning batch size."),
    max_length: int = typer.Option(128, min=8, help="Tokens kept per text."),
    device: str = typer.Option("cpu", help="Where to fine-tune: cpu, cuda, cuda:1, ..."),
    task: str | None = typer.Option(None, "--task", help=TASK_HELP),
    labels: str | None = typer.Option(None, "--labels", help=LABELS_HELP),
    as_json: bool = typer.Option(
        False, "--json", help="Print the run (each round's report and why it stopped) as JSON."
    ),
    old_model: str | None = OLD_MODEL,
    old_cases: Path | None = OLD_CASES,
) -> None:
    """Fine-tune a model on the tests it fails, in rounds: each round trains on the failing
    tests and as many ordinary examples, re-tests every topic and reports each topic's failure
    rate before and after (fixed / broken). It stops after --rounds, or when a round fixes (or
    lowers) no failing topic, no topic fails, or accuracy on the ordinary examples falls more
    than --iid-tolerance points."""
    from testaug.fixing.debugging.records import FixRoundConfig, StopRule
    from testaug.fixing.finetune import FineTuneConfig
    from testaug.steps.fix import FixConfig, fix_files

    model = renamed_option(
        model, old_model, old="--model", new="--start-model", default=None, command="tree fix"
    )
    cases = renamed_option(
        cases, old_cases, old="--cases", new="--test-cases", default=None, command="tree fix"
    )
    options = build_config(
        FixConfig,
        flags={"topics": "--topic", "cases": "--test-cases", "model": "--start-model"},
        work=work,
        iid=iid,
        tree=tree,
        cases=cases,
        model=model,
        iid_eval=iid_eval,
        task=task,
        labels=labels,
        round=build_config(
            FixRoundConfig,
            flags={"topics": "--topic"},
            topics=tuple(topic),
            seeds=tuple(range(seeds)),
            config=build_config(
                FineTuneConfig,
                epochs=epochs,
                learning_rate=learning_rate,
                batch_size=batch_size,
                max_length=max_length,
                device=device,
            ),
            fail_above=fail_above,
            trainer=trainer,
            continue_from=continue_from,
        ),
        stop=build_config(StopRule, rounds=rounds, iid_tolerance=iid_tolerance),
    )
    with err_console.status("fixing") as status:
        done = fix_files(options, on_progress=lambda message: status.update(message))
    loop = done.summary.loop
    if as_json:
        typer.echo(json.dumps(loop.model_dump(mode="json")))
        return
    print_loop(loop)


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _stat(value: Stat | None, unit: str = "%", scale: float = 1.0) -> str:
    if value is None:
        return "-"
    text = f"{value.mean * scale:.1f}{unit}"
    return text + (f" ± {value.std * scale:.1f}" if value.n > 1 else "")


def print_round(report: FixRound) -> None:
    """The per-topic table, the fixed and broken topics, i.i.d. accuracy and the files."""
    from testaug.fixing.debugging.topics import has_p_values, p_cell

    seeds = len(report.seeds)
    title = (
        f"round {report.round}: {report.model_before} -> {report.checkpoint} "
        f"({seeds} seed{'s' if seeds > 1 else ''}; a topic fails above {report.fail_above:g}%)"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("topic")
    tested = has_p_values(report)
    columns = ("tests", "trained on", "before", "after", "change", *(("p",) if tested else ()), "")
    for column in columns:
        table.add_column(column, justify="right")
    for row in report.topics:
        change = "-" if row.change is None else f"{row.change:+.1f} pts"
        shown = row.status if row.status in STYLES else ""
        table.add_row(
            row.topic,
            f"{row.tests:,}",
            f"{row.fixing_tests:,}",
            _rate(row.before),
            _stat(row.after),
            change,
            *((p_cell(row),) if tested else ()),
            shown,
            style=STYLES.get(row.status),
        )
    console.print(table)
    fixed, broken = ", ".join(report.fixed) or "none", ", ".join(report.broken) or "none"
    console.print(styled("[green]fixed {}[/]: {}", len(report.fixed), fixed))
    console.print(styled("[red]broken {}[/]: {}", len(report.broken), broken))
    if seeds > 1:
        console.print(
            f"per seed: fixed {_stat(report.fixed_count, '')}, "
            f"broken {_stat(report.broken_count, '')}",
            highlight=False,
        )
    if report.rose:
        rose = ", ".join(
            f"{c.topic} ({c.kind}, {c.before:.1f}% -> {c.after:.1f}%)" for c in report.rose
        )
        console.print(
            styled(
                "[yellow]rate rose[/] on the kept checkpoint (from 0%, or by more than {:g} "
                "pts): {}",
                report.threshold,
                rose,
            )
        )
    before = "-" if report.iid_before is None else f"{100 * report.iid_before:.1f}%"
    console.print(
        f"i.i.d. accuracy ({report.iid_eval_examples} examples): {before} -> "
        f"{_stat(report.iid_after, '%', 100.0)}",
        highlight=False,
    )
    left_out = ", ".join(f"{n} {reason}" for reason, n in report.untrainable.items())
    console.print(
        f"trained ({report.trainer}) on {report.fixing_examples} of {report.failing_tests} failing tests "
        f"+ {report.iid_examples} i.i.d. examples"
        + (f" (left out: {left_out})" if left_out else ""),
        highlight=False,
    )
    if seeds > 1:
        for run in report.per_seed:
            accuracy = "-" if run.iid_after is None else f"{100 * run.iid_after:.1f}%"
            console.print(
                f"  seed {run.seed}: i.i.d. {accuracy}, fixed {len(run.fixed)}, "
                f"broken {len(run.broken)} -> {run.checkpoint or '-'}",
                highlight=False,
            )
    console.print(
        f"kept seed {report.chain_seed} ({report.chain_reason}): {report.checkpoint}",
        highlight=False,
    )


def print_loop(loop: FixLoop) -> None:
    """Each round, a line per round when there were several, why the run stopped, and what
    to run next."""
    from testaug.fixing.debugging.records import SCORED_TREE_FILE
    from testaug.fixing.debugging.topics import failing_topics

    for report in loop.rounds:
        print_round(report)
    if len(loop.rounds) > 1:
        table = Table(title="rounds", title_justify="left")
        columns = ("round", "seeds", "fixed", "broken", "failing", "i.i.d. before", "after", "kept")
        for column in columns:
            table.add_column(column, justify="left" if column == "kept" else "right")
        for report in loop.rounds:
            kept = report.kept()
            table.add_row(
                str(report.round),
                str(len(report.seeds)),
                str(len(kept.fixed)),
                str(len(kept.broken)),
                str(len(failing_topics(kept.after, report.fail_above, report.topics_trained))),
                "-" if report.iid_before is None else f"{100 * report.iid_before:.1f}%",
                "-" if kept.iid_after is None else f"{100 * kept.iid_after:.1f}%",
                f"seed {kept.seed}",
            )
        console.print(table)
        console.print(
            "(fixed, broken, topics still failing and i.i.d. after: on the kept seed's checkpoint)",
            highlight=False,
        )
    last = loop.rounds[-1]
    console.print(
        styled(
            "[bold]stopped[/] after round {} ({}): {}",
            last.round,
            loop.stop.reason,
            loop.stop.message,
        )
    )
    folders = ", ".join(str(Path(r.checkpoint).parent) for r in loop.rounds)
    console.print(styled("[green]wrote[/] {} (a checkpoint per seed, fix_report.json)", folders))
    folder = Path(last.checkpoint).parent
    console.print(
        f"next: `testaug tree adapt {folder / SCORED_TREE_FILE} --model hf:{last.checkpoint} "
        "...` finds new failures; `testaug tree fix` again starts from this checkpoint",
        highlight=False,
    )
