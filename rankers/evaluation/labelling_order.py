"""The active loop on a held-out generator, by the order in which people label.

People label a held-out generator's candidates in batches; after each batch the ensemble
is retrained on every other source plus their labels so far (`retrain_and_rerank`, which
stacks a learner of the generator's own labels with the prior) and re-ranks what is
left. Three labelling orders are compared at the same numbers of labels:

- `selected`: what `annotate push` and `terminal` do (`order_for_people`): a random
  calibration sample first, then the candidates the ensemble is least sure of, spread
  over the descriptions;
- `ranked`: the top of the current ranking (the old loop);
- `random`: a seeded random order.

Each point is the share of the random-to-perfect effort gap that the ranking of the
candidates still unlabelled closes. `acceptance_from_labels` checks what the ranker
accepts of them from the generator's own random labels alone.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from rankers.active import ActiveRound, retrain_and_rerank
from rankers.adaptation.transfer import (
    Trainings,
    bootstrap_share,
    people_annotations,
    source_of,
    triage_of,
)
from testaug.core.records import LabelledCandidate, RankedCandidate
from testaug.review.acceptance import accept_by_rule
from testaug.review.selection import Draw, draws_of, order_for_people

Order = Literal["selected", "ranked", "random"]
ORDERS: tuple[Order, ...] = ("selected", "ranked", "random")


class LoopPoint(BaseModel):
    """The ranking of a held-out generator's unlabelled candidates after n of its labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    order: Order
    seed: int
    labels: int
    ranked: int
    gap_closed: float
    effort: float
    random_effort: float
    oracle_effort: float


class LoopAcceptance(BaseModel):
    """What the ranker accepts of a generator's unlabelled candidates from n random labels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    seed: int
    calibration_labels: int
    candidates: int
    threshold: float | None
    accepted: int
    valid: int
    precision: float | None
    share_at_precision: float | None


def _next_batch(
    order: Order,
    ranking: Sequence[RankedCandidate],
    size: int,
    drawn: dict[str, Draw],
    calibration_size: int,
    rng: random.Random,
    calibration,
) -> list[Draw]:
    if order == "selected":
        chosen = order_for_people(
            ranking,
            size,
            calibration=calibration,
            drawn=drawn,
            calibration_size=calibration_size,
            uncertain_until=10**9,  # the curve measures the loop for a new generator
        )
        return draws_of(chosen)
    if order == "ranked":
        picked = sorted(ranking, key=lambda r: r.rank)[:size]
        return draws_of([(item, "ranked") for item in picked])
    picked = rng.sample(list(ranking), min(size, len(ranking)))
    return draws_of([(item, "random") for item in picked])


def labelling_loop(
    items: Sequence[LabelledCandidate],
    source: str,
    zero_shot: Sequence[RankedCandidate],
    trainings: Trainings,
    *,
    order: Order,
    sizes: Sequence[int],
    seed: int,
    calibration_size: int = 50,
    target: float = 0.9,
) -> tuple[list[LoopPoint], ActiveRound | None]:
    """Label a held-out source in `order` up to each size in `sizes` (increasing), retraining
    after each batch; the points and the last round (its ensemble and ranking)."""
    valid = {item.candidate.id: item.valid for item in items}
    held = {item.candidate.id: item for item in items if source_of(item) == source}
    others = [item for item in items if source_of(item) != source]
    rng = random.Random(seed)
    ranking, drawn, calibration = list(zero_shot), {}, None
    points: list[LoopPoint] = []
    round_: ActiveRound | None = None
    for size in sizes:
        batch = _next_batch(
            order, ranking, size - len(drawn), drawn, calibration_size, rng, calibration
        )
        drawn.update({d.candidate_id: d for d in batch})
        sample = [held[cid] for cid in drawn]
        why = f"{source} held out, {len(sample)} labels in {order} order, seed {seed}"
        started = trainings.start(len(others) + len(sample), why)
        round_ = retrain_and_rerank(
            list(zero_shot),
            people_annotations(sample),
            trainings.config,
            trainings.root / f"loop-{trainings.count}",
            extra=others,
            draws=drawn,
        )
        trainings.done(started)
        ranking = round_.reranked
        calibration = round_.ensemble.calibration.evidence if round_.ensemble.calibration else None
        if len({valid[r.candidate.id] for r in ranking}) < 2:
            break
        report = triage_of(ranking, valid, target)
        points.append(
            LoopPoint(
                source=source,
                order=order,
                seed=seed,
                labels=len(sample),
                ranked=report.n,
                gap_closed=report.gap_closed,
                effort=report.effort_at_target,
                random_effort=report.random_effort_at_target,
                oracle_effort=report.oracle_effort_at_target,
            )
        )
    return points, round_


def acceptance_from_labels(
    items: Sequence[LabelledCandidate],
    source: str,
    zero_shot: Sequence[RankedCandidate],
    trainings: Trainings,
    *,
    labels: int,
    seed: int,
    precision: float = 0.9,
    resamples: int = 1000,
) -> LoopAcceptance:
    """People label `labels` random candidates of the held-out source (its calibration
    sample); the retrained ensemble ranks the rest, and the ranker accepts what the rule
    read from those labels alone vouches for. Measured: the accepted candidates' precision
    and the share of bootstrap resamples of them at `precision` or more."""
    _, round_ = labelling_loop(
        items, source, zero_shot, trainings, order="selected", sizes=[labels], seed=seed,
        calibration_size=labels,
    )  # fmt: skip
    if round_ is None:
        raise ValueError(f"no labels of {source} to learn from")
    ranking = round_.reranked
    valid = {item.candidate.id: item.valid for item in items}
    calibration = round_.ensemble.calibration
    evidence = calibration.evidence if calibration is not None else None
    decision = accept_by_rule(ranking, evidence, target=precision)
    chosen = [valid[record.candidate_id] for record in decision.accepted]
    rules = [rule for rule in decision.rules.values() if rule is not None]
    return LoopAcceptance(
        source=source,
        seed=seed,
        calibration_labels=labels,
        candidates=len(ranking),
        threshold=rules[0].threshold if rules else None,
        accepted=len(chosen),
        valid=sum(chosen),
        precision=float(np.mean(chosen)) if chosen else None,
        share_at_precision=bootstrap_share(chosen, precision, resamples, seed) if chosen else None,
    )
