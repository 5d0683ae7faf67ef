"""Benchmark: what `testaug` costs before it does anything, in a fresh process each run.

`testaug --version` and `testaug --help` (and a door's help, `testaug tree --help`) are run
as a user runs them, the console script beside this interpreter (else `python -m
testaug`), and each run's CPU time (user + system, from the kernel's accounting of the
child) and wall time are taken. CPU time is the target's measure: on a shared machine the
wall time grows with the other jobs, the CPU time barely.

Target: `testaug --version` at or under 0.5 s of CPU (median). Before the commands were
imported on use it took about 1.3 s here (2 s in the issue's measurement), loading 687
modules; tests/cli/test_cli_startup.py keeps the imports in check.

Run: python benchmarks/startup.py [--runs 10]
Exits 1 when the target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

CALLS = (("--version",), ("--help",), ("tree", "--help"))
TARGET_CPU = 0.5  # seconds of CPU for `testaug --version`


def testaug_command() -> list[str]:
    """The console script installed with this interpreter, else `python -m testaug`."""
    script = Path(sys.executable).with_name("testaug")
    if script.is_file():
        return [str(script)]
    found = shutil.which("testaug")
    return [found] if found else [sys.executable, "-m", "testaug"]


def timed(command: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of `command` in a fresh process."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    console = Console(width=120)
    base = testaug_command()
    timed([*base, "--version"])  # warm the file cache and the bytecode
    table = Table(title=f"testaug start-up: a fresh process each, {args.runs} runs")
    for column in ("call", "CPU s (median)", "CPU s (max)", "wall s (median)", "target"):
        table.add_column(column, justify="left" if column == "call" else "right")
    passed = True
    for call in CALLS:
        runs = [timed([*base, *call]) for _ in range(args.runs)]
        cpu = statistics.median(c for c, _ in runs)
        target = ""
        if call == ("--version",):
            passed = cpu <= TARGET_CPU
            target = f"{'PASS' if passed else 'FAIL'} (<= {TARGET_CPU:g} s CPU)"
        table.add_row(
            "testaug " + " ".join(call),
            f"{cpu:.2f}",
            f"{max(c for c, _ in runs):.2f}",
            f"{statistics.median(w for _, w in runs):.2f}",
            target,
        )
    console.print(table)
    console.print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {' '.join(base)}",
        highlight=False,
    )
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
