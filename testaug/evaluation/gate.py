"""A CI gate on an evaluation: maximum error rates per capability, description or test type
(for one model or all), a maximum share of unverified evidence, and acceptance rules at a
stated precision. A capability's or description's limit applies to each of its test types'
rates (the cells of the capability x test type table), or to its rate over every test type
when the gate pools them. `check_gate` is pure: a summary and a `GateConfig` in, a
`GateResult` out, every check listed (with the rate it gated and where its limit was set)
and the failed ones as breaches. The gate's configuration and where it
comes from (a suite's `gate:` section, a gate file, flags) is `testaug.suites.gate`; the
JUnit XML that CI systems read is `testaug.evaluation.gate_junit`; a test tree's gate is
`testaug.adaptive.tree_gate`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from testaug.core.errors import close_names, did_you_mean
from testaug.core.records import AcceptanceRule, Record
from testaug.evaluation.failures import FailureRate
from testaug.suites.gate import (
    EVERY,
    KINDS,
    GateConfig,
    Kind,
    Origin,
    Threshold,
    merge_gates,
    outranked,
    ranked_limits,
)
from testaug.suites.provenance import Evidence, is_verified

if TYPE_CHECKING:
    from testaug.evaluation.summary import EvaluationSummary, ModelSummary

CheckKind = Literal[
    "capability", "description", "test_type", "unverified", "precision", "newly failing", "unknown"
]
UNRESOLVED = ("ranker", "expansion-unverified", "llm-untraced")  # what no person vouched for
POOLED = "all test types"  # the test type of a rate a pooled gate takes over every one

__all__ = [
    "EVERY",
    "Breach",
    "Check",
    "GateConfig",
    "GateResult",
    "Threshold",
    "check_gate",
    "merge_gates",
]


class Check(Record):
    """One thing the gate looked at for one model: a group's rate (of one test type, or of
    `POOLED`; None: a tree's topic) against its limit (None: no limit, shown only), or a
    demand on the evidence. `source` says where the limit was set
    and `overrules` the limits of lower places it won over; `failure` says why it failed."""

    model: str
    kind: CheckKind
    classname: str  # the capability, or what else the check is about (JUnit's classname)
    name: str
    test_type: str | None = None
    rate: float | None = None
    n: int = 0
    failed: int = 0
    evidence: Evidence | None = None  # the cases the rate counts: verified ones, or all
    limit: float | None = None
    origin: Origin | None = None
    source: str | None = None
    overrules: tuple[str, ...] = ()
    failure: str | None = None

    @property
    def title(self) -> str:
        """The check's name, with its test type where it is a capability's or description's."""
        if self.kind not in ("capability", "description") or self.test_type is None:
            return self.name
        return f"{self.name} ({self.test_type})"


class Breach(Record):
    """A check that failed: which model and group (and test type), the rate it gated, the
    limit, where the limit was set and what it overruled, and why it failed."""

    model: str
    kind: CheckKind
    name: str
    test_type: str | None = None
    rate: float | None
    n: int = 0
    failed: int = 0
    limit: float | None
    origin: Origin | None
    source: str | None = None
    overrules: tuple[str, ...] = ()
    message: str


class GateResult(Record):
    """Every check (per model: each description, then each limit and demand) and the
    breaches among them; it passes when there is none."""

    config: GateConfig
    checks: tuple[Check, ...]
    breaches: tuple[Breach, ...]

    @property
    def passed(self) -> bool:
        return not self.breaches

    def overrulings(self) -> list[tuple[str, str]]:
        """Each (limit that won, limit it overruled) pair the checks met, once."""
        pairs = (
            (check.source, lost)
            for check in self.checks
            if check.source is not None
            for lost in check.overrules
        )
        return list(dict.fromkeys(pairs))


def gate_result(config: GateConfig, checks: Sequence[Check]) -> GateResult:
    breaches = tuple(
        Breach(
            model=c.model,
            kind=c.kind,
            name=c.name,
            test_type=c.test_type,
            rate=c.rate,
            n=c.n,
            failed=c.failed,
            limit=c.limit,
            origin=c.origin,
            source=c.source,
            overrules=c.overrules,
            message=c.failure,
        )
        for c in checks
        if c.failure is not None
    )
    return GateResult(config=config, checks=tuple(checks), breaches=breaches)


def check_gate(
    summary: EvaluationSummary,
    config: GateConfig,
    *,
    rules: Sequence[AcceptanceRule] | None = None,
    left_out: Mapping[str, Collection[str]] | None = None,
) -> GateResult:
    """The gate's checks on an evaluation summary: each model's headline rate per capability
    (on the headline's evidence), its rate per description and test type (over every case
    counted), a capability's and a description's for each test type unless the gate pools
    them; the share of unverified cases under its headline, and the `rules` (None: not
    known) the ranker accepted its cases under. A threshold that names no group or model
    is a breach too, unless the group is one the run left out on purpose (`left_out`, by
    kind: the capabilities a run was not asked for, and their descriptions)."""
    checks: list[Check] = []
    used: set[tuple[str, str, str | None]] = set()
    for model in summary.models:
        checks += _rate_checks(model, config, used)
        if config.max_unverified is not None:
            checks.append(_unverified_check(model, config.max_unverified))
        if config.min_precision is not None:
            checks.append(_precision_check(model, config.min_precision, rules))
    names = {m.model for m in summary.models}
    groups = {kind: _known(summary, kind) for kind in KINDS}
    checks += unmatched(config.thresholds, used, names, groups, left_out)
    return gate_result(config, checks)


class Group(Record):
    """A group of a model's cases a limit may apply to: its kind, the names a threshold may
    give it (shown name first), its classname, its test type (or `POOLED`) and rate, and
    the evidence the rate counts."""

    kind: Kind
    names: tuple[str, ...]
    classname: str
    test_type: str = POOLED
    rate: FailureRate
    evidence: Evidence = "all"


def _groups(model: ModelSummary, kind: Kind, pooled: bool = True) -> list[Group]:
    """A model's groups of one kind: a capability or description once (pooled) or once per
    test type; a test type once."""
    if kind == "test_type":
        return [
            Group(kind=kind, names=(name,), classname="test type", test_type=name, rate=rate)
            for name, rate in model.by_test_type.items()
        ]
    whole = _capabilities(model) if kind == "capability" else _descriptions(model)
    if pooled:
        return [group for group, _ in whole]
    return [each for group, cells in whole for each in _per_test_type(group, cells)]


def _capabilities(model: ModelSummary) -> list[tuple[Group, dict[str, FailureRate]]]:
    """Each capability's headline rate (before provenance was kept: on all cases), with its
    rates per test type on the same evidence."""
    head = model.headline
    if head is None:
        rates, cells, evidence = model.by_capability, model.matrix, "all"
    else:
        rates, cells, evidence = head.by_capability, head.matrix, head.evidence
    return [
        (
            Group(kind="capability", names=(name,), classname=name, rate=rate, evidence=evidence),
            cells.get(name, {}),
        )
        for name, rate in rates.items()
    ]


def _descriptions(model: ModelSummary) -> list[tuple[Group, dict[str, FailureRate]]]:
    """Each description's rate on all cases (named by its text, then its id; its capability
    as classname), with its rates per test type."""
    capabilities = sorted(model.by_capability, key=len, reverse=True)
    out = []
    for did, rate in model.by_description.items():
        capability = next((c for c in capabilities if rate.name.startswith(f"{c}: ")), "")
        text = rate.name[len(capability) + 2 :] if capability else rate.name
        group = Group(kind="description", names=(text, did), classname=capability, rate=rate)
        out.append((group, model.description_matrix.get(did, {})))
    return out


def _per_test_type(group: Group, cells: Mapping[str, FailureRate]) -> list[Group]:
    """A group once per test type; whole where the summary has no rates per test type (it
    was written before they were kept)."""
    if not cells:
        return [group]
    return [group.model_copy(update={"test_type": t, "rate": cell}) for t, cell in cells.items()]


def _known(summary: EvaluationSummary, kind: Kind) -> set[str]:
    """Every name a threshold of this kind may use (descriptions: text or id)."""
    return {name for model in summary.models for g in _groups(model, kind) for name in g.names}


def _rate_checks(
    model: ModelSummary, config: GateConfig, used: set[tuple[str, str, str | None]]
) -> list[Check]:
    checks = []
    for kind in ("description", "capability", "test_type"):
        for group in _groups(model, kind, config.pooled):
            ranked = ranked_limits(config.thresholds, kind, group.names, model.model)
            if not ranked and kind != "description":
                continue  # descriptions are listed even without a limit (one JUnit case each)
            used.update(threshold.key for threshold in ranked)
            checks.append(_rate_check(model.model, group, ranked))
    return checks


def _rate_check(model: str, group: Group, ranked: Sequence[Threshold]) -> Check:
    threshold = ranked[0] if ranked else None
    rate = group.rate
    limit = threshold.max_error if threshold is not None else None
    overrules = tuple(lost.stated() for lost in outranked(ranked))
    failure = None
    if threshold is not None and rate.rate is not None and rate.rate > threshold.max_error:
        scope = group.kind.replace("_", " ") + f" {group.names[0]}"
        if group.kind != "test_type":
            scope += f", {group.test_type}"
        cases = "verified cases" if group.evidence == "verified" else "cases"
        failure = (
            f"{scope}: error rate {rate.rate:.1f}% ({rate.failed}/{rate.n} {cases}) above the "
            f"limit {threshold.stated()}"
            + (f", which overrules {' and '.join(overrules)}" if overrules else "")
        )
    return Check(
        model=model,
        kind=group.kind,
        classname=group.classname,
        name=group.names[0],
        test_type=group.test_type,
        rate=rate.rate,
        n=rate.n,
        failed=rate.failed,
        evidence=group.evidence,
        limit=limit,
        origin=threshold.origin if threshold else None,
        source=threshold.source if threshold else None,
        overrules=overrules,
        failure=failure,
    )


def unverified_share(model: ModelSummary) -> tuple[int, int] | None:
    """(unverified, counted) cases under a model's headline rates; None when the summary
    records no provenance (written before it was kept)."""
    head = model.headline
    if head is not None:
        return head.unverified, head.overall.n
    if not model.by_provenance:
        return None
    unverified = sum(r.n for p, r in model.by_provenance.items() if not is_verified(p))
    return unverified, model.overall.n


def _unverified_check(model: ModelSummary, limit: float) -> Check:
    share = unverified_share(model)
    base = {"model": model.model, "kind": "unverified", "classname": "evidence"}
    if share is None:
        return Check(
            **base,
            name="unverified cases",
            limit=limit,
            failure="the summary records no provenance: cannot tell verified cases apart",
        )
    unverified, counted = share
    rate = 100.0 * unverified / counted if counted else 0.0
    failure = None
    if rate > limit:
        failure = (
            f"{unverified:,} of {counted:,} cases under the headline rates are unverified "
            f"({rate:.1f}%), above the limit {limit:g}%"
        )
    return Check(
        **base,
        name="unverified cases",
        rate=rate,
        n=counted,
        failed=unverified,
        limit=limit,
        failure=failure,
    )


def _precision_check(
    model: ModelSummary, least: float, rules: Sequence[AcceptanceRule] | None
) -> Check:
    """The rules behind ranker-accepted cases under the headline rates must target at least
    `least`; with none of those cases there is nothing to demand."""
    head = model.headline
    resting = 0
    if head is None or head.evidence == "all":
        resting = sum(model.by_provenance[p].n for p in UNRESOLVED if p in model.by_provenance)
    base = {
        "model": model.model,
        "kind": "precision",
        "classname": "evidence",
        "name": "acceptance precision",
        "limit": 100.0 * least,
        "n": resting,
    }
    if not resting:
        return Check(**base)
    if not rules:
        return Check(
            **base,
            failure=f"{resting:,} cases the ranker accepted count, and no acceptance rule "
            "is known to check their precision",
        )
    low = min(rules, key=lambda rule: rule.target)
    if low.target < least:
        return Check(
            **base,
            rate=100.0 * low.target,
            failure=f"group {low.group}: accepted at precision {low.target:.0%}, below the "
            f"required {least:.0%}",
        )
    return Check(**base, rate=100.0 * low.target)


def unmatched(
    thresholds: Iterable[Threshold],
    used: set[tuple[str, str, str | None]],
    models: set[str],
    groups: Mapping[str, set[str]],
    left_out: Mapping[str, Collection[str]] | None = None,
) -> list[Check]:
    """A breach per threshold that names a model or group the evaluation lacks, with the
    closest names: a typo must not pass the gate unchecked (a group left out on purpose
    is not a typo)."""
    checks = []
    for threshold in thresholds:
        if threshold.key in used or threshold.name in (left_out or {}).get(threshold.kind, ()):
            continue
        if threshold.model is not None and threshold.model not in models:
            message = f"no model {threshold.model!r} was evaluated" + did_you_mean(
                close_names(threshold.model, models)
            )
        elif threshold.name != EVERY and threshold.name not in groups[threshold.kind]:
            kind = threshold.kind.replace("_", " ")
            message = f"no {kind} named {threshold.name!r}" + did_you_mean(
                close_names(threshold.name, groups[threshold.kind])
            )
        else:
            continue  # a `*` over no group, or a name whose rate no case counts
        checks.append(
            Check(
                model=threshold.model or EVERY,
                kind="unknown",
                classname="gate",
                name=threshold.describe(),
                limit=threshold.max_error,
                origin=threshold.origin,
                source=threshold.source,
                failure=f"threshold {threshold.describe()} ({threshold.source}): {message}",
            )
        )
    return checks
