"""The active loop: after a batch of annotations, retrain the ensemble on everything people
have judged so far and re-rank the candidates still waiting for a person."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rankers.ensemble import Ensemble, EnsembleConfig
from rankers.ensemble_training import train_ensemble
from testaug.core.jsonl import read_jsonl
from testaug.core.records import Annotation, Candidate, LabelledCandidate, RankedCandidate
from testaug.core.run_folder import RunFolder
from testaug.review.plans import read_annotations
from testaug.review.selection import Draw, draws_beside, read_draws
from testaug.review.verdicts import Verdict, decide

PEOPLE_WEIGHT = 1.0  # a person's verdict against one `extra` labelled record, in training


def labelled_from_verdicts(
    candidates: Mapping[str, Candidate],
    verdicts: Mapping[str, Verdict],
    draws: Mapping[str, Draw] | None = None,
) -> list[LabelledCandidate]:
    """Training records from people's verdicts (the ranker's own acceptances are left out).

    A candidate kept with a corrected label was invalid as proposed: it trains as
    invalid with reason `label`. Disputed candidates are left out, as the paper does.
    Each record says how its candidate was drawn for people (`draws`); one without a
    draw was picked from the top of a ranking, so it is no random sample.
    """
    labelled = []
    draws = draws or {}
    for cid, verdict in verdicts.items():
        if verdict.decided_by != "people" or cid not in candidates:
            continue
        candidate = candidates[cid]
        sampled = draws[cid].sampled if cid in draws else "ranked"
        if verdict.status == "accepted" and verdict.label == candidate.label:
            record = LabelledCandidate(candidate=candidate, valid=True, sampled=sampled)
        elif verdict.status == "accepted":
            record = LabelledCandidate(
                candidate=candidate, valid=False, reason="label", sampled=sampled
            )
        else:
            record = LabelledCandidate(candidate=candidate, valid=False, sampled=sampled)
        labelled.append(record)
    return labelled


@dataclass(frozen=True)
class ActiveRound:
    """One round of the loop: the retrained ensemble and the pending candidates re-ranked."""

    ensemble: Ensemble
    reranked: list[RankedCandidate]
    from_people: int
    from_extra: int


def retrain_and_rerank(
    ranked: Sequence[RankedCandidate],
    annotations: Iterable[Annotation],
    config: EnsembleConfig,
    folder: Path,
    *,
    extra: Sequence[LabelledCandidate] = (),
    people_weight: float = PEOPLE_WEIGHT,
    batch_size: int = 64,
    draws: Mapping[str, Draw] | None = None,
) -> ActiveRound:
    """Train on `extra` plus people's verdicts so far (theirs win on the same candidate),
    then rank every candidate no person has judged yet.

    Each person's verdict weighs `people_weight` times as much in training as one record
    of `extra` (default 1: alike). Weighing them up (3, 10, 30) was measured with
    benchmarks/triage.py on generators held out of `extra`: 50-200 of their verdicts moved
    the gap closed on the rest of their candidates by -5 to +3 points, so it stays 1.
    """
    if people_weight <= 0:
        raise ValueError(f"people_weight must be positive, got {people_weight}")
    candidates = {item.candidate.id: item.candidate for item in ranked}
    verdicts = decide(annotations, candidates)
    judged = labelled_from_verdicts(candidates, verdicts, draws)
    judged_ids = {item.candidate.id for item in judged}
    base = [item for item in extra if item.candidate.id not in judged_ids]
    weights = None
    if people_weight != 1.0 and base and judged:
        weights = [1.0] * len(base) + [people_weight] * len(judged)
    ensemble = train_ensemble([*base, *judged], config, folder, sample_weight=weights)
    pending = [
        candidate
        for cid, candidate in candidates.items()
        if verdicts[cid].decided_by != "people" and verdicts[cid].status != "disputed"
    ]
    reranked = ensemble.rank(pending, batch_size=batch_size) if pending else []
    return ActiveRound(ensemble, reranked, from_people=len(judged), from_extra=len(base))


def labelled_from_runs(run_dirs: Iterable[Path]) -> list[LabelledCandidate]:
    """People's verdicts of every run folder that has annotations.jsonl and ranked.jsonl,
    as training records (the newest run wins where two judged the same candidate)."""
    labelled: dict[str, LabelledCandidate] = {}
    for run_dir in sorted(run_dirs, key=lambda d: d.stat().st_mtime):
        run = RunFolder(run_dir)
        annotations, ranked = run.annotations, run.ranked
        if not (annotations.is_file() and ranked.is_file()):
            continue
        candidates = {
            item.candidate.id: item.candidate for item in read_jsonl(ranked, RankedCandidate)
        }
        verdicts = decide(read_annotations(annotations), candidates)
        draws = read_draws(draws_beside(annotations))
        for item in labelled_from_verdicts(candidates, verdicts, draws):
            labelled[item.candidate.id] = item
    return list(labelled.values())
