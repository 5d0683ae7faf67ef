"""Import of case tables (JSONL or CSV), the shape in which augmented suites are published."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TextIO

from pydantic import BaseModel, ValidationError

from testaug.core.errors import InputError, Problem, format_path
from testaug.core.jsonl import json_lines, open_input, parse_json
from testaug.core.records import TestCase, description_id

# Column names accepted for each field, the first being ours.
COLUMNS: dict[str, tuple[str, ...]] = {
    "task": ("task",),
    "capability": ("capability", "cap"),
    "description": ("description", "test_case_description", "test_name", "test"),
    "text": ("text", "sentence", "question1", "premise", "text_a", "input"),
    "text_pair": ("text_pair", "question2", "hypothesis", "text_b"),
    "label": ("label", "expected_label", "gold_label"),
    "test_type": ("test_type", "type"),
    "source": ("source",),
    "template": ("template",),
    "template_pair": ("template_pair",),
    "fills": ("fills", "slot_fills"),
}
_SOURCES = {
    "template": "template",
    "llm": "llm",
    "gpt3": "llm",
    "gpt-3": "llm",
    "generated": "llm",
    "expansion": "expansion",
}


class RejectedRow(BaseModel):
    """A table row that could not become a test case, kept whole with the reason."""

    line: int
    reason: str
    row: dict[str, Any]


def read_table(
    path: Path,
    *,
    task: str | None = None,
    labels: tuple[str, ...] | None = None,
    label_map: Mapping[str, str] | None = None,
) -> Iterator[TestCase | RejectedRow]:
    """Stream a JSONL or CSV case table as test cases, and rejected rows with their reason.

    Unknown columns are kept in each case's `meta`. A row repeating an earlier
    case is rejected as a duplicate, so every row ends up somewhere.
    """
    first_line: dict[str, int] = {}
    for line, row in _rows(path):
        if isinstance(row, str):
            yield RejectedRow(line=line, reason=row, row={})
            continue
        try:
            case = _case(row, task, labels, label_map or {})
        except ValueError as exc:
            yield RejectedRow(line=line, reason=str(exc), row=row)
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
            f"(first, line {first.line}: {first.reason})",
            path,
        )
    )


# Python's csv refuses fields over 128 KiB by default; a case text may be longer.
CSV_FIELD_LIMIT = 64 * 1024 * 1024


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(line, row) pairs; a row that is not a record comes as the reason string."""
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".ndjson", ".json", ".csv", ".tsv"):
        raise InputError(Problem("expected a .jsonl or .csv case table", path))
    with open_input(path, newline="") as handle:
        if suffix in (".csv", ".tsv"):
            yield from _csv_rows(path, handle, "\t" if suffix == ".tsv" else ",")
            return
        for line, row in json_lines(handle):
            if isinstance(row, json.JSONDecodeError):
                yield line, f"not valid JSON ({row.msg})"
            else:
                yield line, row if isinstance(row, dict) else "expected a JSON object"


def _csv_rows(path: Path, handle: TextIO, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
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
            yield start, {k: v for k, v in row.items() if k is not None and v not in (None, "")}
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(Problem(f"not a readable CSV row ({exc})", path, reader.line_num)) from exc


def _case(
    row: dict[str, Any],
    task: str | None,
    labels: tuple[str, ...] | None,
    label_map: Mapping[str, str],
) -> TestCase:
    fields: dict[str, Any] = {}
    used: set[str] = set()
    for name, aliases in COLUMNS.items():
        for alias in aliases:
            if alias in row:
                fields[name] = row[alias]
                used.add(alias)
                break
    for required in ("capability", "description", "text", "label"):
        if fields.get(required) in (None, ""):
            raise ValueError(f"missing {required} (columns tried: {', '.join(COLUMNS[required])})")
    fields["task"] = fields.get("task") or task
    if not fields["task"]:
        raise ValueError("missing task: give --task or a task column")
    fields["label"] = _label(fields["label"], labels, label_map)
    if "source" in fields:
        source = str(fields["source"]).strip().lower()
        if source not in _SOURCES:
            raise ValueError(
                f"unknown source {fields['source']!r} (expected template, llm or expansion)"
            )
        fields["source"] = _SOURCES[source]
    if isinstance(fields.get("fills"), str):
        fills = parse_json(fields["fills"])
        if isinstance(fills, json.JSONDecodeError):
            raise ValueError(f"fills is not a JSON object ({fills.msg})")
        fields["fills"] = fills
    fields["description_id"] = description_id(
        fields["task"], fields["capability"], fields["description"]
    )
    fields["meta"] = {k: v for k, v in row.items() if k not in used}
    try:
        return TestCase.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ValueError(f"{format_path(err['loc'])}: {err['msg']}") from exc


def _label(
    raw: Any, labels: tuple[str, ...] | None, label_map: Mapping[str, str]
) -> str | tuple[str, ...]:
    """A label or label set: a JSON list, or acceptable labels joined by '|'."""
    parts = raw if isinstance(raw, list) else str(raw).split("|")
    out = []
    for part in parts:
        key = str(part).strip()
        if key in label_map:
            value = label_map[key]
        elif isinstance(part, bool | int | float) or key.lstrip("-").isdigit():
            raise ValueError(f"label {key!r} is a number: map it with --label-map {key}=NAME")
        else:
            value = key
        if labels and value not in labels:
            raise ValueError(f"label {value!r} is not one of {', '.join(labels)}")
        out.append(value)
    return out[0] if len(out) == 1 else tuple(dict.fromkeys(out))
