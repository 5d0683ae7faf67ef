"""AdaTest's CSV test trees (microsoft/adaptive-testing) read into test trees.

AdaTest saved its trees with pandas: the first column is the row id (a uuid hex,
unnamed in the header), then one of three column sets, all read here:

- "label" (the current `adaptivetesting` package): topic, input, output, label,
  labeler, description, often author. label "pass" says `output` is right for `input`
  (read as "should be"), "fail" that it is wrong ("should not be"), "Unknown" that
  no one has said yet (a row of kind "unlabelled", kept), "topic_marker" declares a
  topic. "off_topic" rows and rows with an input but no label are skipped and
  reported; a row with no label, input or output declares its topic (trees from
  before topic markers, which also call the topic column "tags"). Topics are
  URL-encoded path segments (AdaTest writes a space as "%20"): read decoded.
- "type" (adatest 0.x): topic, type, value1, value2, value3, author, description,
  with the types "{} should output {}", "{} should not output {}", "{} should have
  the same output as {}", "{} should not be more {} than {}" and "topic_marker".
- "comparator" (the first release): topic, prefix, value1, comparator, value2,
  labeler, with "should be", "should not be" and "should be the same as for".

A label map (`label_map`) renames output labels as they are read (see `label_map`).
Columns named "<model> score" hold failure scores ("|"-joined scores of template
expansions: the highest counts, as in AdaTest). Other columns are ignored.
Any other label, type or comparator is an error naming the line. A cell that starts with
`'` before `=`, `+`, `-` or `@` is read without that `'`, which writing (`adatest_export`'s)
adds so that spreadsheets show such a cell as text (`core.csv_cells`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from pydantic import ValidationError

from testaug.adaptive.adatest_layout import SCORE_SUFFIX, AdaTestLayout, read_layout
from testaug.adaptive.label_map import map_labels
from testaug.adaptive.tree import ROOT, TestTree, TreeTest
from testaug.core.csv_cells import unescape_cell
from testaug.core.errors import InputError, Problem, format_path
from testaug.core.jsonl import open_input
from testaug.core.records import Record
from testaug.suites.tables import CSV_FIELD_LIMIT

AdaTestFormat = Literal["label", "type", "comparator"]
FORMATS: dict[AdaTestFormat, tuple[str, ...]] = {
    "label": ("topic", "input", "output", "label", "labeler", "description"),
    "type": ("topic", "type", "value1", "value2", "value3", "author", "description"),
    "comparator": ("topic", "prefix", "value1", "comparator", "value2", "labeler"),
}
TYPE_COMPARATORS = {
    "{} should output {}": "should be",
    "{} should not output {}": "should not be",
    "{} should have the same output as {}": "should be the same as for",
    "{} should not be more {} than {}": "should be no more than",
}
OLD_COMPARATORS = ("should be", "should not be", "should be the same as for")
SKIPPED_LABELS = {
    "off_topic": "marked off-topic in AdaTest",
    "": "no pass/fail label",
}
UNKNOWN_LABEL = "Unknown"  # AdaTest's label of a test without a verdict yet
SUGGESTIONS_TOPIC = "/__suggestions__"
SOURCE = "adatest"


class SkippedRow(Record):
    """A CSV row that did not become a tree row, and why."""

    line: int
    reason: str


class AdaTestImport(Record):
    """An imported tree, which columns it had, the rows left out, and the file's layout
    (for an export in the same columns to give the file back; None for the "comparator"
    columns, which are not written)."""

    tree: TestTree
    format: AdaTestFormat
    skipped: tuple[SkippedRow, ...] = ()
    layout: AdaTestLayout | None = None


def read_adatest_csv(
    path: Path | str, *, label_map: Mapping[str, str] | None = None
) -> AdaTestImport:
    """An AdaTest CSV tree (any of the three column sets) as a tree, its labels renamed by
    `label_map`; InputError naming file, line and column for every row that cannot be read."""
    path = Path(path)
    header, rows = _read_csv(path)
    form = detect_format(header, path)
    has_id = header[0] not in FORMATS[form]
    problems: list[Problem] = []
    out: list[TreeTest] = []
    lines: list[int] = []
    skipped: list[SkippedRow] = []
    topic_cells: dict[str, str] = {}
    markers: list[str] = []
    for line, values in rows:
        if len(values) > len(header):
            problems.append(Problem(f"{len(values)} fields for {len(header)} columns", path, line))
            continue
        row = dict(zip(header, values, strict=False))
        try:
            made = _tree_row(form, row, has_id=has_id, first=header[0])
        except _RowError as exc:
            problems.append(Problem(exc.message, path, line, exc.field))
            continue
        except ValidationError as exc:
            problems += [
                Problem(err["msg"], path, line, _field(form, format_path(err["loc"]), err["msg"]))
                for err in exc.errors()
            ]
            continue
        if isinstance(made, str):
            skipped.append(SkippedRow(line=line, reason=made))
        else:
            out.append(made)
            lines.append(line)
            if made.topic != ROOT:
                topic_cells.setdefault(made.topic, row.get("topic", row.get("tags", "")).strip())
            if made.kind == "topic" and form == "label":
                markers.append(row.get("label", "").strip())
    if problems:
        raise InputError(problems)
    tree = map_labels(TestTree(rows=tuple(out)), label_map or {})
    if problems := _repeated_ids(tree.rows, lines, path):  # the same test twice, or mapped so
        raise InputError(problems)
    layout = None if form == "comparator" else read_layout(form, header, topic_cells, markers)
    return AdaTestImport(tree=tree, format=form, skipped=tuple(skipped), layout=layout)


def _repeated_ids(rows: Sequence[TreeTest], lines: Sequence[int], path: Path) -> list[Problem]:
    """A problem for each row whose id an earlier row has (a tree holds each id once)."""
    seen: dict[str, int] = {}
    problems = []
    for row, line in zip(rows, lines, strict=True):
        if row.id in seen:
            problems.append(
                Problem(f"repeats the id of the row on line {seen[row.id]}", path, line, "id")
            )
        seen.setdefault(row.id, line)
    return problems


def detect_format(header: Sequence[str], path: Path | str | None = None) -> AdaTestFormat:
    """Which of AdaTest's column sets a header has; InputError naming line 1 otherwise."""
    names = set(header)
    if {"input", "output", "label"} <= names:
        return "label"
    if {"type", "value1", "value2"} <= names:
        return "type"
    if {"value1", "comparator", "value2"} <= names:
        return "comparator"
    found = ", ".join(repr(name) for name in header)
    raise InputError(
        Problem(
            f"not an AdaTest tree: found columns {found}; expected input, output and label "
            "(or the older type, value1, value2 / value1, comparator, value2)",
            path,
            1,
        )
    )


class _RowError(Exception):
    """A row that cannot be read: the message and the column."""

    def __init__(self, message: str, field: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line, values) of every non-blank row."""
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    with open_input(path, newline="") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, None)
            if not header:
                raise InputError(Problem("empty file: no header row", path))
            rows = []
            line = reader.line_num + 1
            for values in reader:
                if any(value.strip() for value in values):
                    rows.append((line, [unescape_cell(value) for value in values]))
                line = reader.line_num + 1
        except csv.Error as exc:
            raise InputError(
                Problem(f"not a readable CSV row ({exc})", path, reader.line_num)
            ) from exc
    return [name.strip() for name in header], rows


def _tree_row(
    form: AdaTestFormat, row: dict[str, str], *, has_id: bool, first: str
) -> TreeTest | str:
    """One CSV row as a tree row, or the reason it is skipped."""
    topic = row.get("topic", row.get("tags", "")).strip()
    if form == "label":
        topic = unquote(topic)
    if topic == SUGGESTIONS_TOPIC or topic.startswith(SUGGESTIONS_TOPIC + "/"):
        return "an unaccepted AdaTest suggestion"
    common = {
        "id": row.get(first, "").strip() if has_id else "",
        "topic": topic if topic.startswith("/") else ROOT,
        "labeler": row.get("author" if form == "type" else "labeler", ""),
        "author": row.get("author", "") if form == "label" else "",
        "description": row.get("description", ""),
        "source": SOURCE,
        "scores": {},
    }
    if form == "label":
        label = row.get("label", "").strip().lower()
        declares = label == "" and not row.get("input", "").strip() and not row.get("output", "")
        if label == "topic_marker" or declares:  # older trees declared topics by empty rows
            return TreeTest(kind="topic", **common)
        common["scores"] = _scores(row)
        if label == UNKNOWN_LABEL.lower():
            if not row.get("input", "").strip():
                return "an Unknown-labelled row with no input"
            return TreeTest(
                kind="unlabelled",
                input=row.get("input", ""),
                output=row.get("output", ""),
                **common,
            )
        if label in SKIPPED_LABELS:
            return SKIPPED_LABELS[label]
        if label not in ("pass", "fail"):
            raise _RowError(
                f"unknown label {label!r}; expected pass, fail, Unknown, topic_marker or off_topic",
                "label",
            )
        comparator = "should be" if label == "pass" else "should not be"
        return TreeTest(
            input=row.get("input", ""),
            comparator=comparator,
            output=row.get("output", ""),
            **common,
        )
    if form == "type":
        kind = row.get("type", "").strip()
        if kind == "topic_marker":
            return TreeTest(kind="topic", **common)
        common["scores"] = _scores(row)
        if kind not in TYPE_COMPARATORS:
            known = ", ".join(repr(name) for name in (*TYPE_COMPARATORS, "topic_marker"))
            raise _RowError(f"unsupported test type {kind!r}; supported: {known}", "type")
        comparator = TYPE_COMPARATORS[kind]
        if comparator == "should be no more than":
            return TreeTest(
                input=row.get("value1", ""),
                comparator=comparator,
                output=row.get("value3", ""),
                watched=row.get("value2", "").strip() or None,
                **common,
            )
        return TreeTest(
            input=row.get("value1", ""),
            comparator=comparator,
            output=row.get("value2", ""),
            **common,
        )
    comparator = row.get("comparator", "").strip()
    common["scores"] = _scores(row)
    if comparator not in OLD_COMPARATORS:
        known = ", ".join(repr(name) for name in OLD_COMPARATORS)
        raise _RowError(f"unsupported comparator {comparator!r}; supported: {known}", "comparator")
    return TreeTest(
        input=row.get("value1", ""), comparator=comparator, output=row.get("value2", ""), **common
    )


def _scores(row: dict[str, str]) -> dict[str, float]:
    """The "<model> score" columns ("<model>%20score" too) holding numbers: the highest of
    "|"-joined parts. Scores are a cache AdaTest recomputes, so other values (placeholders
    such as "__TOEVAL__") are left out rather than refused; a number that is not finite
    (nan, inf, 1e999) is refused, as no tree file could hold it."""
    scores = {}
    for column, value in row.items():
        name = unquote(column)
        if not name.endswith(SCORE_SUFFIX) or not value.strip():
            continue
        try:
            parts = [float(part) for part in value.split("|") if part.strip()]
        except ValueError:
            continue
        if not all(math.isfinite(part) for part in parts):
            raise _RowError(f"score {value.strip()!r} is not a finite number", column)
        if parts:
            scores[name[: -len(SCORE_SUFFIX)]] = max(parts)
    return scores


def _field(form: AdaTestFormat, field: str, message: str) -> str | None:
    """The CSV column a row check's message is about."""
    if field:
        return field
    input_column = "input" if form == "label" else "value1"
    if "non-empty input" in message:
        return input_column
    if "needs an output" in message:
        return "output" if form == "label" else "value2"
    if "watched" in message:
        return "value2"
    return None
