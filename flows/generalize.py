"""The `generalize` flow: BeLUGA's cross-functional analysis of a model as a Prefect run.
One task trains and scores every configuration-method pair (`testaug evaluate generalization`), writes
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
from testaug.fixing.crossfunctional.analysis import (
    PAIR_SCENARIOS,
    CrossFunctionalReport,
    read_report,
)
from testaug.steps.contract import StepOutput
from testaug.steps.generalize import GeneralizeFilesConfig, generalize_files
from testaug.steps.measure import ReportConfig


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
def analyse(config: GeneralizeFilesConfig) -> StepOutput:
    """Train and score every pair (see `testaug.steps.generalize.generalize_files`)."""
    return generalize_files(config, on_progress=get_run_logger().info)


@flow(name="generalize")
def generalize(config: GeneralizeFilesConfig) -> Generalized:
    """BeLUGA's analysis of `config.model` on the suite with the i.i.d. file: the report
    (`config.out`, crossfunctional.json in a run folder) and report.html beside it, the G
    table (with significance against the IID baseline) logged and published. With
    `config.analysis.select`, each pair's suite step is tuned on T_val over the grid and
    the chosen settings are logged. The flow takes the `GeneralizeFilesConfig` record
    `testaug evaluate generalization` builds, whole."""
    analysed = analyse(config)
    html = tasks.write_run_report(ReportConfig(run_dir=config.out.parent))
    publish_g_table(read_report(analysed.path))
    publish_summary("generalize", [analysed, html], report=html.path)
    summary = analysed.summary
    return Generalized(
        report=analysed.path,
        html=html.path,
        g_standard=summary.g_standard,
        g=summary.g,
        g_p=summary.g_p,
        selected=summary.selected,
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
        description=f"testaug evaluate generalization: G scores of {report.base_model} (seeds "
        f"{list(report.seeds)})",
    )
