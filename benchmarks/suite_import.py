"""Benchmark: `testaug suite import` on published-style tables, against a plain pandas read.

Builds three synthetic tables in a temporary folder, the size of TestAug's released suites
and in their shapes: sentiment (CSV, 3,275 rows, a task column, numeric labels), QQP (CSV
as pandas writes it, 6,427 rows, tuples in the template and text cells) and NLI (JSONL,
4,976 rows, premise and hypothesis columns). Every 40th QQP and NLI row has an empty second
text, as in the released suites; those rows must be rejected. Each table is read with
pandas (`read_csv`, `read_json(lines=True)`: best of 3), then imported through the command
in this process (Typer's runner: best of 2), counting the bundled suites parsed.

Targets, per table: the import within 10 s, and within 300x the pandas read. pandas only
splits cells (in C); the import also reads tuple cells, maps labels, validates, hashes and
writes each case, and measured 20-150x on 2 busy cores. 300x leaves room for noise in a
pandas read of a few milliseconds and still fails by orders of magnitude on a suite parsed
once a row. Also: each bundled suite parsed once an import, and every row a case or a
reject, the planted empty second texts rejected. Before the fix the three imports took
193 s, 496 s and 544 s (issue tracker), the suite being parsed once a row.

Run: python benchmarks/suite_import.py [--scale 1.0]
Exits 1 when a target is missed.
"""

# ruff: noqa: E402  (imports follow the sys.path fix below)
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/rankers.py is named like the `rankers` package: drop this folder from the path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import pandas as pd
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from testaug.cli import app
from testaug.suites import task_labels
from testaug.testing.benchmark import print_checks

MAX_SECONDS = 10.0
MAX_RATIO = 300.0
EMPTY_EVERY = 40  # every 40th pair row has an empty second text

NAMES = ["John", "Mary", "Ahmed", "Mei", "Olga", "Kwame", "Ana", "Ravi", "Sven", "Lena"]
NOUNS = ["actor", "nurse", "editor", "agent", "author", "pilot", "baker", "judge"]
ADJS = ["great", "awful", "fine", "boring", "lovely", "terrible", "ok", "weird"]


def sentiment_rows(n: int) -> list[dict]:
    return [
        {
            "task": "sentiment",
            "capability": "Vocabulary",
            "description": "Sentiment-laden adjectives",
            "template": "The {noun} was {adj}.",
            "text": f"The {NOUNS[i % 8]} {i} was {ADJS[i // 8 % 8]}.",
            "label": i % 3,
        }
        for i in range(n)
    ]


def qqp_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        name, noun = NAMES[i % 10], NOUNS[i // 10 % 8]
        second = "" if i % EMPTY_EVERY == EMPTY_EVERY - 1 else f"Is {name} {i} an honest {noun}?"
        rows.append(
            {
                "task": "qqp",
                "original_description": "Modifier: adj",
                "description": "A noun with and without an adjective is equivalent.",
                "label": i % 2,
                "capability": "Vocabulary",
                "template": ("Is {first_name} {a:noun}?", "Is {first_name} {a:adj} {noun}?"),
                "text": (f"Is {name} {i} a {noun}?", second),
            }
        )
    return rows


def nli_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        name, noun = NAMES[i % 10], NOUNS[i // 10 % 8]
        hypothesis = "" if i % EMPTY_EVERY == EMPTY_EVERY - 1 else f"{name} {i} works."
        rows.append(
            {
                "task": "mnli",
                "capability": "Taxonomy",
                "description": "A profession entails working.",
                "premise": f"{name} {i} is a {noun}.",
                "hypothesis": hypothesis,
                "label": 0,
            }
        )
    return rows


def write_tables(folder: Path, scale: float) -> list[tuple[str, Path, int, int]]:
    """(name, path, rows, planted empty second texts) of the three tables, written."""
    sizes = {"sentiment": 3275, "qqp": 6427, "nli": 4976}
    n = {name: max(EMPTY_EVERY, round(size * scale)) for name, size in sizes.items()}
    tables = []
    path = folder / "sentiment.csv"
    pd.DataFrame(sentiment_rows(n["sentiment"])).to_csv(path, index=False)
    tables.append(("sentiment (CSV)", path, n["sentiment"], 0))
    path = folder / "qqp.csv"
    pd.DataFrame(qqp_rows(n["qqp"])).to_csv(path, index=False)  # tuples as "('...', '...')"
    tables.append(("qqp (CSV, tuples)", path, n["qqp"], n["qqp"] // EMPTY_EVERY))
    path = folder / "nli.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in nli_rows(n["nli"])))
    tables.append(("nli (JSONL)", path, n["nli"], n["nli"] // EMPTY_EVERY))
    return tables


def timed(function: Callable[[], object], repeat: int) -> tuple[float, object]:
    """The best of `repeat` runs in seconds, and the last run's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def pandas_read(path: Path) -> pd.DataFrame:
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True)
    return pd.read_csv(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="Rows relative to the release.")
    args = parser.parse_args()

    parses: list[str] = []
    load_suite = task_labels.load_suite

    def counting(path: Path) -> object:  # the bundled suites parsed, one entry a parse
        parses.append(Path(path).parent.name)
        return load_suite(path)

    task_labels.load_suite = counting
    runner = CliRunner()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    table = Table(title=f"suite import vs pandas read; load average {load}")
    for column in ("table", "rows", "cases", "rejects", "suite parses"):
        table.add_column(column, justify="left" if column == "table" else "right")
    for column in ("pandas s", "import s", "import / pandas", "rows/s"):
        table.add_column(column, justify="right")
    checks: list[tuple[str, bool | None, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, rows, planted in write_tables(Path(tmp), args.scale):
            pandas_s, frame = timed(lambda path=path: pandas_read(path), 3)
            assert len(frame) == rows, (name, len(frame))
            out = path.with_name(path.stem + ".cases.jsonl")
            command = ["suite", "import", str(path), "-o", str(out)]

            def run(command: list[str] = command) -> object:
                parses.clear()
                return runner.invoke(app, command)

            import_s, result = timed(run, 2)
            if result.exit_code != 0:  # type: ignore[attr-defined]
                print(result.output, file=sys.stderr)  # type: ignore[attr-defined]
                return 1
            cases = len(out.read_text().splitlines())
            rejects_path = out.with_name(out.stem + ".rejects.jsonl")
            rejects = len(rejects_path.read_text().splitlines()) if rejects_path.exists() else 0
            ratio = import_s / pandas_s
            table.add_row(
                name,
                f"{rows:,}",
                f"{cases:,}",
                f"{rejects:,}",
                str(len(parses)),
                f"{pandas_s:.3f}",
                f"{import_s:.2f}",
                f"{ratio:.0f}x",
                f"{rows / import_s:,.0f}",
            )
            checks += [
                (
                    f"{name}: import within {MAX_SECONDS:.0f} s",
                    import_s <= MAX_SECONDS,
                    f"{import_s:.2f} s",
                ),
                (
                    f"{name}: import within {MAX_RATIO:.0f}x the pandas read",
                    ratio <= MAX_RATIO,
                    f"{ratio:.0f}x",
                ),
                (
                    f"{name}: each bundled suite parsed once",
                    len(parses) == len(set(parses)) == 1,
                    f"{parses}",
                ),
                (
                    f"{name}: every row a case or a reject, the {planted} empty second texts rejected",
                    cases + rejects == rows and rejects == planted,
                    f"{cases:,} cases + {rejects:,} rejects of {rows:,} rows",
                ),
            ]
    task_labels.load_suite = load_suite
    console = Console(width=130)
    console.print(table)
    return print_checks(console, checks)


if __name__ == "__main__":
    raise SystemExit(main())
