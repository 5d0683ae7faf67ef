"""How an ensemble's triage transfers to candidates unlike its training data.

Three measures on labelled candidates, each against the random and the perfect order
of the same candidates (the share of that effort gap a ranking closes):

- held out: trained on every source but one (a generator, or `rule` for hard cases
  made by rule), ranking that source's candidates (in domain, for comparison: trained
  on a train split of every source, ranking a source's test candidates);
- the active loop on a held-out source: see `rankers.evaluation.labelling_order`;
- acceptance on a test split: what each calibration group's acceptance rule accepts,
  how precise that is, and a bootstrap of that precision.

`Trainings` trains the ensembles, one progress line each, and trains a training set
that recurs (the same candidates and verdicts) once.
"""

from __future__ import annotations

import logging
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from rankers.calibration import generator_of
from rankers.ensemble import MANIFEST, Ensemble, EnsembleConfig
from rankers.ensemble_training import ensemble_version, train_ensemble, trained_ensemble
from rankers.evaluation.triage import TriageReport, triage_report
from testaug.core.records import Annotation, LabelledCandidate, RankedCandidate
from testaug.review.acceptance import acceptance_rule, expected_calibration_error

logger = logging.getLogger(__name__)


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def source_of(item: LabelledCandidate) -> str:
    """Where a labelled candidate comes from: its generator model (at any temperature), or
    `rule`."""
    return generator_of(item.candidate)


def by_source(items: Sequence[LabelledCandidate]) -> dict[str, list[LabelledCandidate]]:
    """The candidates of each source, sources in name order."""
    groups: dict[str, list[LabelledCandidate]] = defaultdict(list)
    for item in items:
        groups[source_of(item)].append(item)
    return dict(sorted(groups.items()))


def prompt_subset(
    items: Sequence[LabelledCandidate], fraction: float, seed: int
) -> list[LabelledCandidate]:
    """A seeded share of each source's prompts (at least 2), with all their candidates."""
    kept: set[str] = set()
    for group in by_source(items).values():
        prompts = sorted({item.candidate.prompt_id for item in group})
        random.Random(seed).shuffle(prompts)
        kept.update(prompts[: max(2, round(fraction * len(prompts)))])
    return [item for item in items if item.candidate.prompt_id in kept]


def triage_of(
    ranked: Sequence[RankedCandidate], valid: dict[str, bool], target: float
) -> TriageReport:
    """The triage report of a ranking, from the verdicts of its candidates (by id)."""
    invalid = np.array([not valid[item.candidate.id] for item in ranked], dtype=bool)
    return triage_report(invalid, target)


class Trainings:
    """Trains ensembles of one config under `root`, reporting a line before and after each
    (to `report`; default: the log); a training set that recurs is trained once."""

    def __init__(
        self, config: EnsembleConfig, root: Path, report: Callable[[str], None] | None = None
    ) -> None:
        self.config, self.root = config, root
        self.report = report or logger.info
        self.count = 0

    def start(self, n: int, why: str) -> float:
        """Announce a training; returns its start time."""
        self.count += 1
        self.report(f"training {self.count}: {self.config.name} on {n:,} candidates ({why})")
        return time.perf_counter()

    def done(self, started: float) -> float:
        """Report a training's wall time; returns it in seconds."""
        seconds = time.perf_counter() - started
        self.report(f"  trained in {seconds:.1f} s")
        return seconds

    def ensemble(self, items: Sequence[LabelledCandidate], why: str) -> Ensemble:
        """The ensemble trained on `items`: trained now, or the one trained before on them."""
        cache = self.root / "cache"
        folder = cache / f"{self.config.name}-{ensemble_version(self.config, items)}"
        if (folder / MANIFEST).is_file():
            self.report(f"reusing the ensemble trained on {len(items):,} candidates ({why})")
            return Ensemble.load(folder)
        started = self.start(len(items), why)
        trained_ensemble(self.config, items, cache)
        self.done(started)
        return Ensemble.load(folder)


class TrainingTime(_Result):
    candidates: int
    members: int
    folds: int
    seconds: float


def training_time(items: Sequence[LabelledCandidate], trainings: Trainings) -> TrainingTime:
    """Wall time of one training on `items` (first in a process, it includes loading the
    encoders and embedding every text, as a fresh `testaug rankers train` does)."""
    started = trainings.start(len(items), "all candidates, timed")
    train_ensemble(items, trainings.config, trainings.root / "timed")
    seconds = trainings.done(started)
    config = trainings.config
    return TrainingTime(
        candidates=len(items),
        members=len(config.members),
        folds=config.folds,
        seconds=round(seconds, 2),
    )


class HeldOut(_Result):
    source: str
    trained_on: int
    n: int
    n_invalid: int
    effort: float
    random_effort: float
    oracle_effort: float
    gap_closed: float


def held_out(
    items: Sequence[LabelledCandidate],
    trainings: Trainings,
    target: float = 0.9,
    *,
    sources: Sequence[str] | None = None,
) -> tuple[list[HeldOut], dict[str, list[RankedCandidate]]]:
    """For each source (or each of `sources`), the ensemble trained on the others ranks its
    candidates: the triage at the target accuracy, and the ranking, by source."""
    valid = {item.candidate.id: item.valid for item in items}
    rows, rankings = [], {}
    for source, held in by_source(items).items():
        if sources is not None and source not in sources:
            continue
        rest = [item for item in items if source_of(item) != source]
        ensemble = trainings.ensemble(rest, f"every source but {source}")
        rankings[source] = ensemble.rank([item.candidate for item in held])
        report = triage_of(rankings[source], valid, target)
        rows.append(
            HeldOut(
                source=source,
                trained_on=len(rest),
                n=report.n,
                n_invalid=report.n_invalid,
                effort=report.effort_at_target,
                random_effort=report.random_effort_at_target,
                oracle_effort=report.oracle_effort_at_target,
                gap_closed=report.gap_closed,
            )
        )
    return rows, rankings


def in_domain(
    train: Sequence[LabelledCandidate],
    test: Sequence[LabelledCandidate],
    trainings: Trainings,
    target: float = 0.9,
) -> dict[str, float]:
    """The gap closed on each source's test candidates by the ensemble trained on `train`
    (every source, this one included): what the held-out figures compare with."""
    ensemble = trainings.ensemble(train, "the train split")
    valid = {item.candidate.id: item.valid for item in test}
    return {
        source: triage_of(ensemble.rank([i.candidate for i in held]), valid, target).gap_closed
        for source, held in by_source(test).items()
    }


def people_annotations(sample: Sequence[LabelledCandidate]) -> list[Annotation]:
    """Labelled verdicts as one person's annotations, as `testaug review candidates` records them."""
    return [
        Annotation(
            candidate_id=item.candidate.id,
            valid=item.valid,
            reason=None if item.valid else item.reason,
            annotator="benchmark",
            origin="terminal",
        )
        for item in sample
    ]


class GroupAcceptance(_Result):
    group: str
    candidates: int
    threshold: float | None  # None: no threshold qualifies on the out-of-fold evidence
    oof_precision: float | None
    oof_lower_bound: float | None
    accepted: int
    valid: int
    precision: float | None
    share_at_precision: float | None  # None: nothing accepted, nothing to resample


class AcceptanceResult(_Result):
    precision_target: float
    resamples: int
    trained_on: int
    tested_on: int
    ece: float
    groups: list[GroupAcceptance]


def bootstrap_share(valid: Sequence[bool], precision: float, resamples: int, seed: int) -> float:
    """The share of bootstrap resamples of the verdicts whose precision reaches `precision`."""
    values = np.asarray(valid, dtype=float)
    if not len(values):
        raise ValueError("no verdicts to resample")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    return float((means >= precision - 1e-12).mean())


def acceptance_on_test(
    train: Sequence[LabelledCandidate],
    test: Sequence[LabelledCandidate],
    trainings: Trainings,
    *,
    precision: float = 0.9,
    resamples: int = 1000,
    seed: int = 0,
) -> AcceptanceResult:
    """Trained on `train`, ranking `test`: per calibration group, the acceptance rule for
    the precision target (from the out-of-fold curves), what it accepts of the test
    candidates, their precision and the bootstrap share of resamples that reach the
    target; and the expected calibration error of P(valid) on `test`."""
    ensemble = trainings.ensemble(train, "the train split")
    ranked = ensemble.rank([item.candidate for item in test])
    if ensemble.calibration is None:
        raise ValueError(f"ensemble {ensemble.version} has no calibration")
    curves = ensemble.calibration.evidence.curves
    valid = {item.candidate.id: item.valid for item in test}
    by_group: dict[str, list[RankedCandidate]] = defaultdict(list)
    for item in ranked:
        by_group[str(item.calibration_group)].append(item)
    groups = []
    for group, members in sorted(by_group.items()):
        rule = acceptance_rule(curves[group], precision)
        chosen = [
            valid[r.candidate.id]
            for r in members
            if rule is not None and r.p_valid is not None and r.p_valid >= rule.threshold
        ]
        groups.append(
            GroupAcceptance(
                group=group,
                candidates=len(members),
                threshold=None if rule is None else rule.threshold,
                oof_precision=None if rule is None else rule.precision_estimate,
                oof_lower_bound=None if rule is None else rule.precision_lower_bound,
                accepted=len(chosen),
                valid=sum(chosen),
                precision=sum(chosen) / len(chosen) if chosen else None,
                share_at_precision=(
                    bootstrap_share(chosen, precision, resamples, seed) if chosen else None
                ),
            )
        )
    ece = expected_calibration_error(
        [float(r.p_valid or 0.0) for r in ranked], [valid[r.candidate.id] for r in ranked]
    )
    return AcceptanceResult(
        precision_target=precision,
        resamples=resamples,
        trained_on=len(train),
        tested_on=len(test),
        ece=ece,
        groups=groups,
    )
