"""What a run folder knows about the validity of its generated cases, for the headline's
prediction-powered interval (`testaug.evaluation.intervals.ppi_error_rate`): per case, the
generator setting it came from and the ranker's P(valid) (ranked.jsonl), and per
generator the people's verdicts on its candidates (annotations.jsonl, origin terminal or
Label Studio; the ranker's own verdicts are not labels), each with how the candidate was
drawn for people (the draws file beside the annotations, `annotations.draws.jsonl`).

Only labels drawn at random (a generator's calibration sample) are a fair sample of the
generator's cases; labels picked because the ranker was unsure of the candidate or
ranked it high are not, and a label without a draw record counts as picked from the top
of a ranking (as the rankers' training takes it). `ValidityEvidence.random_labels` gives
the random ones, the only ones the prediction-powered interval may use.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, RankedCandidate
from testaug.core.run_folder import RunFolder
from testaug.review.selection import Sampled, draws_beside, generator_group, read_draws

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Label:
    """A person's verdict on a generated case, with the ranker's P(valid) of it (1: none)
    and how the case was drawn for people (`random`: the calibration sample)."""

    case_id: str
    p_valid: float
    valid: bool
    sampled: Sampled


@dataclass(frozen=True)
class ValidityEvidence:
    """Per case id, its generator setting and P(valid); per generator setting, people's labels."""

    generator: dict[str, str] = field(default_factory=dict)
    p_valid: dict[str, float] = field(default_factory=dict)
    labels: dict[str, list[Label]] = field(default_factory=dict)

    def labels_of(self, generator: str | None) -> list[Label]:
        """People's labels of a generator's cases, however drawn; every generator's where
        it is not known."""
        if generator is None:
            return [label for labels in self.labels.values() for label in labels]
        return list(self.labels.get(generator, ()))

    def random_labels(self, generator: str | None) -> list[Label]:
        """People's labels of a generator's cases that were drawn at random (its
        calibration sample): the only ones that stand for the generator's cases."""
        return [label for label in self.labels_of(generator) if label.sampled == "random"]


def validity_evidence(ranked: Path | None, annotations: Path | None) -> ValidityEvidence | None:
    """The evidence in a ranking and its annotations (None where neither file exists). A
    person's latest verdict on a candidate counts; a corrected label makes the generated
    case invalid as it was proposed. How each case was drawn is read from the draws file
    beside the annotations; a case without a draw was not drawn at random."""
    ranked = ranked if ranked is not None and ranked.is_file() else None
    annotations = annotations if annotations is not None and annotations.is_file() else None
    if ranked is None and annotations is None:
        return None
    items = list(read_jsonl(ranked, RankedCandidate)) if ranked is not None else []
    generator = {item.candidate.id: generator_group(item.candidate) for item in items}
    p_valid = {item.candidate.id: item.p_valid for item in items if item.p_valid is not None}
    proposed = {item.candidate.id: item.candidate.label for item in items}
    latest: dict[str, Annotation] = {}
    for record in read_jsonl(annotations, Annotation) if annotations is not None else ():
        if record.origin == "ranker":
            continue
        before = latest.get(record.candidate_id)
        if before is None or record.created_at >= before.created_at:
            latest[record.candidate_id] = record
    draws = read_draws(draws_beside(annotations)) if annotations is not None else {}
    labels: dict[str, list[Label]] = {}
    for case_id, record in latest.items():
        if case_id not in generator:
            continue
        corrected = record.corrected_label is not None and record.corrected_label != proposed.get(
            case_id
        )
        draw = draws.get(case_id)
        labels.setdefault(generator[case_id], []).append(
            Label(
                case_id,
                p_valid.get(case_id, 1.0),
                record.valid and not corrected,
                draw.sampled if draw is not None else "ranked",
            )
        )
    everyone = [label for group in labels.values() for label in group]
    logger.info(
        "validity evidence: %d ranked candidates, %d people's labels (%d drawn at random)",
        len(items),
        len(everyone),
        sum(label.sampled == "random" for label in everyone),
    )
    return ValidityEvidence(generator=generator, p_valid=p_valid, labels=labels)


def run_validity(folder: Path) -> ValidityEvidence | None:
    """The validity evidence of a run folder (its ranked.jsonl and annotations.jsonl)."""
    run = RunFolder(folder)
    return validity_evidence(run.ranked, run.annotations)
