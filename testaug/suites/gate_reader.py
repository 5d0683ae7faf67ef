"""A CI gate read from YAML: a gate file (`--gate`) or a suite's `gate:` section, the
mapping `testaug.suites.gate` describes. Every problem names the file, the line and the
field; in a suite, a limit naming a capability or description the suite lacks is one, with
the closest names. Each limit keeps the file, line and field that set it."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from testaug.core.errors import InputError, Problem, close_names, did_you_mean, format_path
from testaug.core.yaml_source import FieldPath, YamlDocument, load_yaml
from testaug.suites.gate import EVERY, KINDS, GateConfig, Kind, Origin, Threshold, parse_scope

GATE_KEYS = ("max_error", "models", "max_unverified", "min_precision", "pool_test_types")
MODEL_KEYS = ("max_error",)


def load_gate_file(path: Path | str) -> GateConfig:
    """A gate file (YAML, the mapping a suite's `gate:` section holds); InputError naming the
    file, line and field of every problem."""
    document = load_yaml(Path(path))
    problems = [
        document.problem(key, f"duplicate key {key[-1]!r}") for key, _ in document.duplicate_keys
    ]
    config, found = read_gate(document.data, document, (), origin="file")
    problems += found
    if problems or config is None:
        raise InputError(problems or [document.problem((), "empty gate file")])
    return config


def suite_gate(suite: Mapping[str, Any] | Path | None) -> GateConfig | None:
    """The gate of a suite's `gate:` section (None: the suite has none): from the suite
    file, as the suite loader checked it, each limit with its line; or from the section's
    parsed data."""
    document = None
    if isinstance(suite, Path):
        document = load_yaml(suite)
        suite = document.data.get("gate") if isinstance(document.data, dict) else None
    if suite is None:
        return None
    config, problems = read_gate(suite, document, ("gate",), origin="suite")
    if problems:
        raise InputError(problems)
    return config


def read_gate(
    data: Any,
    document: YamlDocument | None,
    where: FieldPath,
    *,
    origin: Origin,
    known: Mapping[Kind, Iterable[str]] | None = None,
) -> tuple[GateConfig | None, list[Problem]]:
    """A gate from parsed YAML at `where` in `document`, and every problem found; with
    `known` (a suite's capabilities and descriptions), a limit naming a group it lacks is
    one too."""
    reader = _GateReader(document, origin, known)
    config = reader.gate(data, where)
    return (None if reader.problems else config), reader.problems


def unknown_name(kind: Kind, name: str, known: Iterable[str], what: str) -> str | None:
    """A message when a threshold names a group of `kind` that is not among `known` (with
    the closest names, or the kind the name's prefix misspells); None when it is known."""
    known = set(known)
    if name == EVERY or name in known:
        return None
    hints = close_names(name, known)
    prefix, _, rest = name.partition(":")
    if rest and not hints:
        hints = [f"{each}:{rest.strip()}" for each in close_names(prefix, KINDS, n=1)]
    return f"no {kind.replace('_', ' ')} named {name!r} in {what}" + did_you_mean(hints)


class _GateReader:
    def __init__(
        self,
        document: YamlDocument | None,
        origin: Origin,
        known: Mapping[Kind, Iterable[str]] | None = None,
    ) -> None:
        self.doc, self.origin, self.known = document, origin, known
        self.problems: list[Problem] = []

    def where(self, path: FieldPath) -> str:
        """The file, line and field of a limit, as `Threshold.where` keeps it."""
        field = format_path(path)
        if self.doc is None:
            return field
        line = self.doc.line_of(path)
        return f"{self.doc.path.name}{'' if line is None else f':{line}'} {field}"

    def problem(self, path: FieldPath, message: str) -> None:
        if self.doc is not None:
            self.problems.append(self.doc.problem(path, message))
        else:
            self.problems.append(Problem(message, field=format_path(path) or None))

    def gate(self, data: Any, where: FieldPath) -> GateConfig | None:
        if not isinstance(data, dict):
            self.problem(where, f"expected a mapping with {', '.join(GATE_KEYS)}")
            return None
        self._unknown(data, where, GATE_KEYS)
        thresholds = self._limits(data.get("max_error"), (*where, "max_error"), None)
        models = data.get("models") or {}
        if not isinstance(models, dict):
            self.problem((*where, "models"), "expected a mapping of model -> {max_error: ...}")
            models = {}
        for model, entry in models.items():
            at = (*where, "models", str(model))
            if not isinstance(entry, dict):
                self.problem(at, "expected a mapping with max_error")
                continue
            self._unknown(entry, at, MODEL_KEYS)
            thresholds += self._limits(entry.get("max_error"), (*at, "max_error"), str(model))
        unverified = self._number(data, (*where, "max_unverified"), 0.0, 100.0, "a percent")
        precision = self._number(data, (*where, "min_precision"), 0.0, 1.0, "a precision")
        if precision == 0.0:
            self.problem((*where, "min_precision"), "expected a precision above 0")
            precision = None
        pooled = data.get("pool_test_types")
        if pooled is not None and not isinstance(pooled, bool):
            self.problem((*where, "pool_test_types"), f"expected true or false, got {pooled!r}")
            pooled = None
        return GateConfig(
            thresholds=tuple(thresholds),
            max_unverified=unverified,
            min_precision=precision,
            pool_test_types=pooled,
        )

    def _limits(self, value: Any, where: FieldPath, model: str | None) -> list[Threshold]:
        if value is None:
            return []
        if not isinstance(value, dict):
            self.problem(where, "expected a mapping of [KIND:]NAME -> highest error rate (%)")
            return []
        out = []
        for key, limit in value.items():
            at = (*where, str(key))
            scope = parse_scope(str(key))
            if isinstance(scope, str):
                self.problem(at, scope)
                continue
            if isinstance(limit, bool) or not isinstance(limit, int | float):
                self.problem(at, f"expected a percent, 0 to 100, got {limit!r}")
                continue
            if not 0 <= limit <= 100:
                self.problem(at, f"expected a percent, 0 to 100, got {limit!r}")
                continue
            kind, name = scope
            if self.known is not None and kind in self.known:
                unknown = unknown_name(kind, name, self.known[kind], "this suite")
                if unknown is not None:
                    self.problem(at, unknown)
                    continue
            out.append(
                Threshold(
                    kind=kind,
                    name=name,
                    model=model,
                    max_error=limit,
                    origin=self.origin,
                    where=self.where(at),
                )
            )
        return out

    def _number(
        self, data: dict, where: FieldPath, low: float, high: float, what: str
    ) -> float | None:
        value = data.get(where[-1])
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            self.problem(where, f"expected {what}, {low:g} to {high:g}, got {value!r}")
            return None
        return float(value)

    def _unknown(self, data: dict, where: FieldPath, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; expected {', '.join(allowed)}"
            self.problem((*where, str(key)), f"unknown field {key!r}{hint}")
