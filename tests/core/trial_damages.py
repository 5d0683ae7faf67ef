"""Damages for the bad-input trials: a valid file's bytes turned into bad ones (`DAMAGES`
for the fixed trial table; the factories for tests/core/test_reader_fuzz.py to draw from)."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable
from dataclasses import dataclass

BOM = b"\xef\xbb\xbf"

Damage = Callable[[bytes, str], bytes]  # (valid bytes, file suffix) -> damaged bytes


@dataclass(frozen=True)
class Described:
    """A damage that shows as the call that made it (hypothesis prints it on a failure)."""

    call: str
    damage: Damage

    def __call__(self, data: bytes, suffix: str) -> bytes:
        return self.damage(data, suffix)

    def __repr__(self) -> str:
        return self.call


def described(factory: Callable[..., Damage]) -> Callable[..., Described]:
    """`factory` whose damages show as `factory(args)`, long arguments shortened."""

    def short(value: object) -> str:
        text = repr(value)
        return text if len(text) <= 40 else f"{text[:30]}...({len(text):,} chars)"

    @functools.wraps(factory)
    def make(*args: object) -> Described:
        return Described(f"{factory.__name__}({', '.join(map(short, args))})", factory(*args))

    return make


def _insert(data: bytes, where: float, payload: bytes) -> bytes:
    at = int(len(data) * where)
    return data[:at] + payload + data[at:]


@described
def insert_bytes(where: float, payload: bytes) -> Damage:
    """`payload` inserted at a fraction `where` of the file."""
    return lambda data, suffix: _insert(data, where, payload)


@described
def truncate(where: float) -> Damage:
    """The file cut at a fraction `where` of its bytes."""
    return lambda data, suffix: data[: int(len(data) * where)]


@described
def huge_line(where: float, size: int = 2_000_000) -> Damage:
    """A line of `size` characters inserted at the start of the line at `where`."""

    def damage(data: bytes, suffix: str) -> bytes:
        at = data.rfind(b"\n", 0, int(len(data) * where)) + 1
        return data[:at] + b"x" * size + b"\n" + data[at:]

    return damage


@described
def with_bom(then: Damage | None = None) -> Damage:
    """A UTF-8 BOM before the file (damaged by `then` first, when given)."""
    return lambda data, suffix: BOM + (then(data, suffix) if then else data)


@described
def replace_value(index: int, value: object) -> Damage:
    """The `index`-th value of the file's first record (depth first, modulo their count;
    a cell of its first data row for a CSV file) replaced by `value`. Written as JSON,
    YAML or a CSV cell (`value` as text) according to the suffix."""

    if isinstance(value, Long):
        value = str(value)

    def damage(data: bytes, suffix: str) -> bytes:
        text = data.decode("utf-8-sig")
        if suffix == ".csv":
            return _replace_cell(text, index, value).encode()
        if suffix == ".yaml":
            import yaml

            tree = yaml.safe_load(text)
            return yaml.safe_dump(_replace_in(tree, index, value), allow_unicode=True).encode()
        if suffix == ".jsonl":
            lines = text.splitlines()
            lines[0] = json.dumps(_replace_in(json.loads(lines[0]), index, value))
            return ("\n".join(lines) + "\n").encode()
        return json.dumps(_replace_in(json.loads(text), index, value), indent=1).encode()

    return damage


@described
def raw_value(index: int, raw: str) -> Damage:
    """The `index`-th value of the first record replaced by `raw` JSON/YAML text as is
    (deep nesting, a 5,000-digit number, an escaped lone surrogate)."""
    marker = "\u2603marker\u2603"

    def damage(data: bytes, suffix: str) -> bytes:
        if suffix == ".csv":
            return _replace_cell(data.decode("utf-8-sig"), index, raw).encode()
        marked = replace_value(index, marker)(data, suffix).decode()
        quoted = json.dumps(marker) if suffix != ".yaml" else marker
        return marked.replace(quoted, raw, 1).encode()

    return damage


def _paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every path into a JSON value, depth first (the root excluded)."""
    found: list[tuple] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, child in items:
        found.append((*prefix, key))
        found.extend(_paths(child, (*prefix, key)))
    return found


def _replace_in(tree: object, index: int, value: object) -> object:
    """`tree` (a JSON value; a list's first item stands for the record) with the
    `index`-th path replaced by `value`; the whole tree when it has no path."""
    paths = _paths(tree)
    if not paths:
        return value
    path = paths[index % len(paths)]
    parent = tree
    for key in path[:-1]:
        parent = parent[key]  # type: ignore[index]
    parent[path[-1]] = value  # type: ignore[index]
    return tree


def _replace_cell(text: str, index: int, value: object) -> str:
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2 or not rows[1]:
        return text
    row = rows[1]
    row[index % len(row)] = value if isinstance(value, str) else json.dumps(value)
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def swap_type(value: object) -> object:
    """A value of another JSON type than `value`."""
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return "seven"
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return {"x": 1}
    if isinstance(value, dict):
        return [1, 2]
    return [None]


@described
def wrong_type(where: float) -> Damage:
    """The value at a fraction `where` of the first record's paths replaced by a value of
    another type (a CSV cell by an empty one)."""

    def damage(data: bytes, suffix: str) -> bytes:
        text = data.decode("utf-8-sig")
        if suffix == ".csv":
            return _replace_cell(text, int(where * 4), "").encode()
        tree = _first_record(text, suffix)
        paths = _paths(tree)
        index = int(where * len(paths)) if paths else 0
        current = _get(tree, paths[index]) if paths else tree
        return replace_value(index, swap_type(current))(data, suffix)

    return damage


def _first_record(text: str, suffix: str) -> object:
    if suffix == ".yaml":
        import yaml

        return yaml.safe_load(text)
    if suffix == ".jsonl":
        return json.loads(text.splitlines()[0])
    return json.loads(text)


def _get(tree: object, path: tuple) -> object:
    for key in path:
        tree = tree[key]  # type: ignore[index]
    return tree


crlf = Described("crlf", lambda data, suffix: data.replace(b"\n", b"\r\n"))
twice = Described("twice", lambda data, suffix: data + data)  # every record twice


class Long(str):
    """A long string that shows as its length and first characters."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self):,} characters: {str(self[:12])!r}...>"


HUGE_TEXT = Long("so " * 400_000)  # 1,200,000 characters: over what spaCy parses
DEEP = Long("[" * 100_000)
HUGE_NUMBER = Long("9" * 5_000)  # over Python's 4,300-digit limit for int()

# The fixed trial table's damages, by name.
DAMAGES: dict[str, Damage] = {
    "empty file": truncate(0.0),
    "truncated in the middle": truncate(0.5),
    "last bytes cut off": truncate(0.99),
    "BOM and CRLF line ends": with_bom(crlf),
    "BOM, then truncated": with_bom(truncate(0.6)),
    "random bytes": insert_bytes(0.4, random.Random(17).randbytes(24)),
    "Latin-1 bytes": insert_bytes(0.5, b"caf\xe9 na\xefve"),
    "an encoded surrogate": insert_bytes(0.5, b"\xed\xa0\x80"),
    "NUL bytes": insert_bytes(0.5, b"\x00\x00\x00"),
    "a 2,000,000-character line": huge_line(0.5),
    "wrong type: first field": wrong_type(0.0),
    "wrong type: a middle field": wrong_type(0.5),
    "wrong type: last field": wrong_type(0.99),
    "a 1,200,000-character value": replace_value(3, HUGE_TEXT),
    "100,000 nested brackets": raw_value(-1, DEEP),
    "a 5,000-digit number": raw_value(-1, HUGE_NUMBER),
    "an escaped lone surrogate": raw_value(3, '"\\ud800"'),
    "NaN for a middle value": raw_value(12, "NaN"),
    "duplicated content": twice,
}
