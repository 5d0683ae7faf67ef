"""A CI gate on an evaluation: maximum error rates per capability, description or test type
(for one model or all), a maximum share of unverified evidence, and acceptance rules at a
stated precision. `check_gate` is pure: a summary and a `GateConfig` in, a `GateResult` out,
every check listed and the failed ones as breaches. The gate's configuration and where it
comes from (a suite's `gate:` section, a gate file, flags) is `testaug.suites.gate`; the
JUnit XML that CI systems read is `testaug.evaluation.gate_junit`; a test tree's gate is
`testaug.adaptive.tree_gate`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from testaug.core.errors import close_names, did_you_mean
from testaug.core.records import AcceptanceRule, Record
from testaug.suites.gate import EVERY, KINDS, GateConfig, Kind, Origin, Threshold, merge_gates
from testaug.suites.provenance import is_verified

if TYPE_CHECKING:
    from testaug.evaluation.failures import FailureRate
    from testaug.evaluation.summary import EvaluationSummary, ModelSummary

CheckKind = Literal[
    "capability", "description", "test_type", "unverified", "precision", "newly failing", "unknown"
]
UNRESOLVED = ("ranker", "expansion-unverified", "llm-untraced")  # what no person vouched for

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
    """One thing the gate looked at for one model: a group's rate against its limit (None:
    no limit, shown only), or a demand on the evidence; `failure` says why it failed."""

    model: str
    kind: CheckKind
    classname: str  # the capability, or what else the check is about (JUnit's classname)
    name: str
    rate: float | None = None
    n: int = 0
    failed: int = 0
    limit: float | None = None
    origin: Origin | None = None
    failure: str | None = None


class Breach(Record):
    """A check that failed: which model and group, its rate, the limit and why."""

    model: str
    kind: CheckKind
    name: str
    rate: float | None
    limit: float | None
    origin: Origin | None
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


def gate_result(config: GateConfig, checks: Sequence[Check]) -> GateResult:
    breaches = tuple(
        Breach(
            model=c.model,
            kind=c.kind,
            name=c.name,
            rate=c.rate,
            limit=c.limit,
            origin=c.origin,
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
) -> GateResult:
    """The gate's checks on an evaluation summary: each model's headline rate per capability,
    its rate per description and test type (over every case counted), the share of
    unverified cases under its headline, and the `rules` (None: not known) the ranker
    accepted its cases under. A threshold that names no group or model is a breach too."""
    checks: list[Check] = []
    used: set[tuple[str, str, str | None]] = set()
    for model in summary.models:
        checks += _rate_checks(model, config.thresholds, used)
        if config.max_unverified is not None:
            checks.append(_unverified_check(model, config.max_unverified))
        if config.min_precision is not None:
            checks.append(_precision_check(model, config.min_precision, rules))
    names = {m.model for m in summary.models}
    groups = {kind: _known(summary, kind) for kind in KINDS}
    checks += unmatched(config.thresholds, used, names, groups)
    return gate_result(config, checks)


def _groups(model: ModelSummary, kind: Kind) -> dict[str, tuple[str, str, FailureRate]]:
    """The groups of one kind: key -> (capability or classname, shown name, rate)."""
    if kind == "capability":
        rates = model.headline.by_capability if model.headline else model.by_capability
        return {name: (name, name, rate) for name, rate in rates.items()}
    if kind == "test_type":
        return {name: ("test type", name, rate) for name, rate in model.by_test_type.items()}
    out = {}
    capabilities = sorted(model.by_capability, key=len, reverse=True)
    for did, rate in model.by_description.items():
        capability = next((c for c in capabilities if rate.name.startswith(f"{c}: ")), "")
        text = rate.name[len(capability) + 2 :] if capability else rate.name
        out[did] = (capability, text, rate)
    return out


def _known(summary: EvaluationSummary, kind: Kind) -> set[str]:
    """Every name a threshold of this kind may use (descriptions: text or id)."""
    names: set[str] = set()
    for model in summary.models:
        for key, (_, name, _) in _groups(model, kind).items():
            names.update({key, name})
    return names


def limit_for(
    thresholds: Iterable[Threshold], kind: Kind, names: Sequence[str], model: str
) -> Threshold | None:
    """The most specific threshold for a group: its own name before `*`, for this model
    before every model."""
    found = {t.key: t for t in thresholds if t.kind == kind}
    for name in (*names, EVERY):
        for who in (model, None):
            threshold = found.get((kind, name, who))
            if threshold is not None:
                return threshold
    return None


def _rate_checks(
    model: ModelSummary, thresholds: Sequence[Threshold], used: set[tuple[str, str, str | None]]
) -> list[Check]:
    checks = []
    for kind in ("description", "capability", "test_type"):
        for key, (classname, name, rate) in _groups(model, kind).items():
            threshold = limit_for(thresholds, kind, (name, key), model.model)
            if threshold is None and kind != "description":
                continue  # descriptions are listed even without a limit (one JUnit case each)
            if threshold is not None:
                used.add(threshold.key)
            checks.append(_rate_check(model.model, kind, classname, name, rate, threshold))
    return checks


def _rate_check(
    model: str,
    kind: Kind,
    classname: str,
    name: str,
    rate: FailureRate,
    threshold: Threshold | None,
) -> Check:
    limit = threshold.max_error if threshold is not None else None
    failure = None
    if limit is not None and rate.rate is not None and rate.rate > limit:
        failure = (
            f"{kind.replace('_', ' ')} {name}: error rate {rate.rate:.1f}% "
            f"({rate.failed}/{rate.n}) above the limit {limit:g}% ({threshold.origin})"
        )
    return Check(
        model=model,
        kind=kind,
        classname=classname,
        name=name,
        rate=rate.rate,
        n=rate.n,
        failed=rate.failed,
        limit=limit,
        origin=threshold.origin if threshold else None,
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
) -> list[Check]:
    """A breach per threshold that names a model or group the evaluation lacks, with the
    closest names: a typo must not pass the gate unchecked."""
    checks = []
    for threshold in thresholds:
        if threshold.key in used:
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
                failure=f"threshold {threshold.describe()} ({threshold.origin}): {message}",
            )
        )
    return checks
