"""What each flow run publishes in Prefect: a table of the steps' outputs, and a link to
the run's HTML report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from prefect.artifacts import create_link_artifact, create_table_artifact

from testaug.steps import StepOutput


def summary_rows(outputs: Sequence[StepOutput | None]) -> list[dict[str, str]]:
    """One row per step: its name, main file, record count and summary numbers."""
    rows = []
    for output in outputs:
        if output is None:
            continue
        numbers = ", ".join(
            f"{key}: {value}"
            for key, value in output.summary.items()
            if isinstance(value, (int, float, str)) and not isinstance(value, bool)
        )
        rows.append(
            {
                "step": output.step,
                "file": str(output.path),
                "records": str(output.records),
                "summary": numbers,
            }
        )
    return rows


def publish_summary(
    flow_name: str, outputs: Sequence[StepOutput | None], *, report: Path | None = None
) -> None:
    """A table artifact of the steps' outputs and, with a report, a link artifact to it."""
    create_table_artifact(
        table=summary_rows(outputs),
        key=f"testaug-{flow_name}-summary",
        description=f"testaug {flow_name}: what each step wrote",
    )
    if report is not None:
        create_link_artifact(
            link=report.resolve().as_uri(),
            link_text=f"{report.parent.name}/{report.name}",
            key=f"testaug-{flow_name}-report",
            description=f"testaug {flow_name}: the run's HTML report",
        )
