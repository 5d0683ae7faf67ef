"""A CI gate's configuration: the highest error rates per capability, description or test
type (`Threshold`), and demands on the evidence (`GateConfig`), read from a suite's `gate:`
section, a gate file (YAML) or `--max-error` flags; flags win over the file, the file over
the suite (`merge_gates`). Bad input names the file, the line and the field. The checks
themselves are `testaug.evaluation.gate`.

A gate, in a suite's `gate:` section or as a whole gate file::

    max_error:             # highest error rate in percent; keys as --max-error takes them
      "*": 20              # every capability not named
      Negation: 10         # a capability
      "description:A negative sentence with a negated positive verb.": 5
      "test_type:INV": 15
    models:                # limits for one model only (its spec, as passed to --model)
      vader:
        max_error: {Negation: 30}
    max_unverified: 25     # percent of the cases under the headline rates
    min_precision: 0.9     # the ranker's acceptance rules must target at least this
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem, format_path
from testaug.core.records import Record
from testaug.core.yaml_source import FieldPath, YamlDocument, load_yaml

Percent = Annotated[float, Field(ge=0.0, le=100.0, allow_inf_nan=False)]
Kind = Literal["capability", "description", "test_type"]
KINDS: tuple[Kind, ...] = ("capability", "description", "test_type")
Origin = Literal["suite", "file", "flag"]
EVERY = "*"


class Threshold(Record):
    """The highest error rate (percent) a group may have: a capability, a description (its
    text or id) or a test type, `*` for every one of that kind not named; for one model or
    (None) every model; with where it was set."""

    kind: Kind = "capability"
    name: str = EVERY
    model: str | None = None
    max_error: Percent
    origin: Origin = "flag"

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.kind, self.name, self.model)

    def describe(self) -> str:
        scope = self.name if self.kind == "capability" else f"{self.kind}:{self.name}"
        return scope + (f" for {self.model}" if self.model else "")


class GateConfig(Record):
    """What a gate demands: thresholds, a maximum share (percent) of unverified cases under
    the headline rates, a least precision (0..1) of the ranker's acceptance rules, and (for
    test trees) no topic newly failing."""

    thresholds: tuple[Threshold, ...] = ()
    max_unverified: Percent | None = None
    min_precision: float | None = Field(default=None, gt=0.0, le=1.0)
    fail_on_new_failures: bool = False

    @property
    def empty(self) -> bool:
        """Whether the gate demands nothing."""
        return not self.thresholds and self.max_unverified is None and not self.demands_more

    @property
    def demands_more(self) -> bool:
        return self.min_precision is not None or self.fail_on_new_failures

    def over(self, base: GateConfig) -> GateConfig:
        """This gate laid over `base`: a threshold of the same kind, name and model replaces
        base's, and the values set here win."""
        mine = {t.key for t in self.thresholds}
        kept = tuple(t for t in base.thresholds if t.key not in mine)
        return GateConfig(
            thresholds=kept + self.thresholds,
            max_unverified=_first(self.max_unverified, base.max_unverified),
            min_precision=_first(self.min_precision, base.min_precision),
            fail_on_new_failures=self.fail_on_new_failures or base.fail_on_new_failures,
        )


def merge_gates(*gates: GateConfig | None) -> GateConfig:
    """Gates merged in order of precedence, lowest first (suite, file, flags)."""
    merged = GateConfig()
    for gate in gates:
        if gate is not None:
            merged = gate.over(merged)
    return merged


def _first(value: float | None, fallback: float | None) -> float | None:
    return value if value is not None else fallback


GATE_KEYS = ("max_error", "models", "max_unverified", "min_precision")
MODEL_KEYS = ("max_error",)
TEST_TYPES = ("MFT", "INV", "DIR")
FLAG_SYNTAX = "[KIND:]NAME=PERCENT[@MODEL]"
_FLAG = re.compile(
    r"^(?P<scope>.+?)\s*=\s*(?P<limit>[0-9]+(?:\.[0-9]+)?)\s*%?(?:@(?P<model>.+))?$", re.S
)


def parse_scope(key: str) -> tuple[Kind, str] | str:
    """A threshold's kind and name from `NAME`, `*`, `capability:NAME`, `description:TEXT`
    or `test_type:TYPE`; a message when it cannot be one."""
    kind: Kind = "capability"
    name = key
    for each in KINDS:
        if key.startswith(f"{each}:"):
            kind, name = each, key[len(each) + 1 :]
    name = name.strip()
    if not name:
        return f"no name in {key!r}: expected {FLAG_SYNTAX.split('=')[0]}"
    if kind == "test_type" and name != EVERY:
        if name.upper() not in TEST_TYPES:
            return f"unknown test type {name!r}: expected one of {', '.join(TEST_TYPES)} or *"
        name = name.upper()
    return kind, name


def parse_max_error(value: str) -> Threshold:
    """A threshold from a `--max-error` flag: `Negation=10`, `*=20`, `description:TEXT=5`,
    `test_type:INV=15`, any of them with `@MODEL` after the percent for one model."""
    match = _FLAG.match(value.strip())
    if match is None:
        raise InputError(
            Problem(
                f"cannot read {value!r}: expected {FLAG_SYNTAX}, e.g. Negation=10 or *=20",
                field="--max-error",
            )
        )
    scope = parse_scope(match["scope"])
    if isinstance(scope, str):
        raise InputError(Problem(scope, field="--max-error"))
    limit = float(match["limit"])
    if limit > 100:
        raise InputError(Problem(f"{value!r}: a percent is at most 100", field="--max-error"))
    model = match["model"].strip() if match["model"] else None
    return Threshold(kind=scope[0], name=scope[1], model=model, max_error=limit, origin="flag")


def flag_gate(
    max_error: Iterable[str] = (),
    *,
    max_unverified: float | None = None,
    min_precision: float | None = None,
    fail_on_new_failures: bool = False,
) -> GateConfig:
    """The gate that flags set."""
    thresholds = tuple(parse_max_error(value) for value in max_error)
    problems = []
    if max_unverified is not None and not 0 <= max_unverified <= 100:
        problems.append(Problem("expected a percent, 0 to 100", field="--max-unverified"))
    if min_precision is not None and not 0 < min_precision <= 1:
        problems.append(Problem("expected a precision, 0 < p <= 1", field="--min-precision"))
    if problems:
        raise InputError(problems)
    return GateConfig(
        thresholds=thresholds,
        max_unverified=max_unverified,
        min_precision=min_precision,
        fail_on_new_failures=fail_on_new_failures,
    )


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


def suite_gate(data: Mapping[str, Any] | None) -> GateConfig | None:
    """The gate of a suite's `gate:` section, as the suite loader checked it."""
    if data is None:
        return None
    config, problems = read_gate(data, None, ("gate",), origin="suite")
    if problems:
        raise InputError(problems)
    return config


def read_gate(
    data: Any, document: YamlDocument | None, where: FieldPath, *, origin: Origin
) -> tuple[GateConfig | None, list[Problem]]:
    """A gate from parsed YAML at `where` in `document`, and every problem found."""
    reader = _GateReader(document, origin)
    config = reader.gate(data, where)
    return (None if reader.problems else config), reader.problems


class _GateReader:
    def __init__(self, document: YamlDocument | None, origin: Origin) -> None:
        self.doc, self.origin = document, origin
        self.problems: list[Problem] = []

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
        return GateConfig(
            thresholds=tuple(thresholds), max_unverified=unverified, min_precision=precision
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
            out.append(
                Threshold(
                    kind=scope[0], name=scope[1], model=model, max_error=limit, origin=self.origin
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
