"""Import of case tables (JSONL or CSV), the shape in which augmented suites are published:
read as they are (pair templates as lists, the papers' task names, numeric labels), every
row a case or a rejected row with its line, field and reason. Pickles are never read."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError

from testaug.core.csv_cells import unescape_cell
from testaug.core.errors import InputError, Problem, format_path
from testaug.core.jsonl import json_lines, open_input, parse_json
from testaug.core.records import Source, TestCase, case_id, description_id
from testaug.suites.table_cells import CellError, order, pair, read_label
from testaug.suites.task_labels import PAIR_TASKS, paper_task

# Column names accepted for each field, the first being ours.
COLUMNS: dict[str, tuple[str, ...]] = {
    "task": ("task",),
    "capability": ("capability", "cap"),
    "description": ("description", "test_case_description", "test_name", "test"),
    "text": ("text", "sentence", "question1", "premise", "sentence1", "text_a", "input"),
    "text_pair": ("text_pair", "question2", "hypothesis", "sentence2", "text_b"),
    "label": ("label", "expected_label", "gold_label", "is_duplicate"),
    "test_type": ("test_type", "type"),
    "source": ("source",),
    "template": ("template",),
    "template_pair": ("template_pair",),
    "template_id": ("template_id",),
    "fills": ("fills", "slot_fills"),
}
# The second-text column that goes with each first-text column.
_PAIR_COLUMN = {
    "question1": "question2",
    "premise": "hypothesis",
    "sentence1": "sentence2",
    "text_a": "text_b",
}
# Columns of our own export: kept out of meta where they agree with the case.
_OWN = ("id", "description_id", "meta")
PICKLE_SUFFIXES = (".pkl", ".pickle", ".dill", ".pck")
_SOURCES = {
    "template": "template",
    "llm": "llm",
    "gpt3": "llm",
    "gpt-3": "llm",
    "generated": "llm",
    "expansion": "expansion",
}


class RejectedRow(BaseModel):
    """A table row that could not become a test case, kept whole with the reason and the
    column it is about (None when about the whole row)."""

    line: int
    reason: str
    row: dict[str, Any]
    field: str | None = None

    def problem(self, path: Path | str) -> Problem:
        """The rejection as a problem: `file:line: field: reason`."""
        return Problem(self.reason, path, self.line, self.field)


class ImportNotes(BaseModel):
    """What an import read otherwise than as written (a task name, numeric labels), with
    how many rows each note is about, for the summary."""

    counts: dict[str, int] = {}

    def add(self, note: str) -> None:
        self.counts[note] = self.counts.get(note, 0) + 1


def read_table(
    path: Path,
    *,
    task: str | None = None,
    labels: tuple[str, ...] | None = None,
    label_map: Mapping[str, str] | None = None,
    notes: ImportNotes | None = None,
    source: Source | None = None,
) -> Iterator[TestCase | RejectedRow]:
    """Stream a JSONL or CSV case table as test cases, and rejected rows with their reason.

    `task` is the task of rows without a task column; a paper's name for a task (qqp, sst2,
    mnli) becomes the bundled task, and its numbers the labels in the order that dataset
    documents, unless `label_map` maps them. Unknown columns are kept in each case's `meta`.
    A row of a pair task (paraphrase, nli) without a second text, or with a blank one, is
    rejected. A row repeating an earlier case is rejected as a duplicate, so every row ends
    up somewhere. `source` is the source of every case whose row has no source cell (a
    row's own cell wins; without either, `template`). `notes` collects what was read
    otherwise than as written.
    """
    first_line: dict[str, int] = {}
    for line, row, reason in _rows(path):
        if reason is not None:
            yield RejectedRow(line=line, reason=reason, row=row)
            continue
        try:
            case = _case(row, task, labels, label_map or {}, notes or ImportNotes(), source)
        except CellError as exc:
            yield RejectedRow(line=line, reason=str(exc), row=row, field=exc.field)
            continue
        if case.id in first_line:
            yield RejectedRow(line=line, reason=f"duplicate of line {first_line[case.id]}", row=row)
            continue
        first_line[case.id] = line
        yield case


def no_case_error(path: Path, rejects: list[RejectedRow]) -> InputError:
    """The error for a table that gave no test case: empty, or why its first row was rejected."""
    if not rejects:
        return InputError(Problem("no test case: the table has no rows", path))
    first = rejects[0]
    return InputError(
        Problem(
            f"no test case: all {len(rejects)} rows rejected "
            f"(first, line {first.line}: {first.field + ': ' if first.field else ''}"
            f"{first.reason})",
            path,
        )
    )


# Python's csv refuses fields over 128 KiB by default; a case text may be longer.
CSV_FIELD_LIMIT = 64 * 1024 * 1024


def refuse_pickle(path: Path) -> None:
    """Raise InputError for a pickle (by its name or its first bytes): loading one runs any
    code it holds, so it is never read; the message says how to export it instead."""
    suffix = path.suffix.lower()
    try:
        with path.open("rb") as handle:
            head = handle.read(2)
    except OSError:
        head = b""
    if suffix not in PICKLE_SUFFIXES and not (
        head[:1] == b"\x80" and head[1:2] in b"\x02\x03\x04\x05"
    ):
        return
    stem = path.with_suffix("").name
    raise InputError(
        Problem(
            "a pickle is never read (loading one runs any code it holds); export it to CSV "
            'where you trust it: a pandas table with python -c "import pandas as pd; '
            f"pd.read_pickle('{path.name}').to_csv('{stem}.csv', index=False)\", a CheckList "
            "suite with the snippet in docs/how-to/files.md (Importing CheckList suites)",
            path,
        )
    )


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any], str | None]]:
    """(line, row, None) for each row; (line, what was read, reason) for one that is not
    a record."""
    refuse_pickle(path)
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".ndjson", ".json", ".csv", ".tsv"):
        raise InputError(Problem("expected a .jsonl or .csv case table", path))
    with open_input(path, newline="") as handle:
        if suffix in (".csv", ".tsv"):
            yield from _csv_rows(path, handle, "\t" if suffix == ".tsv" else ",")
            return
        for line, row in json_lines(handle):
            if isinstance(row, json.JSONDecodeError):
                yield line, {}, f"not valid JSON ({row.msg})"
            elif not isinstance(row, dict):
                yield line, {"value": row}, "expected a JSON object"
            else:
                yield line, row, None


def _csv_rows(
    path: Path, handle: TextIO, delimiter: str
) -> Iterator[tuple[int, dict[str, Any], str | None]]:
    """(line, row) pairs of a CSV table whose header names a text column."""
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    reader = csv.DictReader(handle, delimiter=delimiter)
    try:
        header = reader.fieldnames or []
        if header and not any(alias in header for alias in COLUMNS["text"]):
            found = ", ".join(repr(name) for name in header)
            raise InputError(
                Problem(
                    f"no text column: found {found}; expected one of " + ", ".join(COLUMNS["text"]),
                    path,
                    1,
                )
            )
        start = 2
        for row in reader:
            extra = row.pop(None, None)
            cells = {k: unescape_cell(v) for k, v in row.items() if v not in (None, "")}
            if extra:
                reason = f"{len(extra)} more cells than the header has columns"
                yield start, {**cells, "extra_cells": extra}, reason
            else:
                yield start, cells, None
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(Problem(f"not a readable CSV row ({exc})", path, reader.line_num)) from exc


def _case(
    row: dict[str, Any],
    task: str | None,
    labels: tuple[str, ...] | None,
    label_map: Mapping[str, str],
    notes: ImportNotes,
    source: Source | None = None,
) -> TestCase:
    fields: dict[str, Any] = {}
    column: dict[str, str] = {}  # field name -> the column it was read from
    for name, aliases in COLUMNS.items():
        for alias in aliases:
            if alias in row:
                fields[name], column[name] = row[alias], alias
                break
    for required in ("capability", "description", "text", "label"):
        if fields.get(required) in (None, ""):
            raise CellError(
                f"missing (columns tried: {', '.join(COLUMNS[required])})",
                column.get(required, required),
            )
    named = fields.get("task") or task
    if not named:
        raise CellError("missing: give --task or a task column", "task")
    if not isinstance(named, str):
        raise CellError("not text", column.get("task", "task"))
    known = paper_task(named)
    fields["task"] = known.task if known else named
    meta = {k: v for k, v in row.items() if k not in column.values() and k not in _OWN}
    if fields["task"] != named:
        notes.add(f"task {named!r} read as {fields['task']!r}")
        meta["task_name"] = named
    listed_text = False
    for first, second in (("text", "text_pair"), ("template", "template_pair")):
        cell = fields.get(first)
        one, two = pair(cell, column.get(first, first))
        if two is not None and fields.get(second) not in (None, ""):
            raise CellError(f"holds a pair and {column[second]} is given too", column[first])
        if two is not None:
            fields[first], fields[second] = one, two
        if first == "text":
            listed_text = one is not cell  # a list cell: pair() gave its first item
    if fields["task"] in PAIR_TASKS:
        _require_pair(fields, column, listed_text)
    numeric = known.numeric if known and not label_map else None
    fields["label"], how = read_label(
        fields["label"],
        column["label"],
        task=named,
        numeric=numeric,
        labels=labels,
        label_map=label_map,
    )
    if how:
        meta["label_raw"] = row[column["label"]]
    if how == "order" and numeric:
        notes.add(f"numeric labels of {named!r} read as {order(numeric)}")
    if "source" in fields:
        written = str(fields["source"]).strip().lower()
        if written not in _SOURCES:
            raise CellError(
                f"unknown source {fields['source']!r} (expected template, llm or expansion)",
                column["source"],
            )
        fields["source"] = _SOURCES[written]
        if source is not None and fields["source"] != source:
            notes.add(f"source column read over --source {source}")
    elif source is not None:
        fields["source"] = source
    if isinstance(fields.get("fills"), str):
        fills = parse_json(fields["fills"])
        if isinstance(fills, json.JSONDecodeError):
            raise CellError(f"not a JSON object ({fills.msg})", column["fills"])
        fields["fills"] = fills
    fields["description_id"] = description_id(
        fields["task"], fields["capability"], fields["description"]
    )
    fields["meta"] = _own_columns(row, meta, fields)
    try:
        return TestCase.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field = column.get(str(loc[0]), str(loc[0])) if loc else None
        where = format_path(loc[1:])
        raise CellError(f"{where + ': ' if where else ''}{err['msg']}", field) from exc


def _require_pair(fields: dict[str, Any], column: dict[str, str], listed_text: bool) -> None:
    """Raise CellError unless the row has a second text that is not blank, naming the column
    it is about: the second-text column where the row has one, else the text column where
    that held a list, else the second-text column that goes with the text column."""
    second = fields.get("text_pair")
    if second is not None and not (isinstance(second, str) and not second.strip()):
        return  # a text, or a value that validation names as not one
    first = column["text"]
    where = column.get("text_pair") or (
        first if listed_text else _PAIR_COLUMN.get(first, "text_pair")
    )
    raise CellError(f"empty second text: task {fields['task']!r} takes a pair of texts", where)


def _own_columns(row: dict[str, Any], meta: dict[str, Any], fields: dict[str, Any]) -> dict:
    """`meta` with our export's own columns folded in: a `meta` cell holding a JSON object
    is merged; an `id` or `description_id` that is not the case's own is kept as written."""
    if "meta" in row:
        value = row["meta"]
        value = parse_json(value) if isinstance(value, str) else value
        meta = {**value, **meta} if isinstance(value, dict) else {**meta, "meta": row["meta"]}
    ids = {
        "id": case_id(fields["task"], str(fields["text"]), fields.get("text_pair")),
        "description_id": fields["description_id"],
    }
    for name, own in ids.items():
        if name in row and row[name] != own:
            meta[name] = row[name]
    return meta
