"""AdaTest's CSV test trees written: the "label" columns (what AdaTest loads today) or the
0.x "type" columns (see `adatest_csv` for the formats).

What a format cannot hold is left out and reported, never written wrongly: pair
inputs and (in "label") every comparison test. A test naming several labels
becomes one "should not be" test per label it rules out (reported as changed). A test
without a verdict is written with AdaTest's label "Unknown" (the "type" columns cannot
hold it). A tree imported from AdaTest is written in the layout of its file
(`adatest_layout`): the same header, empty columns included, the same topic spelling
and topic rows, so an import then export gives the file back. Other trees get AdaTest's
own: the "label" columns gain the "author" column when a row has an author and a
"<model> score" column per scored model, and topics are URL-encoded as AdaTest writes
them (a space as "%20", "%" as "%25"), so they read back as they were. The "type"
columns have no tolerance (AdaTest has none) and no "no less than": that test is
written as the other input "should not be more L than" this one, which reads back as
the equivalent "should be no more than" test. A tree with tests of which the format can
hold none is an error that leaves an earlier CSV as it was. A cell that a spreadsheet
would evaluate (`=`, `+`, `-`, `@` first) starts with `'` (`core.csv_cells`), which
`tree import` takes away again.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from testaug.adaptive.adatest_csv import (
    FORMATS,
    SCORE_SUFFIX,
    TYPE_COMPARATORS,
    UNKNOWN_LABEL,
    AdaTestFormat,
)
from testaug.adaptive.adatest_layout import AdaTestLayout, encoded_topic
from testaug.adaptive.tree import ROOT, TestTree, TreeTest
from testaug.core.csv_cells import escape_cell
from testaug.core.errors import InputError, Problem
from testaug.core.records import Record
from testaug.core.runs import write_text_atomic


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
    tests: int = 0  # the rows that are tests (not topic markers)
    notes: tuple[ExportNote, ...] = ()

    @property
    def left_out(self) -> list[ExportNote]:
        """The tests that were not written."""
        return [note for note in self.notes if not note.written]


def write_adatest_csv(
    path: Path | str,
    tree: TestTree,
    *,
    format: AdaTestFormat = "label",
    labels: Sequence[str] | None = None,
    layout: AdaTestLayout | None = None,
) -> AdaTestExport:
    """Write the tree as an AdaTest CSV, atomically (in the `layout` of the file it was
    imported from, when that file had these columns); reports what the format could not
    hold. A tree with tests none of which the format holds is an InputError, and `path` is
    left as it was."""
    text, result = adatest_csv_text(tree, format=format, labels=labels, layout=layout)
    if result.tests == 0 and any(row.kind != "topic" for row in tree.rows):
        reasons = sorted({note.reason for note in result.left_out})
        shown = "; ".join(reasons[:3]) + ("; ..." if len(reasons) > 3 else "")
        raise InputError(
            Problem(
                f"no test of the tree fits AdaTest's {format} columns ({len(result.left_out)} "
                f"left out: {shown}); the file was left as it was",
                file=path,
                field="--format",
            )
        )
    write_text_atomic(Path(path), text)
    return result


def adatest_csv_text(
    tree: TestTree,
    *,
    format: AdaTestFormat = "label",
    labels: Sequence[str] | None = None,
    layout: AdaTestLayout | None = None,
) -> tuple[str, AdaTestExport]:
    """The CSV text of a tree in AdaTest's `format` columns (in `layout`, when it is of
    that format), and what it left out or changed.

    AdaTest tests name one output. A test naming several labels is written as one "should
    not be" test per label it rules out: "should not be a|b" as "not a" and "not b";
    "should be a|b" as "not" each other label of the task (`labels`; without them it is
    left out). Those rows carry no scores (the split tests were not scored)."""
    if format == "comparator":
        raise ValueError("writing is supported in the 'label' and 'type' column sets")
    if layout is not None and layout.format != format:
        layout = None
    models = list(dict.fromkeys(name for row in tree.rows for name in row.scores))
    authors = format == "label" and any(row.author for row in tree.rows)
    columns = _columns(format, models, authors, layout)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([name for name, _ in columns])
    notes: list[ExportNote] = []
    count = tests = 0
    for original in tree.rows:
        split, split_note = _one_label_each(original, labels)
        if split_note is not None:
            notes.append(split_note)
        for row in split:
            cells, note = _csv_cells(row, format, layout)
            if note is not None:
                notes.append(note)
            if cells is None:
                continue
            if format == "type" and row.author not in ("", row.labeler):
                reason = f"author {row.author!r} not kept (the type columns' author is the labeler)"
                notes.append(
                    ExportNote(test_id=row.id, topic=row.topic, reason=reason, written=True)
                )
            values = dict(zip(("id", *FORMATS[format]), cells, strict=True))
            if format == "label":
                values["author"] = row.author
            values.update({f"score:{name}": repr(score) for name, score in row.scores.items()})
            writer.writerow([escape_cell(values.get(key, "")) for _, key in columns])
            count += 1
            tests += row.kind != "topic"
    result = AdaTestExport(format=format, rows=count, tests=tests, notes=tuple(notes))
    return buffer.getvalue(), result


def _columns(
    format: AdaTestFormat, models: Sequence[str], authors: bool, layout: AdaTestLayout | None
) -> list[tuple[str, str]]:
    """The (header cell, what it holds) of each column written: the layout's header, else
    the id and the format's columns; then an "author" column (label columns, when a row has
    an author) and a "<model> score" column per scored model, where those are missing."""
    if layout is None:
        columns = [("", "id"), *((name, name) for name in FORMATS[format])]
    else:
        has_id = layout.header[0] not in FORMATS[format]  # as the file was read
        columns = [(layout.header[0], "id")] if has_id else []
        columns += [(name, layout.column_key(name)) for name in layout.header[int(has_id) :]]
    keys = {key for _, key in columns}
    if authors and "author" not in keys:
        columns.append(("author", "author"))
    columns += [
        (name + SCORE_SUFFIX, f"score:{name}") for name in models if f"score:{name}" not in keys
    ]
    return columns


def _topic_cell(topic: str, format: AdaTestFormat, layout: AdaTestLayout | None) -> str:
    """A topic as the file spelled it (`layout`), or as AdaTest writes it: "" for the root;
    "%20" for spaces in the label format."""
    if topic == ROOT:
        return ""
    if layout is not None:
        return layout.topic_cell(topic)
    return encoded_topic(topic) if format == "label" else topic


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


def _csv_cells(
    row: TreeTest, format: AdaTestFormat, layout: AdaTestLayout | None
) -> tuple[list[str] | None, ExportNote | None]:
    """The id and format columns of one tree row (None when it cannot be written), with a note."""
    topic = _topic_cell(row.topic, format, layout)
    marker = layout.marker_label if layout is not None else "topic_marker"

    def note(reason: str, written: bool = False) -> ExportNote:
        return ExportNote(test_id=row.id, topic=row.topic, reason=reason, written=written)

    if row.kind == "topic":
        if format == "label":
            return [row.id, topic, "", "", marker, row.labeler, row.description], None
        return [row.id, topic, "topic_marker", "", "", "", row.labeler, row.description], None
    if row.kind == "unlabelled":
        if format == "label":
            cells = [row.id, topic, row.input, row.output, UNKNOWN_LABEL, row.labeler]
            return [*cells, row.description], None
        return None, note("no verdict yet (AdaTest's Unknown): the type format needs one")
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
