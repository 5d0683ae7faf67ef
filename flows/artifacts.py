"""What each flow run publishes in Prefect: a table of the steps' outputs, and a link to
the run's HTML report."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from prefect.artifacts import create_link_artifact, create_table_artifact
from pydantic import BaseModel

from testaug.steps.contract import StepOutput


def summary_rows(outputs: Sequence[StepOutput | None]) -> list[dict[str, str]]:
    """One row per step: its name, main file, record count and summary numbers."""
    rows = []
    for output in outputs:
        if output is None:
            continue
        numbers = ", ".join(
            f"{key}: {value}"
            for key, value in summary_fields(output.summary)
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


def summary_fields(summary: BaseModel) -> Iterator[tuple[str, object]]:
    """A step summary's fields in order, without its `kind`; a nested record's fields
    (the ranker's acceptance) in its place."""
    for key, value in summary:
        if isinstance(value, BaseModel):
            yield from summary_fields(value)
        elif key != "kind":
            yield key, value


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
