"""Which candidates people label first, and how each was drawn.

For a generator with few labels of its own, people first label a random sample of its
candidates (the calibration sample: the only labels from which its precision can be
stated honestly), then the candidates the ranker is least sure of, spread over the
descriptions. A generator whose precision already rests on its own random labels is
reviewed from the top of the ranking, as before. Every draw is kept in a draws file beside
the annotations (first draw wins), so that training knows which labels were random.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from testaug.core.file_lock import locked
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Calibration, Candidate, RankedCandidate, Record, content_id
from testaug.core.runs import sibling

Sampled = Literal["random", "uncertain", "ranked"]
DEFAULT_CALIBRATION_SIZE = 50
DEFAULT_UNCERTAIN_UNTIL = 200


class SelectionConfig(Record):
    """How people's candidates are chosen and what the ranker may accept: the size of each
    generator's random calibration sample, and whether a generator without calibration
    labels of its own may be accepted by the pooled rule of other generators."""

    calibration_sample: int = Field(default=DEFAULT_CALIBRATION_SIZE, ge=0)
    uncertain_until: int = Field(default=DEFAULT_UNCERTAIN_UNTIL, ge=0)
    pooled_rule: bool = False


class Draw(Record):
    """How a candidate was picked for people: at random (calibration), as one the ranker
    was unsure of, or from the top of the ranking."""

    candidate_id: str
    group: str
    sampled: Sampled
    drawn_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


def draws_beside(annotations_path: Path) -> Path:
    """Where the draws of an annotations file are kept: `<annotations>.draws.jsonl`."""
    return sibling(annotations_path, "draws", ".jsonl")


def read_draws(path: Path) -> dict[str, Draw]:
    """The draws so far, by candidate id (none when the file does not exist)."""
    return {d.candidate_id: d for d in read_jsonl(path, Draw)} if path.is_file() else {}


def record_draws(path: Path, draws: Iterable[Draw]) -> int:
    """Add draws of candidates not drawn before (the first draw of a candidate stands);
    returns how many were added. The file is read and rewritten while holding its write
    lock."""
    draws = list(draws)
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        existing = read_draws(path)
        new = [d for d in draws if d.candidate_id not in existing]
        if new:
            write_jsonl(path, [*existing.values(), *new])
    return len(new)


RULE_BACKEND = "rule"  # the backend of hard cases made by rule (rankers/hard_cases.py)


def generator_group(candidate: Candidate) -> str:
    """A candidate's generator setting: its model at its sampling temperature (how often a
    generator writes valid cases depends on both), its model alone without one, or `rule`
    for hard cases made by rule. Calibration groups and calibration samples are per group."""
    if candidate.backend == RULE_BACKEND:
        return "rule"
    if candidate.temperature is None:
        return candidate.model
    return f"{candidate.model} at temperature {candidate.temperature:g}"


def _group(item: RankedCandidate) -> str:
    """The group a candidate is drawn for: its own generator setting, even where its
    P(valid) was read from the pooled map of other generators."""
    return generator_group(item.candidate)


def _uncertainty(item: RankedCandidate) -> float:
    """How unsure the ranker is (0: sure): P(valid)'s distance from 1/2, negated."""
    p = item.p_valid if item.p_valid is not None else item.triage_score
    return -abs((0.5 if p is None else p) - 0.5)


def spread_over_descriptions(items: Sequence[RankedCandidate]) -> list[RankedCandidate]:
    """Most uncertain first, taking one candidate of each description in turn."""
    by_description: dict[str, list[RankedCandidate]] = defaultdict(list)
    for item in sorted(items, key=lambda i: (-_uncertainty(i), i.rank)):
        by_description[item.candidate.description_id].append(item)
    queues = list(by_description.values())
    out: list[RankedCandidate] = []
    while queues:
        out.extend(queue.pop(0) for queue in queues)
        queues = [queue for queue in queues if queue]
    return out


def order_for_people(
    rest: Sequence[RankedCandidate],
    count: int,
    *,
    calibration: Calibration | None,
    drawn: Mapping[str, Draw],
    calibration_size: int = DEFAULT_CALIBRATION_SIZE,
    uncertain_until: int = DEFAULT_UNCERTAIN_UNTIL,
    seed: int = 0,
) -> list[tuple[RankedCandidate, Sampled]]:
    """The `count` candidates people review next, each with how it was drawn.

    A group (generator setting) with fewer than `uncertain_until` labels (people's draws,
    plus the random labels its own precision curve rests on) first fills its
    calibration sample (`calibration_size` random draws, counting earlier ones), then
    gives its most uncertain candidates, spread over descriptions. A group with more is
    reviewed from the top of the ranking. The groups' queues are interleaved, random
    draws first."""
    if count <= 0:
        return []
    own = set(calibration.curves) - {calibration.fallback} if calibration is not None else set()
    random_drawn: dict[str, int] = defaultdict(int)
    labels: dict[str, int] = defaultdict(int)
    for group in own:
        labels[group] += calibration.curves[group].n if calibration is not None else 0
    for draw in drawn.values():
        labels[draw.group] += 1
        if draw.sampled == "random":
            random_drawn[draw.group] += 1
    by_group: dict[str, list[RankedCandidate]] = defaultdict(list)
    for item in rest:
        by_group[_group(item)].append(item)
    randoms: list[tuple[RankedCandidate, Sampled]] = []
    queues: list[list[tuple[RankedCandidate, Sampled]]] = []
    for group, items in sorted(by_group.items()):
        if labels[group] >= uncertain_until:
            queues.append([(item, "ranked") for item in items])
            continue
        shortfall = max(calibration_size - random_drawn[group], 0)
        shuffled = sorted(items, key=lambda i: content_id("draw", seed, i.candidate.id))
        chosen = shuffled[:shortfall]
        randoms.extend((item, "random") for item in chosen)
        picked = {item.candidate.id for item in chosen}
        others = [item for item in items if item.candidate.id not in picked]
        queues.append([(item, "uncertain") for item in spread_over_descriptions(others)])
    ordered = list(randoms)
    queues = [queue for queue in queues if queue]
    while queues:
        ordered.extend(queue.pop(0) for queue in queues)
        queues = [queue for queue in queues if queue]
    return ordered[:count]


def draws_of(chosen: Sequence[tuple[RankedCandidate, Sampled]]) -> list[Draw]:
    """The draw records of a selection."""
    return [Draw(candidate_id=i.candidate.id, group=_group(i), sampled=s) for i, s in chosen]


DEFAULT_SELECTION = SelectionConfig()
