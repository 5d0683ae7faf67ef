"""The report's account of acceptance: what the ranker accepted without a person, under which
rule per calibration group (threshold on P(valid), out-of-fold precision, its lower
confidence bound, the target), what waits for people and what people decided.

Read from the run directory: annotations.jsonl (the ranker's records carry the rule they
were accepted under), verdicts.jsonl, ranked.jsonl, ranked.calibration.json and, for the
precision target where the ranker accepted nothing, annotations.acceptance.json (the
latest plan's) or else manifest.json.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import parse_json, read_input_text, read_jsonl
from testaug.core.records import Annotation, Calibration, RankedCandidate
from testaug.core.run_folder import RunFolder
from testaug.reports.blocks import Block, Heading, Table, Text
from testaug.review.acceptance import (
    DEFAULT_CONFIDENCE,
    DEFAULT_TARGET,
    acceptance_rule,
    calibration_beside,
    read_calibration,
)
from testaug.review.plans import AUTO_NOTE, acceptance_path, read_annotations
from testaug.review.verdicts import Verdict, status_counts


@dataclass(frozen=True)
class RunAcceptance:
    """What a run directory says about the ranker's acceptances."""

    annotations: list[Annotation]
    calibration: Calibration | None
    groups: dict[str, int]  # ranked candidates per calibration group
    ranked: int
    target: float
    confidence: float
    auto: bool
    weak_prior: dict[str, int] = field(default_factory=dict)  # zero-shot candidates by group

    @property
    def by_rule(self) -> list[Annotation]:
        """The ranker's acceptances under a stated precision rule."""
        return [a for a in self.annotations if a.origin == "ranker" and a.valid and a.acceptance]

    @property
    def without_rule(self) -> list[Annotation]:
        """Acceptances by the ranker without a rule (older testaug: below the reviewed top)."""
        return [
            a for a in self.annotations if a.origin == "ranker" and a.valid and not a.acceptance
        ]

    @property
    def rejected(self) -> list[Annotation]:
        """Rejections by the ranker alone (only older auto runs have them)."""
        return [a for a in self.annotations if a.origin == "ranker" and not a.valid]


def read_run_acceptance(run_dir: Path) -> RunAcceptance:
    """The acceptance evidence of a run directory (every file optional)."""
    run = RunFolder(run_dir)
    annotations = read_annotations(run.annotations)
    ranked_path = run.ranked
    ranked: list[RankedCandidate] = (
        list(read_jsonl(ranked_path, RankedCandidate)) if ranked_path.exists() else []
    )
    groups = Counter(str(item.calibration_group) for item in ranked if item.p_valid is not None)
    weak = Counter(
        str(item.calibration_group or item.candidate.model)
        for item in ranked
        if item.triage_basis and item.triage_basis.startswith("zero-shot")
    )
    plan = _json_object(acceptance_path(run.annotations))
    target, confidence = _target(annotations, plan, run_dir)
    mode = plan.get("mode") or _manifest_argument(run_dir, "annotation")
    auto = any(a.origin == "ranker" and a.rule and AUTO_NOTE in a.rule for a in annotations)
    return RunAcceptance(
        annotations=annotations,
        calibration=read_calibration(calibration_beside(ranked_path)),
        groups=dict(sorted(groups.items())),
        ranked=len(ranked),
        target=target,
        confidence=confidence,
        auto=auto or mode == "auto",
        weak_prior=dict(sorted(weak.items())),
    )


def _target(
    annotations: Sequence[Annotation], plan: Mapping[str, object], run_dir: Path
) -> tuple[float, float]:
    """The precision target of the latest plan; else of the latest rule the ranker accepted
    under; else the run's `accept_precision` argument; else the default."""
    target, confidence = plan.get("accept_precision"), plan.get("confidence")
    if _fraction(target) and _fraction(confidence):
        return float(target), float(confidence)  # type: ignore[arg-type]
    rules = [a.acceptance for a in sorted(annotations, key=lambda a: a.created_at) if a.acceptance]
    if rules:
        return rules[-1].target, rules[-1].confidence
    argued = _manifest_argument(run_dir, "accept_precision")
    target = float(argued) if _fraction(argued) else DEFAULT_TARGET  # type: ignore[arg-type]
    return target, DEFAULT_CONFIDENCE


def _fraction(value: object) -> bool:
    """Whether a value read from a lenient file is a number in (0, 1] (not NaN)."""
    return isinstance(value, float | int) and not isinstance(value, bool) and 0 < value <= 1


def _json_object(path: Path) -> dict[str, object]:
    """A JSON object from a run file; empty when the file is missing. A file that is there
    but is no JSON object (not UTF-8, not JSON, another value) is an InputError naming it."""
    if not path.exists():
        return {}
    data = parse_json(read_input_text(path))
    if isinstance(data, json.JSONDecodeError):
        raise InputError(Problem(f"not valid JSON ({data.msg})", path, data.lineno))
    if not isinstance(data, dict):
        raise InputError(Problem(f"expected a JSON object, found {type(data).__name__}", path))
    return data


def _manifest_argument(run_dir: Path, name: str) -> object:
    """An argument of the run's manifest.json (`testaug run` writes one); None without it."""
    path = RunFolder(run_dir).manifest
    arguments = _json_object(path).get("arguments", {})
    if not isinstance(arguments, dict):
        raise InputError(Problem("expected an object", path, None, "arguments"))
    return arguments.get(name)


def auto_mode_notice(found: RunAcceptance, verdicts: Mapping[str, Verdict]) -> Text | None:
    """Annotation mode `auto`, said first: no person judged the generated candidates, and the
    ranker accepted only what it can vouch for at the stated precision."""
    if not found.auto:
        return None
    waiting = status_counts(verdicts)["pending"] if verdicts else found.ranked - len(found.by_rule)
    text = (
        f"Annotation mode auto: no person reviewed the generated candidates. The ranker "
        f"ensemble accepted only what it can vouch for at the stated precision: "
        f"{len(found.by_rule):,} candidates, under rules whose out-of-fold precision reaches "
        f"{found.target:.0%} with {found.confidence:.0%} confidence; {max(waiting, 0):,} wait "
        "for people (testaug review candidates push or terminal). The accepted ones carry "
        "accepted_by: ranker in suite.jsonl."
    )
    if found.rejected or found.without_rule:
        text += (
            f" An older auto mode left {len(found.rejected):,} rejections and "
            f"{len(found.without_rule):,} acceptances by rank alone, without a stated precision."
        )
    return Text(text, notice=True)


def acceptance_blocks(found: RunAcceptance, verdicts: Mapping[str, Verdict]) -> list[Block]:
    """The acceptance summary and a table of the rule of each calibration group; nothing
    when the run has no ranking, no calibration and no acceptance by the ranker."""
    accepted = found.by_rule
    if not (found.ranked or found.calibration or accepted or found.without_rule):
        return []
    counts = status_counts(verdicts)
    text = (
        f"The ranker accepted {len(accepted):,} candidates without a person, each under the "
        f"rule of its calibration group: the lowest threshold on P(valid), no lower than the "
        f"target, whose out-of-fold precision reaches {found.target:.0%} with "
        f"{found.confidence:.0%} confidence (one-sided Clopper-Pearson bound)."
    )
    if accepted:
        estimate = sum(a.acceptance.precision_estimate for a in accepted if a.acceptance)
        text += f" Their estimated precision is {estimate / len(accepted):.1%}."
    if found.without_rule:
        text += (
            f" {len(found.without_rule):,} more were accepted by rank alone, without a stated "
            "precision (an older testaug)."
        )
    if found.calibration is None:
        text += " The run has no ranked.calibration.json: no rule could be read."
    text += (
        f" {counts['pending']:,} wait for people; people accepted "
        f"{counts['accepted by people']:,} and rejected {counts['rejected by people']:,}"
        + (f" ({counts['disputed']:,} disputed)." if counts["disputed"] else ".")
    )
    blocks: list[Block] = [Heading("Acceptance by the ranker", level=3), Text(text)]
    if found.weak_prior:
        weak = ", ".join(f"{group}: {n:,}" for group, n in found.weak_prior.items())
        blocks.append(
            Text(
                f"The order of these candidates is a weak prior ({weak}): their generator has "
                "no labels of its own, so the ranking rests on the shipped prior and on "
                "signals that do not depend on one generator's habits, and the ranker accepts "
                "none of them unless the pooled rule was asked for. Label a random sample of "
                "them first (testaug review candidates push or terminal do so), then retrain.",
                notice=True,
            )
        )
    rows = _group_rows(found, Counter(a.acceptance.group for a in accepted if a.acceptance))
    if rows:
        blocks.append(
            Table(
                [
                    "calibration group",
                    "candidates",
                    "accepted by the ranker",
                    "threshold on P(valid)",
                    "out-of-fold precision",
                    f"lower bound ({found.confidence:.0%})",
                    "target",
                    "random labels it rests on",
                ],
                rows,
                caption="the rule of each calibration group, read from ranked.calibration.json",
            )
        )
    return blocks


def _group_rows(found: RunAcceptance, accepted: Mapping[str, int]) -> list[list[str]]:
    """One row per calibration group of the ranked candidates (or of the acceptances)."""
    if found.calibration is None:
        return []
    curves = found.calibration.curves
    rows = []
    for group in sorted({*found.groups, *accepted}):
        curve = curves.get(group)
        rule = None if curve is None else acceptance_rule(curve, found.target, found.confidence)
        cells = (
            ["no threshold qualifies", "", ""]
            if rule is None
            else [
                f"{rule.threshold:.3f}",
                f"{rule.precision_estimate:.1%} ({rule.accepted:,} of {rule.calibration_n:,} labelled)",
                f"{rule.precision_lower_bound:.1%}",
            ]
        )
        rows.append(
            [
                group,
                f"{found.groups.get(group, 0):,}",
                f"{accepted.get(group, 0):,}",
                *cells,
                f"{found.target:.0%}",
                _rests_on(found.calibration, group),
            ]
        )
    return rows


def _rests_on(calibration: Calibration, group: str) -> str:
    """How many random labels of its own a group's stated precision rests on."""
    if group == calibration.fallback:
        return "none of its own (pooled over other generators; opt-in)"
    curve = calibration.curves.get(group)
    return "none" if curve is None else f"{curve.n:,}"
