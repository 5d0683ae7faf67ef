"""The cells of a published case table read as they are: list literals (a pair template
written as `["What was ...", "What was ..."]` or a pandas tuple `('...', '...')`), numeric
labels, label sets."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from testaug.core.jsonl import parse_json

_INTEGER = re.compile(r"-?\d{1,18}(\.0*)?")
# A cell longer than this is text, never a list literal (a pair of case texts is far
# shorter, and parsing a literal costs seconds a megabyte).
LIST_CELL_LIMIT = 64 * 1024


class CellError(ValueError):
    """A cell that cannot be read, with the field it belongs to."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


def listed(value: Any) -> list[str] | None:
    """The texts of a list-valued cell: a list of strings, or a string holding a JSON list or
    a Python list or tuple literal of strings (read as data: `ast.literal_eval`, never run);
    None for anything else."""
    if isinstance(value, list | tuple):
        return list(value) if all(isinstance(item, str) for item in value) else None
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not 2 <= len(text) <= LIST_CELL_LIMIT or text[0] not in "[(" or text[-1] not in "])":
        return None
    parsed = parse_json(text) if text[0] == "[" else None
    if parsed is None or isinstance(parsed, json.JSONDecodeError):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(parsed, list | tuple) and all(isinstance(item, str) for item in parsed):
        return list(parsed)
    return None


def pair(value: Any, field: str) -> tuple[Any, str | None]:
    """A cell that may hold one text or a pair of them: (first, second or None)."""
    items = listed(value)
    if items is None:
        return value, None
    if len(items) in (1, 2) and all(item.strip() for item in items):
        return items[0], items[1] if len(items) == 2 else None
    if len(items) == 2 and items[0].strip():
        raise CellError("empty second text in the pair", field)
    raise CellError(f"a list of {len(items)} texts; expected one text or a pair", field)


def number(value: Any) -> int | None:
    """The integer a label cell holds (`1`, `1.0`, `"1"`, `true`), or None."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 1e18 else None
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value.strip().split(".")[0])
    return None


def read_label(
    raw: Any,
    field: str,
    *,
    task: str,
    numeric: tuple[str, ...] | None,
    labels: tuple[str, ...] | None,
    label_map: Mapping[str, str],
) -> tuple[str | tuple[str, ...], str | None]:
    """A label or label set from a cell (a label, a list, JSON or a literal, or labels
    joined by '|') and how it was mapped: None (as written), "map" or "order". A number
    maps through `label_map` when one is given, else by the task's documented order
    `numeric` (label 0 first); without either it is refused."""
    items = listed(raw)
    parts: list[Any] = (
        list(raw) if isinstance(raw, list) else items if items is not None else str(raw).split("|")
    )
    out = []
    how = None
    for part in parts:
        key = str(part).strip()
        value = number(part)
        if key in label_map:
            label, how = label_map[key], "map"
        elif value is not None and str(value) in label_map:
            label, how = label_map[str(value)], "map"
        elif value is not None:
            label, how = _numbered(key, value, task, numeric, label_map, field), "order"
        else:
            label = key
        if labels and label not in labels:
            raise CellError(f"{label!r} is not one of {', '.join(labels)}", field)
        out.append(label)
    if not out or not all(out):
        raise CellError("empty label", field)
    return (out[0] if len(out) == 1 else tuple(dict.fromkeys(out))), how


def _numbered(
    key: str,
    value: int,
    task: str,
    numeric: tuple[str, ...] | None,
    label_map: Mapping[str, str],
    field: str,
) -> str:
    if label_map:
        given = ", ".join(f"{raw}={name}" for raw, name in label_map.items())
        raise CellError(f"{key!r} is a number not in --label-map ({given})", field)
    if numeric is None:
        raise CellError(
            f"{key!r} is a number and task {task!r} has no documented label order: "
            f"map it with --label-map {key}=NAME",
            field,
        )
    if not 0 <= value < len(numeric):
        raise CellError(
            f"{key!r} is a number outside {task}'s documented order ({order(numeric)}): "
            f"map it with --label-map",
            field,
        )
    return numeric[value]


def order(numeric: tuple[str, ...]) -> str:
    """A numeric label order as written in messages: `0=negative, 1=positive`."""
    return ", ".join(f"{index}={name}" for index, name in enumerate(numeric))
