"""The `generalize` flow: BeLUGA's cross-functional analysis of a model as a Prefect run.
One task trains and scores every configuration-method pair (`testaug generalize`), writes
crossfunctional.json into the run folder with its report, logs each pair's G scores and
publishes the G table as an artifact."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from pydantic import BaseModel, ConfigDict

from flows import tasks
from flows.artifacts import publish_summary
from testaug.evaluation.crossfunctional import (
    CROSSFUNCTIONAL_FILE,
    PAIR_SCENARIOS,
    CrossFunctionalReport,
)
from testaug.steps.generalize import (
    DEFAULT_CONFIGURATIONS,
    DEFAULT_METHODS,
    GeneralizeOptions,
    generalize_files,
)


class Generalized(BaseModel):
    """What a generalize run wrote: the report file, the HTML report, each pair's mean G."""

    model_config = ConfigDict(frozen=True)

    report: Path
    html: Path
    g_standard: float | None
    g: dict[str, dict[str, float]]  # pair -> scenario -> mean G (fraction)


@task(name="cross-functional analysis", cache_policy=NO_CACHE)
def analyse(
    suite: Path,
    iid: Path,
    model: str,
    out: Path,
    iid_test: Path | None,
    perturbed: Path | None,
    options: GeneralizeOptions,
) -> CrossFunctionalReport:
    """Train and score every pair (see `testaug.steps.generalize.generalize_files`)."""
    logger = get_run_logger()
    return generalize_files(
        suite,
        iid,
        model,
        out,
        iid_test=iid_test,
        perturbed=perturbed,
        options=options,
        on_progress=logger.info,
    )


@flow(name="generalize")
def generalize(
    suite: Path,
    iid: Path,
    model: str,
    run_dir: Path,
    iid_test: Path | None = None,
    perturbed: Path | None = None,
    configurations: list[str] = list(DEFAULT_CONFIGURATIONS),  # noqa: B006  (Prefect parameters)
    methods: list[str] = list(DEFAULT_METHODS),  # noqa: B006
    scenarios: list[str] = list(PAIR_SCENARIOS),  # noqa: B006
    seeds: int = 1,
    per_functionality: int | None = None,
    epochs: int = 3,
    learning_rate: float = 2e-5,
    batch_size: int = 16,
    device: str = "cpu",
) -> Generalized:
    """BeLUGA's analysis of `model` on the suite with the i.i.d. file: crossfunctional.json
    and report.html in `run_dir`, the G table logged and published."""
    options = GeneralizeOptions(
        configurations=tuple(configurations),
        methods=tuple(methods),
        scenarios=tuple(scenarios),
        seeds=seeds,
        per_functionality=per_functionality,
        epochs=epochs,
        learning_rate=learning_rate,
        batch_size=batch_size,
        device=device,
    )
    out = run_dir / CROSSFUNCTIONAL_FILE
    report = analyse(suite, iid, model, out, iid_test, perturbed, options)
    html = tasks.write_run_report(run_dir)
    publish_g_table(report)
    publish_summary("generalize", [html], report=html.path)
    return Generalized(
        report=out,
        html=html.path,
        g_standard=None if report.standard is None else report.standard.g.mean,
        g={
            pair.name: {name: s.g.mean for name, s in pair.scenarios.items()}
            for pair in report.pairs
        },
    )


def publish_g_table(report: CrossFunctionalReport) -> None:
    """Log each pair's G per scenario and publish the G table (percent, mean ± std)."""
    logger = get_run_logger()
    rows = []
    for name, cells in report.g_table():
        logger.info(
            "%s: %s",
            name,
            ", ".join(f"G {key} {100 * value.mean:.1f}" for key, value in cells.items()),
        )
        row = {"pair": name}
        for key in ("standard", *PAIR_SCENARIOS, "avg"):
            value = cells.get(key)
            row[f"G {key}"] = (
                "" if value is None else f"{100 * value.mean:.1f} ± {100 * value.std:.1f}"
            )
        rows.append(row)
    create_table_artifact(
        table=rows,
        key="testaug-generalize-g",
        description=f"testaug generalize: G scores of {report.base_model} (seeds "
        f"{list(report.seeds)})",
    )
