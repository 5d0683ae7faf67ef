"""Export of test cases to the tables other tools read: CSV, JSONL, Parquet and a Hugging
Face `datasets` folder (`save_to_disk`). One flat row a case, every column text; rows are
streamed in batches, and the output appears whole or not at all. A CSV cell that a
spreadsheet would evaluate (`=`, `+`, `-`, `@` first) starts with `'` (`core.csv_cells`),
which `suite import` takes away again."""

from __future__ import annotations

import csv
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from testaug.core.bundled import resolve_suite
from testaug.core.csv_cells import escape_cell
from testaug.core.errors import InputError, Problem, TestAugError
from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase, label_options
from testaug.core.runs import remove_stale_leftovers
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.suites.tables import refuse_pickle

# The columns of an exported row, in order; `import` reads every one of them back.
EXPORT_COLUMNS = (
    "id",
    "task",
    "capability",
    "description_id",
    "description",
    "test_type",
    "text",
    "text_pair",
    "label",
    "source",
    "template_id",
    "template",
    "template_pair",
    "fills",
    "meta",
)
FORMATS = ("csv", "jsonl", "parquet", "hf")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet"}
BATCH_ROWS = 10_000

Row = dict[str, str | None]


def case_row(case: TestCase) -> Row:
    """A case as one flat row of text: a label set joined by '|', fills and meta as JSON
    objects, None where a case has no value."""
    return {
        "id": case.id,
        "task": case.task,
        "capability": case.capability,
        "description_id": case.description_id,
        "description": case.description,
        "test_type": case.test_type,
        "text": case.text,
        "text_pair": case.text_pair,
        "label": "|".join(label_options(case.label)),
        "source": case.source,
        "template_id": case.template_id,
        "template": case.template,
        "template_pair": case.template_pair,
        "fills": json.dumps(case.fills, ensure_ascii=False),
        "meta": json.dumps(case.meta, ensure_ascii=False, default=str),
    }


def export_format(path: Path, given: str | None = None) -> str:
    """The format to write: `given`, else by the output's suffix (.csv, .jsonl, .parquet);
    a path without a suffix is a `datasets` folder."""
    if given:
        if given not in FORMATS:
            raise InputError(Problem(f"expected one of {', '.join(FORMATS)}", field="--format"))
        return given
    suffix = path.suffix.lower()
    if not suffix:
        return "hf"
    if suffix not in _SUFFIXES:
        raise InputError(
            Problem(
                "cannot tell the format from the suffix: use .csv, .jsonl, .parquet, a folder "
                "for a datasets folder, or --format",
                path,
            )
        )
    return _SUFFIXES[suffix]


def export_cases(cases: Iterable[TestCase], path: Path, fmt: str) -> int:
    """Write `cases` to `path` in format `fmt` (one of FORMATS), streamed; return how many.

    A failure midway (a bad case in the input) leaves any earlier file at `path` as it was.
    """
    check_replaceable(path)
    counted = _Counted(case_row(case) for case in cases)
    writers: dict[str, Callable[[Iterator[Row], Path], None]] = {
        "csv": _write_csv,
        "jsonl": _write_jsonl,
        "parquet": _write_parquet,
        "hf": _write_datasets,
    }
    _atomic(path, lambda tmp: writers[fmt](counted, tmp))
    return counted.count


def check_replaceable(path: Path) -> None:
    """An InputError when `path` is a folder an export may not replace: an export replaces
    what is at its path whole, and a folder only when it is a `datasets` folder (one that
    holds `state.json`, as `save_to_disk` writes), never a folder of other files."""
    if path.is_dir() and not (path / "state.json").is_file():
        raise InputError(
            Problem(
                "a folder that is not a datasets folder (no state.json): an export would "
                "replace it whole; give a new path",
                path,
            )
        )


class _Counted(Iterator[Row]):
    """Rows passed through, counted."""

    def __init__(self, rows: Iterator[Row]) -> None:
        self.rows = rows
        self.count = 0

    def __next__(self) -> Row:
        row = next(self.rows)
        self.count += 1
        return row


def _atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Run `write` on a fresh name beside `path`, then put it in place of `path` (a file or
    a folder) only when it succeeded; what killed exports of `path` left beside it over an
    hour ago is removed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_leftovers(path)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        if path.exists() or path.is_symlink():
            aside = path.with_name(f".{path.name}.{uuid.uuid4().hex}.old")
            os.replace(path, aside)
            os.replace(tmp, path)
            _remove(aside)
        else:
            os.replace(tmp, path)
    finally:
        _remove(tmp)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _write_csv(rows: Iterator[Row], tmp: Path) -> None:
    with tmp.open("x", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS)
        writer.writeheader()
        for row in rows:  # a cell a spreadsheet would evaluate as a formula gets a "'"
            writer.writerow({k: escape_cell(v) if v else v for k, v in row.items()})


def _write_jsonl(rows: Iterator[Row], tmp: Path) -> None:
    with tmp.open("x", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False))
            out.write("\n")


def _batches(rows: Iterator[Row]) -> Iterator[Any]:
    """The rows as Arrow record batches of BATCH_ROWS (the schema's batch when none)."""
    pa = _require("pyarrow")
    schema = _schema()
    while batch := list(islice(rows, BATCH_ROWS)):
        yield pa.RecordBatch.from_pylist(batch, schema=schema)


def _schema() -> Any:
    pa = _require("pyarrow")
    return pa.schema([(name, pa.string()) for name in EXPORT_COLUMNS])


def _write_parquet(rows: Iterator[Row], tmp: Path) -> None:
    pq = _require("pyarrow.parquet")
    with pq.ParquetWriter(tmp, _schema()) as writer:
        for batch in _batches(rows):
            writer.write_batch(batch)


def _write_datasets(rows: Iterator[Row], tmp: Path) -> None:
    """A `datasets` folder: the rows streamed to an Arrow file, memory-mapped as a Dataset,
    saved with `save_to_disk`."""
    pa = _require("pyarrow")
    datasets = _require("datasets")
    arrow = tmp.with_name(tmp.name + ".arrow")
    try:
        with pa.OSFile(str(arrow), "wb") as sink, pa.ipc.new_stream(sink, _schema()) as writer:
            for batch in _batches(rows):
                writer.write_batch(batch)
        datasets.disable_progress_bars()
        dataset = datasets.Dataset.from_file(str(arrow))
        dataset.save_to_disk(str(tmp))
        del dataset
    finally:
        arrow.unlink(missing_ok=True)


def _require(module: str) -> Any:
    """Import an optional package, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TestAugError(
            f"this format needs {module.split('.')[0]}: pip install 'testaug[rank]'"
        ) from exc


def source_cases(
    source: str, *, per_template: int | None = None, seed: int = 0
) -> Iterator[TestCase]:
    """The cases of `source`, streamed: a cases JSONL file read as it is, or a suite (a
    file, a folder, a shipped name) expanded, every case or `per_template` of each template."""
    path = Path(source)
    if path.is_file():
        refuse_pickle(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return read_jsonl(path, TestCase)
    if path.suffix.lower() in (".csv", ".tsv"):
        raise InputError(
            Problem(
                "export reads a suite or a cases JSONL file; import a table first "
                "(testaug suite import)",
                path,
            )
        )
    return expand_suite(load_suite(resolve_suite(source)), per_template=per_template, seed=seed)
