"""`testaug run`: the main job, the `pipeline` flow under Prefect, from a suite to the report."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from testaug.cli import gate
from testaug.cli.console import console, err_console, styled
from testaug.cli.options import output_option, renamed_option
from testaug.core.fault_logs import quiet_expected_faults
from testaug.core.overwrites import existing, refuse_overwriting_inputs
from testaug.core.prefect_environment import prepare_prefect_environment
from testaug.core.run_folder import RunFolder
from testaug.core.run_sizes import SIZES
from testaug.core.secrets import split_userinfo
from testaug.core.settings import Settings
from testaug.review.acceptance import DEFAULT_TARGET
from testaug.review.plans import DEFAULT_REVIEW_FRACTION
from testaug.steps.config import RunConfig, chosen_suite, run_config
from testaug.steps.measure import CombineEvaluationsSummary
from testaug.steps.review import AnnotateSummary

if TYPE_CHECKING:
    from flows.pipeline import PipelineRun


def run_command(
    task: str | None = typer.Option(
        None, help="A task (sentiment, paraphrase, nli): its bundled suite, unless --suite."
    ),
    suite: str | None = typer.Option(
        None, help="A suite: file, folder or shipped name (default: the task's, else sentiment)."
    ),
    run_dir: Path = output_option(
        Path("runs/latest"),
        "--run-dir",
        kind="folder",
        help="The run folder (a second run reuses its work).",
    ),
    size: str = typer.Option("default", help=f"How big a run: {', '.join(SIZES)}."),
    backend: str = typer.Option("local", help="LLM backend: local (embedded) or openai."),
    base_url: str | None = typer.Option(
        None, help="OpenAI-compatible server URL (default: $OPENAI_BASE_URL, else OpenAI)."
    ),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help="The LLM: a model id on the server (openai backend), or a model folder (local "
        "backend; default: the embedded SmolLM2).",
    ),
    endpoint: str = typer.Option(
        "completions", help="The openai backend's endpoint: completions or chat."
    ),
    rankers: str = typer.Option(
        "offline",
        help="A trained ensemble folder, or a config (offline, paper, a YAML file) to train "
        "on data/validity at first use.",
    ),
    annotation: str = typer.Option(
        "auto",
        help="Who judges the candidates the ranker cannot vouch for: auto (no one: they stay "
        "pending), terminal, or label-studio.",
    ),
    top: float = typer.Option(
        DEFAULT_REVIEW_FRACTION,
        min=0.0,
        max=1.0,
        help="Fraction people review of the candidates the ranker leaves.",
    ),
    accept_precision: float = typer.Option(
        DEFAULT_TARGET,
        "--accept-precision",
        help="The ranker accepts a candidate only under a rule whose out-of-fold precision "
        "reaches this with 95% confidence (0 < p <= 1).",
    ),
    pooled_rule: bool = typer.Option(
        False,
        "--pooled-rule",
        help="Accept candidates of a generator with no random labels of its own under the "
        "rule pooled over other generators (off: the ranker accepts none of them).",
    ),
    project: str | None = typer.Option(None, help="Label Studio project (default: testaug RUN)."),
    wait_minutes: float = typer.Option(
        0.0, min=0.0, help="label-studio: minutes to wait for people before collecting."
    ),
    model: list[str] = typer.Option(
        [],
        "--model",
        help="A model under test (repeatable): vader, spacy:NAME, hf:PATH, py:MOD:FN, "
        "llm:BACKEND:MODEL (default for sentiment: vader and spacy:eng_spacysentiment).",
    ),
    capability: list[str] = typer.Option([], help="Only these capabilities (repeatable)."),
    prompts_per_description: int | None = typer.Option(None, min=1, help="Overrides the size."),
    samples: int | None = typer.Option(None, min=1, help="Overrides the size."),
    seed: int = typer.Option(0, help="Seed of every sample the run draws."),
    dask: str | None = typer.Option(
        None, help="Run the tasks on Dask: local (a cluster in this process) or an address."
    ),
    evidence: str = typer.Option(
        "verified",
        help="What the headline error rates rest on: verified (template seeds, cases accepted "
        "by people, their expansions) or all (ranker-accepted cases too).",
    ),
    gate_file: Path | None = gate.GATE_FILE_OPTION,
    max_error: list[str] = gate.MAX_ERROR_OPTION,
    max_unverified: float | None = gate.MAX_UNVERIFIED_OPTION,
    min_precision: float | None = gate.MIN_PRECISION_OPTION,
    pool_test_types: bool | None = gate.POOL_OPTION,
    junit: Path | None = gate.JUNIT_OPTION,
    old_generator_model: str | None = typer.Option(None, "--generator-model", hidden=True),
) -> None:
    """Run the whole pipeline as a Prefect flow: seed cases, generation, ranking, annotation,
    template expansion, diversity, evaluation, and the HTML report. With a gate (the suite's
    gate: section, --gate, --max-error, ...), exit 1 when the evaluation breaches it."""
    started = time.perf_counter()
    llm = renamed_option(
        llm, old_generator_model, old="--generator-model", new="--llm", default=None, command="run"
    )
    chosen, task_of_suite = chosen_suite(task, suite)
    refuse_overwriting_inputs(
        {"--junit": junit},
        {
            "--suite": existing(chosen),
            "--gate": gate_file,
            "--rankers": existing(rankers),
            **{f"--run-dir's {name}": run_dir / name for name in RunFolder.names()},
        },
    )
    gate_config = gate.build_gate(
        suite=chosen,
        gate_file=gate_file,
        max_error=max_error,
        max_unverified=max_unverified,
        min_precision=min_precision,
        pool_test_types=pool_test_types,
        junit=junit,
    )
    # The URL's user info travels in the environment, which the generate task reads: never
    # in the configuration, which Prefect stores as the flow run's parameters.
    url, userinfo = split_userinfo(base_url or Settings().base_url or "")
    if userinfo:
        os.environ["TESTAUG_BASE_URL_USERINFO"] = userinfo
    config = run_config(
        {
            "suite": chosen,
            "run_dir": run_dir,
            "size": size,
            "generator": {
                "kind": backend,
                "model": llm,
                "base_url": url or None,
                "endpoint": endpoint,
            },
            "rankers": rankers,
            "annotation": annotation,
            "top": top,
            "accept_precision": accept_precision,
            "pooled_rule": pooled_rule,
            "project": project,
            "wait_minutes": wait_minutes,
            "models": tuple(model) or None,
            "capabilities": tuple(capability) or None,
            "seed": seed,
            "prompts_per_description": prompts_per_description,
            "samples": samples,
            "dask": dask,
            "evidence": evidence,
        },
        flags=True,
    ).with_task_models(task_of_suite)
    if not config.models:
        err_console.print(
            styled(
                "[yellow]no models under test for task {}[/]: pass --model to evaluate one",
                task_of_suite,
            )
        )
    print_summary(run_pipeline(config), time.perf_counter() - started)
    if gate_config is not None:
        from testaug.core.bundled import resolve_suite
        from testaug.evaluation.gate_runs import check_run_gate, left_out_of
        from testaug.suites.load import load_suite

        left_out = left_out_of(load_suite(resolve_suite(config.suite)), config.capabilities)
        gate.enforce_gate(check_run_gate(config.run_dir, gate_config, left_out=left_out), junit)


def run_pipeline(config: RunConfig) -> PipelineRun:
    """The pipeline flow on a configuration, offline Prefect unless a server is set."""
    prepare_prefect_environment()
    from flows.pipeline import pipeline

    quiet_expected_faults()
    err_console.print(
        styled(
            "[bold]testaug run[/]: suite {}, size {}, {} generator, rankers {}, annotation {}, "
            "models {} -> {}",
            config.suite,
            config.size,
            config.generator.kind,
            config.rankers,
            config.annotation,
            ", ".join(config.models or ()) or "none",
            config.run_dir,
        )
    )
    return pipeline(config)


def print_summary(result: PipelineRun, seconds: float) -> None:
    """What each step wrote, the annotation mode's mark, and where the report is."""
    augmented, collected = result.augmented, result.collected
    steps = [
        ("seed cases", augmented.cases),
        ("candidates", augmented.candidates),
        ("ranked", augmented.ranked),
        ("annotations", augmented.annotations),
        ("accepted", collected.accepted),
        ("induced templates", collected.templates),
        ("expanded cases", collected.expanded),
        ("suite", collected.suite),
        ("diversity groups", collected.diversity),
        ("models evaluated", collected.evaluation),
    ]
    table = Table(title="testaug run", title_justify="left")
    table.add_column("step")
    table.add_column("records", justify="right")
    table.add_column("file")
    for name, output in steps:
        if output is not None:
            table.add_row(name, f"{output.records:,}", str(output.path))
    console.print(table)
    if collected.evaluation is not None:
        print_error_rates(collected.evaluation.summary)
    annotations = augmented.annotations
    if annotations is not None and isinstance(annotations.summary, AnnotateSummary):
        print_acceptance(annotations.summary)
    console.print(styled("[green]done[/] in {:.0f} s; report: {}", seconds, collected.report.path))


def print_acceptance(summary: AnnotateSummary) -> None:
    """What the ranker accepted, under which rule per calibration group, and what waits."""
    acceptance = summary.acceptance
    waiting = summary.pending + (summary.sent or 0)
    if summary.mode == "auto":
        head = "[yellow]annotation mode auto[/]: no person reviewed the candidates; the ranker"
    else:
        head = "the ranker"
    console.print(
        styled(
            head + " accepted {:,} that its rules vouch for at precision {:.0%} (marked "
            "accepted_by: ranker in the suite); {:,} wait for people",
            acceptance.accepted_by_ranker,
            acceptance.accept_precision,
            waiting,
        )
    )
    for group, numbers in acceptance.groups.items():
        rule = numbers.rule
        if rule is None:
            console.print(
                f"  {group}: no threshold on P(valid) qualified; its {numbers.candidates:,} "
                "candidates wait for people",
                highlight=False,
            )
            continue
        console.print(
            f"  {group}: P(valid) >= {rule.threshold:.3f} accepted {numbers.accepted:,} of "
            f"{numbers.candidates:,} (out-of-fold precision {rule.precision_estimate:.1%}, "
            f"lower bound {rule.precision_lower_bound:.1%})",
            highlight=False,
        )
    if acceptance.no_rule:
        console.print(f"  {acceptance.no_rule}", highlight=False)


def print_error_rates(summary: CombineEvaluationsSummary) -> None:
    """Each model's headline error rate, with the evidence it rests on and what it leaves out."""
    for name, rate in summary.error_rates.items():
        head = summary.headline.get(name)
        unverified = head is not None and (head.fallback or head.evidence == "all")
        console.print(
            f"error rate {name}: {'n/a' if rate is None else f'{rate:.1f}%'}"
            + (f" ({head.note})" if head is not None and head.note else ""),
            style="yellow" if unverified else None,
            highlight=False,
        )
