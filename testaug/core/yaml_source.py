"""YAML documents loaded together with the line of every key and list item."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testaug.core.errors import InputError, Problem, format_path

FieldPath = tuple[str | int, ...]

MAX_DEPTH = 100
"""The deepest nesting of lists and mappings a YAML input may have."""
MAX_ALIAS_NODES = 10_000
"""The most nodes that aliases (`*name`) may repeat in one YAML input."""


class _HostileYaml(Exception):
    """Nesting or alias expansion past the limits, at a line."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message, self.line = message, line


class _GuardedLoader(yaml.SafeLoader):
    """A safe loader that refuses deep nesting and alias bombs while composing, before
    anything is built: the size of every node with its aliases expanded is counted once."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._depth = 0
        self._alias_nodes = 0
        self._sizes: dict[int, int] = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            return self._alias(super().compose_node(parent, index), event)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _HostileYaml(
                f"nested deeper than {MAX_DEPTH} levels of lists and mappings; flatten it",
                event.start_mark.line + 1,
            )
        node = super().compose_node(parent, index)
        self._depth -= 1
        sizes = self._sizes
        if isinstance(node, yaml.SequenceNode):
            sizes[id(node)] = 1 + sum(sizes[id(item)] for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            sizes[id(node)] = 1 + sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
        else:
            sizes[id(node)] = 1
        return node

    def _alias(self, node: yaml.Node, event: yaml.Event) -> yaml.Node:
        size = self._sizes.get(id(node))
        line = event.start_mark.line + 1
        if size is None:
            raise _HostileYaml("an alias refers to the list or mapping it is in", line)
        self._alias_nodes += size
        if self._alias_nodes > MAX_ALIAS_NODES:
            raise _HostileYaml(
                f"aliases (*name) repeat more than {MAX_ALIAS_NODES:,} values; "
                "write the values out or use fewer nested aliases",
                line,
            )
        return node

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """The value of a node; a scalar Python cannot hold (a number of more digits than
        it converts, a date that does not exist, a lone surrogate escape) is refused at
        its line."""
        try:
            value = super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:
            raise _HostileYaml(_unreadable(node, exc), node.start_mark.line + 1) from None
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise _HostileYaml(
                    f"{_excerpt(node)} holds a lone surrogate escape, not text",
                    node.start_mark.line + 1,
                ) from None
        return value


def _excerpt(node: yaml.Node) -> str:
    text = str(node.value)
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _unreadable(node: yaml.Node, error: Exception) -> str:
    """Why the value of a scalar node cannot be read."""
    if node.tag == "tag:yaml.org,2002:int":
        limit = sys.get_int_max_str_digits()
        reason = f"a number of more than {limit:,} digits"
    else:
        reason = str(error).splitlines()[0]
    return f"cannot read the value {_excerpt(node)}: {reason}"


@dataclass
class YamlDocument:
    """Parsed YAML data, the file it came from, and the line of every field path."""

    path: Path
    data: Any
    lines: dict[FieldPath, int] = field(default_factory=dict)
    duplicate_keys: list[tuple[FieldPath, int]] = field(default_factory=list)

    def line_of(self, path: FieldPath) -> int | None:
        """The line of the field, or of its nearest enclosing field that has one."""
        for end in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None

    def problem(self, path: FieldPath, message: str) -> Problem:
        """A problem located at a field of this document."""
        return Problem(message, self.path, self.line_of(path), format_path(path) or None)


def load_yaml(path: Path) -> YamlDocument:
    """Load a YAML file, recording lines; raise InputError on unreadable or invalid YAML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InputError(Problem("file not found", path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Problem(f"cannot read: {exc}", path)) from exc
    try:
        loader = _GuardedLoader(text)
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        line = text.count("\n", 0, exc.position) + 1
        message = f"invalid YAML: character {exc.character:#06x} is not allowed in YAML"
        raise InputError(Problem(message, path, line)) from None
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except _HostileYaml as exc:
        raise InputError(Problem(exc.message, path, exc.line)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        reason = getattr(exc, "problem", None) or str(exc)
        raise InputError(
            Problem(f"invalid YAML: {reason}", path, mark.line + 1 if mark else None)
        ) from exc
    finally:
        loader.dispose()
    document = YamlDocument(path=path, data=data)
    if node is not None:
        _record_lines(node, (), document)
    return document


def _record_lines(node: yaml.Node, path: FieldPath, document: YamlDocument) -> None:
    document.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = (*path, key)
            if key in seen:
                document.duplicate_keys.append((child, key_node.start_mark.line + 1))
            seen.add(key)
            document.lines[child] = key_node.start_mark.line + 1
            _record_lines(value_node, child, document)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, (*path, index), document)
