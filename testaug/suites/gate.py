"""A CI gate's configuration: the highest error rates per capability, description or test
type (`Threshold`), and demands on the evidence (`GateConfig`), read from a suite's `gate:`
section, a gate file (YAML) or `--max-error` flags. Flags win over the file, the file over
the suite: a group's limit is the most specific one of the highest place that sets one for
it (`ranked_limits`). Bad flags name the flag; the YAML is read by
`testaug.suites.gate_reader`, naming the file, the line and the field. The checks
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
    pool_test_types: false # true: a capability's or description's limit on its rate over
                           # every test type, not on each test type's rate
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem, close_names, did_you_mean
from testaug.core.records import Record

Percent = Annotated[float, Field(ge=0.0, le=100.0, allow_inf_nan=False)]
Kind = Literal["capability", "description", "test_type"]
KINDS: tuple[Kind, ...] = ("capability", "description", "test_type")
Origin = Literal["suite", "file", "flag"]
EVERY = "*"
PLACES: dict[Origin, str] = {"flag": "flag", "file": "gate file", "suite": "suite"}
PRECEDENCE: tuple[Origin, ...] = ("flag", "file", "suite")  # who wins, first to last


class Threshold(Record):
    """The highest error rate (percent) a group may have: a capability, a description (its
    text or id) or a test type, `*` for every one of that kind not named; for one model or
    (None) every model; with where it was set."""

    kind: Kind = "capability"
    name: str = EVERY
    model: str | None = None
    max_error: Percent
    origin: Origin = "flag"
    where: str = ""  # the flag as typed, or the file, line and field that set it

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.kind, self.name, self.model)

    def describe(self) -> str:
        scope = self.name if self.kind == "capability" else f"{self.kind}:{self.name}"
        return scope + (f" for {self.model}" if self.model else "")

    @property
    def source(self) -> str:
        """Where the limit was set: `flag --max-error Negation=10`, `suite suite.yaml:14
        gate.models.vader.max_error.Negation`, `gate file gate.yaml:2 max_error.*`."""
        return f"{PLACES[self.origin]} {self.where or self.describe()}"

    def stated(self) -> str:
        """The limit and where it was set, as messages quote it."""
        return f"{self.max_error:g}% ({self.source})"


class GateConfig(Record):
    """What a gate demands: thresholds, a maximum share (percent) of unverified cases under
    the headline rates, a least precision (0..1) of the ranker's acceptance rules, and (for
    test trees) no topic newly failing."""

    thresholds: tuple[Threshold, ...] = ()
    max_unverified: Percent | None = None
    min_precision: float | None = Field(default=None, gt=0.0, le=1.0)
    fail_on_new_failures: bool = False
    pool_test_types: bool | None = None  # None: not set (each test type on its own)

    @property
    def empty(self) -> bool:
        """Whether the gate demands nothing."""
        return not self.thresholds and self.max_unverified is None and not self.demands_more

    @property
    def demands_more(self) -> bool:
        return self.min_precision is not None or self.fail_on_new_failures

    def over(self, base: GateConfig) -> GateConfig:
        """This gate laid over `base`: the values set here win; the thresholds of both are
        kept, each with its origin, so a check can say which won (`ranked_limits`) and what
        it overruled."""
        return GateConfig(
            thresholds=base.thresholds + self.thresholds,
            max_unverified=_first(self.max_unverified, base.max_unverified),
            min_precision=_first(self.min_precision, base.min_precision),
            fail_on_new_failures=self.fail_on_new_failures or base.fail_on_new_failures,
            pool_test_types=_first(self.pool_test_types, base.pool_test_types),
        )

    @property
    def pooled(self) -> bool:
        """Whether a capability's or description's limit applies to its rate over every
        test type (else to each test type's rate)."""
        return bool(self.pool_test_types)


def merge_gates(*gates: GateConfig | None) -> GateConfig:
    """Gates merged in order of precedence, lowest first (suite, file, flags)."""
    merged = GateConfig()
    for gate in gates:
        if gate is not None:
            merged = gate.over(merged)
    return merged


def _first(value: Any, fallback: Any) -> Any:
    return value if value is not None else fallback


def ranked_limits(
    thresholds: Iterable[Threshold], kind: Kind, names: Sequence[str], model: str
) -> list[Threshold]:
    """The thresholds that apply to a group (its name or id, or `*`; this model or every
    model), the one that wins first: a flag before the gate file before the suite; within
    one place, the group's own name before `*`, and a limit for this model before one for
    every model."""
    ranked = []
    for index, threshold in enumerate(thresholds):
        if threshold.kind != kind or threshold.model not in (model, None):
            continue
        if threshold.name in names:
            specific = 0
        elif threshold.name == EVERY:
            specific = 1
        else:
            continue
        place = PRECEDENCE.index(threshold.origin)
        # the same limit given twice in one place: the later one wins
        ranked.append(((place, specific, threshold.model is None, -index), threshold))
    return [threshold for _, threshold in sorted(ranked, key=lambda pair: pair[0])]


def outranked(ranked: Sequence[Threshold]) -> list[Threshold]:
    """What the winning threshold overrules that a user should hear of: the same limit
    given earlier in its own place, and the limit each lower place would have set."""
    if not ranked:
        return []
    winner = ranked[0]
    lost = [t for t in ranked[1:] if t.key == winner.key and t.origin == winner.origin]
    best: dict[Origin, Threshold] = {}
    for threshold in ranked[1:]:
        if threshold.origin != winner.origin:
            best.setdefault(threshold.origin, threshold)
    return lost + list(best.values())


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
            return f"unknown test type {name!r}: expected one of {', '.join(TEST_TYPES)} or *" + (
                did_you_mean(close_names(name, TEST_TYPES, n=1, cutoff=0.3))
            )
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
    return Threshold(
        kind=scope[0],
        name=scope[1],
        model=model,
        max_error=limit,
        origin="flag",
        where=f"--max-error {value.strip()}",
    )


def flag_gate(
    max_error: Iterable[str] = (),
    *,
    max_unverified: float | None = None,
    min_precision: float | None = None,
    fail_on_new_failures: bool = False,
    pool_test_types: bool | None = None,
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
        pool_test_types=pool_test_types,
    )
