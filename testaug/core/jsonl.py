"""Reading and writing records as JSONL: atomic writes, errors that name file and line."""

from __future__ import annotations

import json
import os
import re
import sys
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel, ValidationError

from testaug.core.errors import InputError, Problem, format_path

RecordT = TypeVar("RecordT", bound=BaseModel)


def write_jsonl(path: Path | str, records: Iterable[BaseModel]) -> int:
    """Write records one per line, atomically: the file appears whole or not at all.

    Returns the number of records written. A failure midway leaves any earlier
    file at `path` untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A fresh name opened exclusively (not mkstemp), so the file gets the usual umask mode.
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    count = 0
    try:
        with tmp.open("x", encoding="utf-8") as out:
            for record in records:
                out.write(record.model_dump_json())
                out.write("\n")
                count += 1
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return count


class _Input:
    """A text file opened for reading whose context turns a decoding failure into an
    InputError naming the file, the line and the byte offset."""

    def __init__(self, path: Path, handle: TextIO) -> None:
        self.path = path
        self.handle = handle

    def __enter__(self) -> TextIO:
        return self.handle

    def __exit__(self, kind: object, error: BaseException | None, trace: object) -> None:
        self.handle.close()
        if isinstance(error, UnicodeDecodeError):
            raise not_utf8(self.path, error) from error


def open_input(path: Path, newline: str | None = None) -> _Input:
    """Open a text file (UTF-8, a leading BOM skipped) for reading in a `with` block; raise
    InputError naming it when it cannot be read or is not UTF-8."""
    try:
        handle = path.open(encoding="utf-8-sig", newline=newline)
    except OSError as exc:
        raise InputError(Problem(f"cannot read: {exc.strerror}", file=path)) from exc
    return _Input(path, handle)


def read_input_text(path: Path | str) -> str:
    """A whole text file (UTF-8, a leading BOM skipped); InputError when it cannot be read."""
    with open_input(Path(path)) as handle:
        return handle.read()


def not_utf8(path: Path, error: UnicodeDecodeError) -> InputError:
    """The InputError for a file that is not UTF-8: its first bad line and byte offset."""
    offset = 0
    try:
        with path.open("rb") as raw:
            for number, line in enumerate(raw, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as bad:
                    where = offset + bad.start
                    message = f"not UTF-8 text (byte 0x{line[bad.start]:02x} at offset {where})"
                    return InputError(Problem(message, path, number))
                offset += len(line)
    except OSError:
        pass
    return InputError(Problem(f"not UTF-8 text ({error.reason})", path))


def json_lines(handle: TextIO) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) for each non-blank line; a line that is not JSON
    comes as its json.JSONDecodeError."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        yield number, parse_json(line)


_LONG_NUMBER = re.compile(rf"\d{{{sys.get_int_max_str_digits() + 1},}}")
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def parse_json(text: str) -> Any:
    """The JSON value of `text`, or a json.JSONDecodeError saying why it is none: also for
    nesting deeper than Python parses, a number longer than it converts, and an escaped
    lone surrogate (which is no text: it cannot be written back as UTF-8)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    except RecursionError:
        return json.JSONDecodeError("nested too deeply", text, 0)
    except ValueError:  # int() refuses more than sys.get_int_max_str_digits() digits
        found = _LONG_NUMBER.search(text)
        limit = sys.get_int_max_str_digits()
        return json.JSONDecodeError(
            f"a number of more than {limit:,} digits", text, found.start() if found else 0
        )
    found = _SURROGATE.search(text)
    if found and _has_lone_surrogate(value):
        return json.JSONDecodeError("a lone surrogate escape, not text", text, found.start())
    return value


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string in the JSON value holds a lone surrogate (no UTF-8 for it)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def read_jsonl(path: Path | str, model: type[RecordT]) -> Iterator[RecordT]:
    """Yield records from a JSONL file; raise InputError naming file, line and field."""
    for _, record in read_numbered_jsonl(path, model):
        yield record


def jsonl_files(path: Path | str) -> list[Path]:
    """The JSONL files a path names: the file itself, or a folder's *.jsonl files in name
    order (a data set kept in parts); InputError naming a folder that holds none."""
    path = Path(path)
    if not path.is_dir():
        return [path]
    parts = sorted(path.glob("*.jsonl"))
    if not parts:
        raise InputError(Problem("a folder without .jsonl files", file=path))
    return parts


def read_jsonl_parts(path: Path | str, model: type[RecordT]) -> Iterator[RecordT]:
    """Records from a JSONL file or from each file of a folder of parts, in name order;
    errors as `read_jsonl`."""
    for part in jsonl_files(path):
        yield from read_jsonl(part, model)


def read_numbered_jsonl(path: Path | str, model: type[RecordT]) -> Iterator[tuple[int, RecordT]]:
    """(line number, record) for each record of a JSONL file, read once; errors as
    `read_jsonl`."""
    path = Path(path)
    with open_input(path) as handle:
        for number, data in json_lines(handle):
            if isinstance(data, json.JSONDecodeError):
                raise InputError(
                    Problem(f"not valid JSON ({data.msg}, column {data.colno})", path, number)
                )
            try:
                yield number, model.model_validate(data)
            except ValidationError as exc:
                problems = [
                    Problem(err["msg"], path, number, format_path(err["loc"]) or None)
                    for err in exc.errors()
                ]
                raise InputError(problems) from exc


def read_json(path: Path | str, model: type[RecordT]) -> RecordT:
    """A JSON file (one object) as a record; raise InputError naming the file and the field,
    or the line where it is not valid JSON."""
    path = Path(path)
    with open_input(path) as handle:
        text = handle.read()
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            if err["type"] == "json_invalid":
                reason = str(err.get("ctx", {}).get("error", err["msg"]))
                found = re.search(r"line (\d+)", reason)
                line = int(found.group(1)) if found else None
                problems.append(Problem(f"not valid JSON ({reason})", path, line))
            else:
                problems.append(Problem(err["msg"], path, None, format_path(err["loc"]) or None))
        raise InputError(problems) from exc
