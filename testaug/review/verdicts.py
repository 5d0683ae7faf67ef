"""Verdicts from annotations: the majority of people, or else the ranker's acceptance;
disagreements, Cohen's kappa between annotators, and accepted candidates as suite cases."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from testaug.core.errors import InputError
from testaug.core.records import Annotation, Candidate, Label, Record, TestCase

Status = Literal["accepted", "rejected", "disputed", "pending"]
INVALID = "invalid"


class Verdict(Record):
    """What became of one candidate. `votes` maps each person to "invalid" or the label
    they accept it with; `label` is the label it joins the suite with."""

    candidate_id: str
    status: Status
    decided_by: Literal["people", "ranker"] | None = None
    label: Label | None = None
    votes: dict[str, Label] = Field(default_factory=dict)

    @property
    def disagreement(self) -> bool:
        """People gave different verdicts (even if a majority settled it)."""
        return len({_hashable(vote) for vote in self.votes.values()}) > 1


class Agreement(Record):
    """How two annotators agreed on the candidates both of them judged valid or invalid."""

    annotator_a: str
    annotator_b: str
    overlap: int
    observed: float
    kappa: float | None


def vote_of(annotation: Annotation, proposed: Label | None) -> Label:
    """A person's vote: "invalid", or the label they keep the candidate with.

    A valid verdict keeps the proposed label unless it corrects it; an invalid one for
    a wrong label, with a corrected label, keeps the candidate with the correction.
    """
    if annotation.valid:
        return annotation.corrected_label or proposed or INVALID
    if annotation.reason == "label" and annotation.corrected_label:
        return annotation.corrected_label
    return INVALID


def decide(
    annotations: Iterable[Annotation], candidates: Mapping[str, Candidate]
) -> dict[str, Verdict]:
    """A verdict for every candidate, and for every annotated candidate id.

    People outrank the ranker: where anyone annotated a candidate, the strict
    majority of their votes decides, and a tie is `disputed` (the paper discards
    such cases). Where only the ranker did, the candidate is accepted as proposed.
    Where the ranker rejected it (annotation files of older `auto` runs; the ranker now
    only accepts), it is rejected by the ranker.
    Candidates nobody judged (sent for review, skipped, cancelled) stay `pending`.
    """
    people: dict[str, dict[str, Annotation]] = defaultdict(dict)
    ranker: dict[str, bool] = {}
    for record in annotations:
        if record.origin == "ranker":
            ranker[record.candidate_id] = record.valid
        else:
            people[record.candidate_id][f"{record.origin}:{record.annotator}"] = record
    verdicts: dict[str, Verdict] = {}
    for cid in dict.fromkeys([*candidates, *people, *ranker]):
        proposed = candidates[cid].label if cid in candidates else None
        if cid in people:
            votes = {who: vote_of(a, proposed) for who, a in sorted(people[cid].items())}
            verdicts[cid] = _majority(cid, votes)
        elif ranker.get(cid):
            verdicts[cid] = Verdict(
                candidate_id=cid, status="accepted", decided_by="ranker", label=proposed
            )
        elif cid in ranker:
            verdicts[cid] = Verdict(candidate_id=cid, status="rejected", decided_by="ranker")
        else:
            verdicts[cid] = Verdict(candidate_id=cid, status="pending")
    return verdicts


def _majority(candidate_id: str, votes: dict[str, Label]) -> Verdict:
    counts = Counter(_hashable(vote) for vote in votes.values()).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return Verdict(candidate_id=candidate_id, status="disputed", votes=votes)
    winner = counts[0][0]
    if winner == INVALID:
        return Verdict(
            candidate_id=candidate_id, status="rejected", decided_by="people", votes=votes
        )
    return Verdict(
        candidate_id=candidate_id, status="accepted", decided_by="people", label=winner, votes=votes
    )


def _hashable(vote: Label) -> Hashable:
    return vote if isinstance(vote, str) else tuple(vote)


def status_counts(verdicts: Mapping[str, Verdict]) -> dict[str, int]:
    """How many candidates are accepted or rejected (by people, by the ranker), disputed, pending."""
    counts = Counter(
        f"{v.status} by {v.decided_by}" if v.decided_by else v.status for v in verdicts.values()
    )
    keys = [
        "accepted by people",
        "accepted by ranker",
        "rejected by people",
        "rejected by ranker",
        "disputed",
        "pending",
    ]
    return {key: counts.get(key, 0) for key in keys}


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters over the same items; None when chance agreement is 1."""
    if len(a) != len(b):
        raise ValueError("both raters must rate the same items")
    if not a:
        return None
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in count_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def pairwise_agreement(annotations: Iterable[Annotation]) -> list[Agreement]:
    """Observed agreement and Cohen's kappa on valid/invalid for every pair of people
    who judged at least one candidate in common."""
    judged: dict[str, dict[str, bool]] = defaultdict(dict)
    for record in annotations:
        if record.origin != "ranker":
            judged[f"{record.origin}:{record.annotator}"][record.candidate_id] = record.valid
    rows = []
    for first, second in itertools.combinations(sorted(judged), 2):
        common = sorted(judged[first].keys() & judged[second].keys())
        if not common:
            continue
        a = [judged[first][cid] for cid in common]
        b = [judged[second][cid] for cid in common]
        rows.append(
            Agreement(
                annotator_a=first,
                annotator_b=second,
                overlap=len(common),
                observed=sum(x == y for x, y in zip(a, b, strict=True)) / len(common),
                kappa=cohen_kappa(a, b),
            )
        )
    return rows


def accepted_cases(
    candidates: Iterable[Candidate], verdicts: Mapping[str, Verdict]
) -> list[TestCase]:
    """Accepted candidates as suite cases of source `llm`, with any corrected label."""
    cases = []
    for candidate in candidates:
        verdict = verdicts.get(candidate.id)
        if verdict is None or verdict.status != "accepted":
            continue
        meta = {
            "prompt_id": candidate.prompt_id,
            "seed_case_ids": list(candidate.seed_case_ids),
            "backend": candidate.backend,
            "model": candidate.model,
            "accepted_by": verdict.decided_by,
        }
        label = verdict.label if verdict.label is not None else candidate.label
        if label != candidate.label:
            meta["proposed_label"] = candidate.label
        fields = candidate.model_dump(include=set(TestCase.model_fields) - {"label"})
        cases.append(TestCase(**fields, label=label, source="llm", meta=meta))
    return cases


@dataclass(frozen=True)
class Merge:
    """Every candidate decided, the accepted ones as cases, and the suite with them."""

    verdicts: dict[str, Verdict]
    accepted: list[TestCase]
    suite: list[TestCase]
    added: int


def merge_verdicts(
    annotations: Iterable[Annotation],
    candidates: Mapping[str, Candidate],
    suite: Sequence[TestCase] = (),
) -> Merge:
    """Decide every candidate, turn the accepted ones into cases, and add them to the suite."""
    verdicts = decide(annotations, candidates)
    accepted = accepted_cases(candidates.values(), verdicts)
    merged, added = merge_into_suite(suite, accepted)
    return Merge(verdicts, accepted, merged, added)


def merge_into_suite(
    suite: Sequence[TestCase], new_cases: Iterable[TestCase]
) -> tuple[list[TestCase], int]:
    """The suite with the new cases appended, skipping any already in it; and how many were new."""
    seen = {case.id for case in suite}
    merged = list(suite)
    for case in new_cases:
        if case.id not in seen:
            seen.add(case.id)
            merged.append(case)
    return merged, len(merged) - len(suite)


def check_corrections(
    annotations: Sequence[Annotation], candidates: Mapping[str, Candidate], *, file: Path | str
) -> None:
    """Raise InputError (the annotations file, line, `corrected_label`) for a corrected label
    outside the task of its candidate; annotations of unknown candidates are not checked."""
    from testaug.suites.task_labels import check_labels

    numbered = [
        (line, annotation.corrected_label, candidates[annotation.candidate_id].task)
        for line, annotation in enumerate(annotations, start=1)
        if annotation.corrected_label and annotation.candidate_id in candidates
    ]
    problems = []
    for line, label, task in numbered:
        try:
            check_labels([label], task, file=file, field="corrected_label", lines=[line])
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
