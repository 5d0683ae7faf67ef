"""AdaTest's CSV test trees (microsoft/adaptive-testing), read and written.

AdaTest saved its trees with pandas: the first column is the row id (a uuid hex,
unnamed in the header), then one of three column sets, all read here:

- "label" (the current `adaptivetesting` package): topic, input, output, label,
  labeler, description. label "pass" says `output` is right for `input` (read as
  "should be"), "fail" that it is wrong ("should not be"), "topic_marker" declares
  a topic. "off_topic" and unlabelled ("", "Unknown") rows are skipped and
  reported; a row with no label, input or output declares its topic (trees from
  before topic markers, which also call the topic column "tags"). Spaces in topics
  are written "%20".
- "type" (adatest 0.x): topic, type, value1, value2, value3, author, description,
  with the types "{} should output {}", "{} should not output {}", "{} should have
  the same output as {}", "{} should not be more {} than {}" and "topic_marker".
- "comparator" (the first release): topic, prefix, value1, comparator, value2,
  labeler, with "should be", "should not be" and "should be the same as for".

Columns named "<model> score" hold failure scores ("|"-joined scores of template
expansions: the highest counts, as in AdaTest). Other columns are ignored.
Any other label, type or comparator is an error naming the line.

Writing uses the "label" columns (what AdaTest loads today) or the "type" columns.
What a format cannot hold is left out and reported, never written wrongly:
pair inputs and (in "label") every comparison test. A test naming several labels
becomes one "should not be" test per label it rules out (reported as changed). The "type" columns have no tolerance (AdaTest has none) and no "no less
than": that test is written as the other input "should not be more L than" this
one, which reads back as the equivalent "should be no more than" test.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from pydantic import ValidationError

from testaug.adaptive.tree import ROOT, TestTree, TreeTest
from testaug.core.errors import InputError, Problem, format_path
from testaug.core.jsonl import open_input
from testaug.core.records import Record
from testaug.core.runs import write_text_atomic
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
    "unknown": "no pass/fail label",
}
SUGGESTIONS_TOPIC = "/__suggestions__"
SCORE_SUFFIX = " score"
SOURCE = "adatest"


class SkippedRow(Record):
    """A CSV row that did not become a tree row, and why."""

    line: int
    reason: str


class AdaTestImport(Record):
    """An imported tree, which columns it had, and the rows left out."""

    tree: TestTree
    format: AdaTestFormat
    skipped: tuple[SkippedRow, ...] = ()


class ExportNote(Record):
    """A test the chosen format could not hold as it is: left out, or written changed."""

    test_id: str
    topic: str
    reason: str
    written: bool = False


class AdaTestExport(Record):
    """What an export wrote: the format, the rows, and the tests left out or changed."""

    format: AdaTestFormat
    rows: int
    notes: tuple[ExportNote, ...] = ()

    @property
    def left_out(self) -> list[ExportNote]:
        """The tests that were not written."""
        return [note for note in self.notes if not note.written]


def read_adatest_csv(path: Path | str) -> AdaTestImport:
    """An AdaTest CSV tree (any of the three column sets) as a tree; InputError naming file,
    line and column for every row that cannot be read."""
    path = Path(path)
    header, rows = _read_csv(path)
    form = detect_format(header, path)
    has_id = header[0] not in FORMATS[form]
    problems: list[Problem] = []
    out: list[TreeTest] = []
    skipped: list[SkippedRow] = []
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
    if problems:
        raise InputError(problems)
    return AdaTestImport(tree=TestTree(rows=tuple(out)), format=form, skipped=tuple(skipped))


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


def write_adatest_csv(
    path: Path | str,
    tree: TestTree,
    *,
    format: AdaTestFormat = "label",
    labels: Sequence[str] | None = None,
) -> AdaTestExport:
    """Write the tree as an AdaTest CSV, atomically; reports what the format could not hold."""
    text, result = adatest_csv_text(tree, format=format, labels=labels)
    write_text_atomic(Path(path), text)
    return result


def adatest_csv_text(
    tree: TestTree, *, format: AdaTestFormat = "label", labels: Sequence[str] | None = None
) -> tuple[str, AdaTestExport]:
    """The CSV text of a tree in AdaTest's `format` columns, and what it left out or changed.

    AdaTest tests name one output. A test naming several labels is written as one "should
    not be" test per label it rules out: "should not be a|b" as "not a" and "not b";
    "should be a|b" as "not" each other label of the task (`labels`; without them it is
    left out). Those rows carry no scores (the split tests were not scored)."""
    if format == "comparator":
        raise ValueError("writing is supported in the 'label' and 'type' column sets")
    models = list(dict.fromkeys(name for row in tree.rows for name in row.scores))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["", *FORMATS[format], *(name + SCORE_SUFFIX for name in models)])
    notes: list[ExportNote] = []
    count = 0
    for original in tree.rows:
        split, split_note = _one_label_each(original, labels)
        if split_note is not None:
            notes.append(split_note)
        for row in split:
            cells, note = _csv_cells(row, format)
            if note is not None:
                notes.append(note)
            if cells is None:
                continue
            scores = [repr(row.scores[name]) if name in row.scores else "" for name in models]
            writer.writerow([*cells, *scores])
            count += 1
    return buffer.getvalue(), AdaTestExport(format=format, rows=count, notes=tuple(notes))


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
                    rows.append((line, values))
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
        if label in SKIPPED_LABELS:
            return SKIPPED_LABELS[label]
        if label not in ("pass", "fail"):
            raise _RowError(
                f"unknown label {label!r}; expected pass, fail, topic_marker or off_topic", "label"
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
    such as "__TOEVAL__") are left out rather than refused."""
    scores = {}
    for column, value in row.items():
        name = unquote(column)
        if not name.endswith(SCORE_SUFFIX) or not value.strip():
            continue
        try:
            parts = [float(part) for part in value.split("|") if part.strip()]
        except ValueError:
            continue
        parts = [part for part in parts if not math.isnan(part)]
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


def _topic_cell(topic: str, format: AdaTestFormat) -> str:
    """A topic as AdaTest writes it: "" for the root; "%20" for spaces in the label format."""
    if topic == ROOT:
        return ""
    return topic.replace("%", "%25").replace(" ", "%20") if format == "label" else topic


def _one_label_each(
    row: TreeTest, labels: Sequence[str] | None
) -> tuple[list[TreeTest], ExportNote | None]:
    """A label test naming several labels as "should not be" tests of one label each (see
    `adatest_csv_text`), with a note; any other row as it is."""
    expected = row.expected_labels
    if row.kind != "test" or row.comparator not in ("should be", "should not be"):
        return [row], None
    if len(expected) <= 1:
        return [row], None

    def note(reason: str, written: bool) -> ExportNote:
        return ExportNote(test_id=row.id, topic=row.topic, reason=reason, written=written)

    if row.comparator == "should not be":
        ruled_out = list(expected)
    elif labels is None:
        hint = "give the task's labels to write it as 'should not be' each other label"
        return [], note(f"several expected labels ({row.output}); {hint}", False)
    else:
        ruled_out = [label for label in labels if label not in expected]
        if not ruled_out:
            return [], note(f"every label is expected ({row.output}): nothing to test", False)
    fields = row.model_dump(exclude={"id", "scores"})
    split = [
        TreeTest(**{**fields, "comparator": "should not be", "output": label})
        for label in ruled_out
    ]
    written = " and ".join(f"'should not be {label}'" for label in ruled_out)
    return split, note(f"{row.comparator} {row.output}: written as {written}", True)


def _csv_cells(row: TreeTest, format: AdaTestFormat) -> tuple[list[str] | None, ExportNote | None]:
    """The id and format columns of one tree row (None when it cannot be written), with a note."""
    topic = _topic_cell(row.topic, format)

    def note(reason: str, written: bool = False) -> ExportNote:
        return ExportNote(test_id=row.id, topic=row.topic, reason=reason, written=written)

    if row.kind == "topic":
        if format == "label":
            return [row.id, topic, "", "", "topic_marker", row.labeler, row.description], None
        return [row.id, topic, "topic_marker", "", "", "", row.labeler, row.description], None
    if row.input_pair is not None or row.output_pair is not None:
        return None, note("pair inputs: AdaTest tests have one input")
    if format == "label":
        if row.comparator not in ("should be", "should not be"):
            return None, note(f"{row.comparator!r}: the label format holds label tests only")
        label = "pass" if row.comparator == "should be" else "fail"
        return [row.id, topic, row.input, row.output, label, row.labeler, row.description], None
    changed = None
    if row.comparator in ("should be the same as for", "should be no less than",
                          "should be no more than") and row.tolerance != 0.1:  # fmt: skip
        changed = note(f"tolerance {row.tolerance:g} not kept (AdaTest has none)", True)
    if row.comparator == "should be no less than":
        swapped = TreeTest(
            **{
                **row.model_dump(exclude={"id"}),
                "input": row.output,
                "output": row.input,
                "comparator": "should be no more than",
            }
        )
        cells = [swapped.id, topic, "{} should not be more {} than {}", row.output,
                 row.watched or "", row.input, row.labeler, row.description]  # fmt: skip
        return cells, changed or note("written as the other input 'no more than' this one", True)
    kind = next(
        name for name, comparator in TYPE_COMPARATORS.items() if comparator == row.comparator
    )
    if row.comparator == "should be no more than":
        cells = [row.id, topic, kind, row.input, row.watched or "", row.output, row.labeler,
                 row.description]  # fmt: skip
    else:
        cells = [row.id, topic, kind, row.input, row.output, "", row.labeler, row.description]
    return cells, changed
