"""The rank step: candidates ordered most-likely-invalid first by a trained ensemble, with
its calibration evidence beside the ranking; in the active loop, what is pending re-ranked
by an ensemble retrained on people's verdicts so far."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, read_jsonl_parts, write_jsonl
from testaug.core.records import (
    Candidate,
    LabelledCandidate,
    RankedCandidate,
    Record,
    TestCase,
)
from testaug.core.runs import sibling, write_text_atomic
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.task_labels import checked

if TYPE_CHECKING:
    from rankers.ensemble import Ensemble

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"basis_counts", "write_calibration"})


class RankSummary(StepSummary):
    """The ensemble that ranked the candidates; for a retrained one, the verdicts of people
    and the other labelled candidates it learnt from."""

    kind: Literal["rank"] = "rank"
    ensemble: str
    from_people: int | None = None
    from_extra: int | None = None
    bases: dict[str, int] = Field(default_factory=dict)  # what the order rests on, how many


def basis_counts(ranked: Sequence[RankedCandidate]) -> dict[str, int]:
    """How many ranked candidates each triage basis covers (stacked, or a weak prior)."""
    return dict(Counter(item.triage_basis for item in ranked if item.triage_basis))


class RankConfig(Record):
    """A ranking: the candidates' file, the trained ensemble's folder (`rankers`), where
    the ranking goes (`out`), the seed cases neighbour members compare candidates with
    (`cases`; default: the bundled suites') and the scoring batch size."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    candidates: Path
    rankers: Path
    out: Path
    cases: Path | None = None
    batch_size: int = Field(default=64, ge=1)


class RetrainConfig(Record):
    """A re-ranking in the active loop: the ranking (`ranked`) and the verdicts so far
    (`annotations`), where the new ranking goes (`out`), the ensemble config retrained
    (`ensemble`: a shipped name or a YAML file), the folder the retrained ensemble goes in
    (`rankers_out`) and other labelled candidates it learns from (`extra`)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out", "rankers_out")

    ranked: Path
    annotations: Path
    out: Path
    ensemble: str
    rankers_out: Path
    extra: Path | None = None


def rank_candidates(config: RankConfig) -> StepOutput:
    """Candidates ordered most-likely-invalid first by the ensemble's Borda count, each with
    the ensemble's calibrated P(valid); the seed cases in `config.cases` are what neighbour
    members compare candidates with (default: the bundled suites'). The ensemble's
    calibration evidence is written beside (`<out>.calibration.json`). An empty candidates
    file is an error that leaves both as they were."""
    from rankers.ensemble import Ensemble

    candidates_path, cases_path, out = config.candidates, config.cases, config.out
    candidates = checked(read_jsonl(candidates_path, Candidate), candidates_path)
    if not candidates:  # an earlier ranking at `out` stays as it was
        raise InputError(Problem("no candidates in the file", file=candidates_path))
    reference = (
        None if cases_path is None else checked(read_jsonl(cases_path, TestCase), cases_path)
    )
    ensemble = Ensemble.load(config.rankers)
    ranked = ensemble.rank(candidates, batch_size=config.batch_size, reference=reference)
    write_jsonl(out, ranked)
    files = write_calibration(ensemble, out)
    logger.info("ranked %d candidates with ensemble %s", len(ranked), ensemble.version)
    summary = RankSummary(ensemble=ensemble.version, bases=basis_counts(ranked))
    return step_output("rank", out, len(ranked), files=files, summary=summary)


def retrain_ranking(config: RetrainConfig) -> StepOutput:
    """Active loop: retrain the ensemble (`config.ensemble`: a shipped name or a YAML file)
    into `config.rankers_out` on every verdict of people so far (and the labelled candidates
    in `config.extra`), then re-rank what is pending into `config.out`, its calibration
    beside it."""
    from rankers.active import retrain_and_rerank
    from rankers.ensemble import load_config
    from testaug.review.plans import read_annotations
    from testaug.review.run_files import read_ranked
    from testaug.review.selection import draws_beside, read_draws

    out, extra_path = config.out, config.extra
    extra = list(read_jsonl_parts(extra_path, LabelledCandidate)) if extra_path else []
    result = retrain_and_rerank(
        read_ranked(config.ranked),
        read_annotations(config.annotations),
        load_config(config.ensemble),
        config.rankers_out,
        extra=extra,
        draws=read_draws(draws_beside(config.annotations)),
    )
    write_jsonl(out, result.reranked)
    return step_output(
        "rank",
        out,
        len(result.reranked),
        files=write_calibration(result.ensemble, out),
        summary=RankSummary(
            ensemble=result.ensemble.version,
            from_people=result.from_people,
            from_extra=result.from_extra,
            bases=basis_counts(result.reranked),
        ),
    )


def write_calibration(ensemble: Ensemble, ranked_path: Path) -> dict[str, Path]:
    """The ensemble's calibration evidence beside a ranking (`<ranked>.calibration.json`),
    by role; nothing when the ensemble has no calibration."""
    if ensemble.calibration is None:
        return {}
    path = sibling(ranked_path, "calibration", ".json")
    write_text_atomic(path, ensemble.calibration.evidence.model_dump_json(indent=1) + "\n")
    return {"calibration": path}
