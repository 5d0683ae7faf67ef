"""`testaug flows list|serve|deploy`: the deployments of prefect.yaml, served from this
process or registered on a Prefect server for a work pool."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, err_console
from testaug.core.errors import InputError, Problem
from testaug.core.fault_logs import quiet_expected_faults
from testaug.core.prefect_environment import prepare_prefect_environment

flows_app = typer.Typer(
    help="Prefect deployments of the flows (prefect.yaml): list, serve, deploy.",
    no_args_is_help=True,
)

FILE = typer.Option(
    None, "--file", help="A prefect.yaml (default: the project's); entrypoints are testaug's flows."
)
NAMES = typer.Argument(None, metavar="[NAME]...", help="Deployments (default: all of them).")


def _specs(file: Path | None, names: list[str] | None) -> list:
    from flows.deployments import PREFECT_YAML, choose, read_deployments

    return choose(read_deployments(file or PREFECT_YAML), names or [])


@flows_app.command("list")
def list_command(file: Path | None = FILE) -> None:
    """The deployments, their flows and schedules."""
    table = Table(title_justify="left")
    for column in ("deployment", "flow", "schedule", "parameters"):
        table.add_column(column)
    for spec in _specs(file, None):
        table.add_row(
            spec.name,
            spec.entrypoint,
            ", ".join(f"{s.cron} ({s.timezone})" for s in spec.schedules) or "none",
            ", ".join(f"{k}={v}" for k, v in spec.parameters.items()),
        )
    console.print(table)


@flows_app.command("serve")
def serve_command(names: list[str] | None = NAMES, file: Path | None = FILE) -> None:
    """Serve the deployments from this process until Ctrl-C: their schedules fire here, and
    runs started from the Prefect UI or `prefect deployment run` run here too."""
    from flows.deployments import serve

    specs = _specs(file, names)  # checked before anything else
    _require_server()
    quiet_expected_faults()
    err_console.print(f"serving {', '.join(s.name for s in specs)}; Ctrl-C stops", highlight=False)
    serve(specs)


@flows_app.command("deploy")
def deploy_command(
    names: list[str] | None = NAMES,
    pool: str = typer.Option("testaug", help="Work pool (a process pool, created if missing)."),
    working_dir: Path = typer.Option(
        Path("."), "--working-dir", help="Where the runs work (their run folders land there)."
    ),
    file: Path | None = FILE,
) -> None:
    """Register the deployments with their schedules on the Prefect server; start workers
    with `prefect worker start --pool POOL` where testaug is installed."""
    from flows.deployments import deploy

    specs = _specs(file, names)  # a bad schedule is refused before the server is asked
    _require_server()
    ids = deploy(specs, pool, working_dir=working_dir)
    table = Table(title=f"deployed to work pool {pool!r}", title_justify="left")
    table.add_column("deployment")
    table.add_column("id")
    table.add_column("schedule")
    for spec, deployment_id in zip(specs, ids, strict=True):
        table.add_row(spec.name, deployment_id, ", ".join(s.cron for s in spec.schedules))
    console.print(table)
    console.print(f"start a worker: prefect worker start --pool {pool}", highlight=False)


def _require_server() -> None:
    """Deployments live on a Prefect server; the temporary one of `testaug run` would vanish."""
    prepare_prefect_environment()
    if not os.environ.get("PREFECT_API_URL"):
        raise InputError(
            Problem(
                "no Prefect server: start one (prefect server start --host 127.0.0.1) and set "
                "PREFECT_API_URL=http://127.0.0.1:4200/api",
                field="PREFECT_API_URL",
            )
        )
