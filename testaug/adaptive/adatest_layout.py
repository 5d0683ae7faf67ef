"""How an AdaTest CSV tree was laid out, so that exporting the imported tree gives it back.

A tree holds tests, not the file they came from, and AdaTest's files differ in ways a tree
does not record: their columns (an `author` or `model score` column may be empty in every
row; older trees call the topic column `tags` and write `model%20score`; a column testaug
does not read, such as `query`), how topics are spelled (AdaTest writes a space as "%20"
since it fixes unencoded topics on loading, but its shipped trees, such as
`abstract_capabilities.csv`, spell them with plain spaces and "&") and how a topic is
declared (a `topic_marker` row, or an empty row in the oldest trees).

`tree import` keeps the layout beside the tree it writes (`tree.jsonl` gets
`tree.adatest.json`, `layout_file`); `tree export` in the same columns writes that header,
those topic spellings and those markers, so an import then export gives back the same
file; columns testaug does not read come back empty. A tree without a layout is written
in AdaTest's own spelling ("%20", `topic_marker`, only the columns it fills).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote

from pydantic import Field, ValidationError

from testaug.core.errors import InputError, Problem
from testaug.core.records import Record
from testaug.core.runs import write_text_atomic

SCORE_SUFFIX = " score"
TOPIC_COLUMNS = ("topic", "tags")


def encoded_topic(topic: str) -> str:
    """A topic as AdaTest writes it: a space as "%20" and "%" as "%25"."""
    return topic.replace("%", "%25").replace(" ", "%20")


class AdaTestLayout(Record):
    """An AdaTest CSV's header as spelled (the id column first), whether it spelled topics
    with plain spaces, the topic cells that neither spelling rule gives back (by topic as
    read), and the label of its topic rows ("" where empty rows declared topics)."""

    format: str
    header: tuple[str, ...]
    plain_topics: bool = False
    spelled: dict[str, str] = Field(default_factory=dict)
    marker_label: str = "topic_marker"

    def topic_cell(self, topic: str) -> str:
        """The topic's cell: as the file spelled it, else by the file's rule."""
        if topic in self.spelled:
            return self.spelled[topic]
        return topic if self.plain_topics else encoded_topic(topic)

    def column_key(self, column: str) -> str:
        """What a header cell holds: a format column ("topic" for `tags`), "author",
        "score:<model>", or "" for a column testaug does not read (written empty)."""
        name = unquote(column)
        if column in TOPIC_COLUMNS:
            return "topic"
        if name.endswith(SCORE_SUFFIX):
            return "score:" + name[: -len(SCORE_SUFFIX)]
        return column


def read_layout(
    format: str, header: Sequence[str], topic_cells: Mapping[str, str], markers: Sequence[str]
) -> AdaTestLayout:
    """The layout of a file in `format` columns with this `header`, its topic cells by topic
    as read, and the label cells of its topic rows. Topics are spelled with plain spaces
    when a cell has one (the "type" columns never encode them), else as AdaTest writes them."""
    plain = format != "label" or any(" " in cell for cell in topic_cells.values())
    layout = AdaTestLayout(format=format, header=tuple(header), plain_topics=plain)
    spelled = {
        topic: cell for topic, cell in topic_cells.items() if layout.topic_cell(topic) != cell
    }
    marker = "" if markers and all(label == "" for label in markers) else "topic_marker"
    return layout.model_copy(update={"spelled": spelled, "marker_label": marker})


def layout_file(tree_path: Path | str) -> Path:
    """Where the layout of the AdaTest CSV a tree came from is kept: beside the tree."""
    path = Path(tree_path)
    return path.with_name(f"{path.stem}.adatest.json")


def save_layout(tree_path: Path | str, layout: AdaTestLayout | None) -> None:
    """Keep `layout` beside the tree at `tree_path` (None removes an earlier one)."""
    target = layout_file(tree_path)
    if layout is None:
        target.unlink(missing_ok=True)
    else:
        write_text_atomic(target, layout.model_dump_json(indent=1) + "\n")


def load_layout(tree_path: Path | str) -> AdaTestLayout | None:
    """The layout kept beside the tree at `tree_path`, if any; InputError naming the file
    when it cannot be read."""
    source = layout_file(tree_path)
    if not source.is_file():
        return None
    try:
        return AdaTestLayout.model_validate(json.loads(source.read_text(encoding="utf-8")))
    except (ValueError, ValidationError) as exc:
        reason = str(exc).splitlines()[0]
        raise InputError(
            Problem(f"not an AdaTest layout ({reason}); delete it to export without", source)
        ) from None


def copy_layout(tree_path: Path | str, out: Path | str) -> None:
    """Give a tree written from another (`tree score -o`) the layout of the one it came from."""
    if Path(out).resolve() == Path(tree_path).resolve():
        return
    source = layout_file(tree_path)
    if source.is_file():
        shutil.copyfile(source, layout_file(out))
    else:
        save_layout(out, None)
