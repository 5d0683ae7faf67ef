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
    g_p: dict[str, dict[str, float]] = {}  # pair -> scenario -> p against the IID baseline
    selected: dict[str, str] = {}  # pair -> setting chosen on T_val (with select)


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
    select: bool = False,
    grid_learning_rates: list[float] = [2e-5, 3e-5, 5e-5],  # noqa: B006
    grid_epochs: list[int] = [1, 2, 3],  # noqa: B006
    grid_batch_sizes: list[int] = [16],  # noqa: B006
) -> Generalized:
    """BeLUGA's analysis of `model` on the suite with the i.i.d. file: crossfunctional.json
    and report.html in `run_dir`, the G table (with significance against the IID baseline)
    logged and published. With `select`, each pair's suite step is tuned on T_val over the
    grid (BL-12) and the chosen settings are logged."""
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
        select=select,
        grid_learning_rates=tuple(grid_learning_rates),
        grid_epochs=tuple(grid_epochs),
        grid_batch_sizes=tuple(grid_batch_sizes),
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
        g_p={
            pair.name: {
                name: s.versus_baseline.g_p
                for name, s in pair.scenarios.items()
                if s.versus_baseline is not None
            }
            for pair in report.pairs
        },
        selected={
            pair.name: pair.selection.chosen.name
            for pair in report.pairs
            if pair.selection is not None
        },
    )


def publish_g_table(report: CrossFunctionalReport) -> None:
    """Log each pair's G per scenario and publish the G table (percent, mean ± std; ▲ / ▼
    significantly above / below the IID baseline), and log the settings chosen on T_val."""
    logger = get_run_logger()
    rows = []
    marks = {
        pair.name: {
            name: {"above": " ▲", "below": " ▼"}.get(s.versus_baseline.g_mark, "")
            for name, s in pair.scenarios.items()
            if s.versus_baseline is not None
        }
        for pair in report.pairs
    }
    for pair in report.pairs:
        if pair.selection is not None:
            logger.info("%s: selected on T_val: %s", pair.name, pair.selection.chosen.name)
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
                ""
                if value is None
                else f"{100 * value.mean:.1f} ± {100 * value.std:.1f}"
                + marks.get(name, {}).get(key, "")
            )
        rows.append(row)
    create_table_artifact(
        table=rows,
        key="testaug-generalize-g",
        description=f"testaug generalize: G scores of {report.base_model} (seeds "
        f"{list(report.seeds)})",
    )
