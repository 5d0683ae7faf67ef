"""YAML documents loaded together with the line of every key and list item."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from testaug.core.errors import InputError, Problem, format_path

FieldPath = tuple[str | int, ...]


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
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
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
