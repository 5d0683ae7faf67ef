"""The headless browser that renders report.html (page tests, screenshots): Debian's chromium
and its chromedriver, found on PATH, or installed with apt-get (`testaug report
--install-browser`). Playwright's own browser download is not used."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

APT_PACKAGES = ("chromium", "chromium-driver")
BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")
DRIVER_NAMES = ("chromedriver",)
APT_TIMEOUT_S = 900


@dataclass(frozen=True)
class Browser:
    """A Chromium binary and the chromedriver that drives it."""

    binary: Path
    driver: Path


@dataclass(frozen=True)
class BrowserInstall:
    """What an install attempt left: the browser (None: none usable) and what happened."""

    browser: Browser | None
    message: str


def find_browser() -> Browser | None:
    """Chromium and chromedriver on PATH, or None when either is missing."""
    binary = next((found for name in BROWSER_NAMES if (found := shutil.which(name))), None)
    driver = next((found for name in DRIVER_NAMES if (found := shutil.which(name))), None)
    if binary is None or driver is None:
        return None
    return Browser(Path(binary), Path(driver))


def manual_command() -> str:
    """The command a person runs to install the browser by hand."""
    return f"sudo apt-get install -y {' '.join(APT_PACKAGES)}"


def install_browser() -> BrowserInstall:
    """Install Debian's chromium and chromium-driver with apt-get (as root, or through
    passwordless sudo), refreshing the package lists once if the packages are not found.
    Never raises for a machine where that cannot work: the message says why and what to do."""
    found = find_browser()
    if found is not None:
        return BrowserInstall(found, f"already installed: {found.binary} and {found.driver}")
    apt = shutil.which("apt-get")
    if apt is None:
        return BrowserInstall(
            None,
            "cannot install the browser here: no apt-get (not Debian or Ubuntu). Install "
            "Chromium and its chromedriver with this system's package manager; without them "
            "the report still works, only the page tests are skipped.",
        )
    prefix = _privilege_prefix()
    if prefix is None:
        return BrowserInstall(
            None,
            f"cannot install the browser: not root and no sudo. Run `{manual_command()}` as an "
            "administrator; without it the report still works, only the page tests are skipped.",
        )
    install = [*prefix, apt, "install", "-y", *APT_PACKAGES]
    done = _run(install)
    if done.returncode != 0:
        _run([*prefix, apt, "update"])
        done = _run(install)
    found = find_browser()
    if done.returncode != 0 or found is None:
        detail = _last_line(done.stderr) or _last_line(done.stdout) or "no output"
        return BrowserInstall(
            None,
            f"could not install the browser (apt-get exit {done.returncode}: {detail}). "
            f"Run `{manual_command()}` by hand; without it only the page tests are skipped.",
        )
    return BrowserInstall(found, f"installed: {found.binary} and {found.driver}")


def _privilege_prefix() -> list[str] | None:
    """Nothing for root, `sudo -n` where sudo exists, None otherwise."""
    if os.geteuid() == 0:
        return []
    sudo = shutil.which("sudo")
    return [sudo, "-n"] if sudo else None


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run apt-get without questions; a timeout reads as a failed run."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        return subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=APT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(command, 124, "", f"timed out after {APT_TIMEOUT_S}s")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
