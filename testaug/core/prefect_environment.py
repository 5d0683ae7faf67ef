"""The environment flows run in: Prefect offline on a temporary local API unless
PREFECT_API_URL names a server, and the folders it and testaug's cache write to checked
before Prefect starts."""

from __future__ import annotations

import os
from pathlib import Path

from testaug.core.errors import TestAugError
from testaug.core.settings import Settings

# Prefect's first start in a fresh home takes 15-20 s on 2 cores, past its default limit.
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "TRANSFORMERS_VERBOSITY": "error",
}


def prepare_prefect_environment() -> None:
    """Defaults for running flows offline; a value the user set wins. Fails fast, before
    Prefect starts, when its home or testaug's cache cannot be created."""
    for name, value in PREFECT_DEFAULTS.items():
        os.environ.setdefault(name, value)
    prefect_home = os.environ.get("PREFECT_HOME") or "~/.prefect"  # before Prefect's import
    check_folder(Path(prefect_home), "Prefect's home", "PREFECT_HOME")
    check_folder(Settings().cache_dir, "testaug's cache", "TESTAUG_CACHE_DIR")


def check_folder(folder: Path, what: str, variable: str) -> None:
    """A TestAugError naming `folder` and the variable to set when it cannot be created or
    written: a home directory that does not exist, or no write access."""
    folder = folder.expanduser()
    home = Path.home()
    if folder.is_relative_to(home) and not home.is_dir():
        why = f"the home directory {home} does not exist"
    else:
        existing = next(p for p in (folder, *folder.parents) if p.exists())
        if not existing.is_dir():
            why = f"{existing} is not a folder"
        elif not os.access(existing, os.W_OK | os.X_OK):
            why = f"{existing} is not writable"
        else:
            return
    raise TestAugError(
        f"{what} {folder} cannot be created: {why}; set {variable} to a writable folder"
    )
