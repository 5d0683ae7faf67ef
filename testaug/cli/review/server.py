"""`testaug review server` and `testaug review install-server`: a local Label Studio for
one user."""

from __future__ import annotations

from pathlib import Path

import typer
from pydantic import SecretStr

from testaug.cli.console import console, err_console, styled
from testaug.cli.options import output_option
from testaug.core.errors import InputError, Problem
from testaug.core.settings import Settings


def install_server_command() -> None:
    """Install Label Studio into its own virtual environment under the cache directory."""
    from testaug.review.label_studio_server import LABEL_STUDIO_VERSION, install_server, server_venv

    venv = server_venv(Settings().cache_dir)
    with err_console.status(f"installing label-studio=={LABEL_STUDIO_VERSION} into {venv}"):
        executable = install_server(venv)
    console.print(styled("[green]Label Studio ready[/]: {}", executable))


def server_command(
    data_dir: Path = output_option(
        Path("runs/label-studio"),
        "--data-dir",
        kind="folder",
        help="Where Label Studio keeps its database.",
    ),
    port: int = typer.Option(8080, min=1, max=65535),
) -> None:
    """Start a local Label Studio on 127.0.0.1 (installing it first if needed); Ctrl-C stops it.

    A fresh data directory gets a user whose API key is $LABEL_STUDIO_API_KEY, or a new
    key that is printed once; a used one needs the key it was created with.
    """
    import secrets
    import signal

    from testaug.review.label_studio_server import (
        LocalServer,
        has_database,
        install_server,
        server_venv,
    )

    settings = Settings()
    key = settings.label_studio_api_key
    new_key = key is None
    if key is None:
        if has_database(data_dir):
            raise InputError(
                Problem(
                    "this data directory already has users: set LABEL_STUDIO_API_KEY to the key "
                    "it was created with",
                    file=data_dir,
                )
            )
        key = SecretStr(secrets.token_hex(20))
    with err_console.status("installing Label Studio (first time only, about 2 minutes)"):
        executable = install_server(server_venv(settings.cache_dir))
    server = LocalServer(executable, data_dir, api_key=key, port=port)
    signal.signal(signal.SIGTERM, _exit_on_sigterm)  # so `finally` stops the server
    server.start()
    try:
        with err_console.status(f"starting Label Studio at {server.url} (first start: ~45 s)"):
            server.wait_ready()
        console.print(styled("[green]Label Studio is running[/] at {}", server.url))
        console.print(f"log in as {server.username} (password: the API key)", highlight=False)
        if new_key:
            console.print("in the shell where you run testaug:", highlight=False)
            console.print(
                f"  export LABEL_STUDIO_URL={server.url} "
                f"LABEL_STUDIO_API_KEY={key.get_secret_value()}",
                highlight=False,
            )
        server.wait()
    finally:
        server.stop()


def _exit_on_sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
