"""Hard cases made by rule from a template suite: candidates whose validity is known by
construction, to teach the validity rankers whether a case fits its description and label
rather than how one generator writes.

For every description of a suite, each hard case is presented as a candidate of that
description (with a generation prompt of its seed cases, as `testaug generate` builds it):

- `other_template` (valid): a case of the description from a template that none of the
  prompt's seed cases came from (another case of a seed template if it has no other);
- `sibling` (invalid: capability): a case of another description of the same capability
  whose label agrees with this one's;
- `sibling_other_label` (invalid: label): a case of another description of the same
  capability whose label does not;
- `other_capability` (invalid: capability): a case of a description of another capability
  with an agreeing label;
- `wrong_label` (invalid: label): a case of this description under a label it does not have.

Every text is a template fill, valid and invalid alike, so surface style cannot tell them
apart. Each text is used once, so candidate ids stay unique. Seeded and reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from testaug.core.records import (
    Candidate,
    Description,
    InvalidReason,
    Label,
    LabelledCandidate,
    Suite,
    TestCase,
    label_options,
)
from testaug.generation.prompts import PromptTemplate, prompt_for
from testaug.generation.seeding import SeedGroup, render_prompt, sample_seeds
from testaug.suites.cases import expand_suite

HardCaseKind = Literal[
    "other_template", "sibling", "sibling_other_label", "other_capability", "wrong_label"
]
BACKEND = "rule"  # the `backend` of every hard case; `model` is "hard-cases:<kind>"
REASONS: dict[HardCaseKind, InvalidReason | None] = {
    "other_template": None,
    "sibling": "capability",
    "sibling_other_label": "label",
    "other_capability": "capability",
    "wrong_label": "label",
}
# How the invalid hard cases of a description are shared among the kinds (in this order
# of preference; a kind the suite cannot make passes its share down the list).
INVALID_SHARES: tuple[tuple[HardCaseKind, float], ...] = (
    ("sibling", 0.3),
    ("sibling_other_label", 0.3),
    ("other_capability", 0.2),
    ("wrong_label", 0.2),
)
CANDIDATES_PER_PROMPT = 4


@dataclass(frozen=True)
class _Pick:
    kind: HardCaseKind
    case: TestCase
    label: Label


def is_hard_case(candidate: Candidate) -> bool:
    """Whether a candidate was made by rule (`hard_cases`) rather than by a generator."""
    return candidate.backend == BACKEND


def hard_cases(
    suite: Suite,
    *,
    per_description: int = 6,
    seed: int = 0,
    per_template: int = 30,
    seeds_per_prompt: int = 3,
    prompt: PromptTemplate | None = None,
) -> list[LabelledCandidate]:
    """`per_description` valid and as many invalid hard cases for every description."""
    template = prompt or prompt_for(suite.task)
    cases = list(expand_suite(suite, per_template=per_template, seed=seed))
    by_description: dict[str, list[TestCase]] = defaultdict(list)
    for case in cases:
        if not any(bracket in case.text + (case.text_pair or "") for bracket in "{}"):
            by_description[case.description_id].append(case)
    descriptions = [d for d in suite.descriptions() if by_description[d.id]]
    used: set[str] = set()
    labelled: list[LabelledCandidate] = []
    for description in descriptions:
        rng = random.Random(f"hard-cases:{seed}:{description.id}")
        picks = _valid_picks(description, by_description, used, per_description, rng)
        picks += _invalid_picks(
            description, descriptions, by_description, suite.labels, used, per_description, rng
        )
        labelled += _as_candidates(
            description, picks, by_description, template, seeds_per_prompt, rng
        )
    return labelled


def _take(pool: Sequence[TestCase], used: set[str], rng: random.Random) -> TestCase | None:
    fresh = [case for case in pool if case.id not in used]
    if not fresh:
        return None
    case = rng.choice(fresh)
    used.add(case.id)
    return case


def _valid_picks(
    description: Description,
    by_description: dict[str, list[TestCase]],
    used: set[str],
    count: int,
    rng: random.Random,
) -> list[_Pick]:
    """Cases of the description, spread over its templates in turn."""
    by_template: dict[str, list[TestCase]] = defaultdict(list)
    for case in by_description[description.id]:
        by_template[case.template_id or case.id].append(case)
    order = sorted(by_template)
    rng.shuffle(order)
    picks: list[_Pick] = []
    for index in range(count * 3):  # a few passes in case some templates run dry
        if len(picks) == count:
            break
        case = _take(by_template[order[index % len(order)]], used, rng)
        if case is not None:
            picks.append(_Pick("other_template", case, description.label))
    return picks


def _agrees(a: Label, b: Label) -> bool:
    return bool(set(label_options(a)) & set(label_options(b)))


def _invalid_picks(
    description: Description,
    descriptions: Sequence[Description],
    by_description: dict[str, list[TestCase]],
    labels: Sequence[str],
    used: set[str],
    count: int,
    rng: random.Random,
) -> list[_Pick]:
    others = [d for d in descriptions if d.id != description.id]
    donors: dict[HardCaseKind, list[Description]] = {
        "sibling": [
            d
            for d in others
            if d.capability == description.capability and _agrees(d.label, description.label)
        ],
        "sibling_other_label": [
            d
            for d in others
            if d.capability == description.capability and not _agrees(d.label, description.label)
        ],
        "other_capability": [
            d
            for d in others
            if d.capability != description.capability and _agrees(d.label, description.label)
        ],
    }
    wrong_labels = [label for label in labels if not _agrees(label, description.label)]
    picks: list[_Pick] = []
    owed, share_so_far = 0, 0.0
    for kind, share in INVALID_SHARES:
        wanted = owed + round((share_so_far + share) * count) - round(share_so_far * count)
        share_so_far += share
        made = 0
        for _ in range(wanted * 4):
            if made == wanted:
                break
            if kind == "wrong_label":
                case = _take(by_description[description.id], used, rng) if wrong_labels else None
                label: Label = rng.choice(wrong_labels) if wrong_labels else description.label
            else:
                if not donors[kind]:
                    break
                donor = rng.choice(donors[kind])
                case, label = _take(by_description[donor.id], used, rng), description.label
            if case is not None:
                picks.append(_Pick(kind, case, label))
                made += 1
        owed = wanted - made
    return picks[:count]


def _as_candidates(
    description: Description,
    picks: Sequence[_Pick],
    by_description: dict[str, list[TestCase]],
    template: PromptTemplate,
    seeds_per_prompt: int,
    rng: random.Random,
) -> list[LabelledCandidate]:
    """The picks as candidates of the description, `CANDIDATES_PER_PROMPT` to a prompt whose
    seed cases are cases of the description other than the prompt's valid candidates."""
    order = list(picks)
    rng.shuffle(order)
    own = by_description[description.id]
    labelled = []
    for start in range(0, len(order), CANDIDATES_PER_PROMPT):
        batch = order[start : start + CANDIDATES_PER_PROMPT]
        texts = {pick.case.id for pick in batch}
        valid_templates = {p.case.template_id for p in batch if p.kind == "other_template"}
        pool = [c for c in own if c.id not in texts and c.template_id not in valid_templates]
        pool = pool or [c for c in own if c.id not in texts]
        group = _seed_group(description, pool)
        prompt = render_prompt(template, group, sample_seeds(group, seeds_per_prompt, rng))
        for pick in batch:
            candidate = Candidate(
                task=pick.case.task,
                capability=description.capability,
                description_id=description.id,
                description=description.text,
                text=pick.case.text,
                text_pair=pick.case.text_pair,
                label=pick.label,
                test_type=description.test_type,
                prompt_id=prompt.id,
                seed_case_ids=prompt.seed_case_ids,
                backend=BACKEND,
                model=f"hard-cases:{pick.kind}",
            )
            reason = REASONS[pick.kind]
            labelled.append(
                LabelledCandidate(
                    candidate=candidate,
                    valid=reason is None,
                    reason=reason,
                    note=_note(pick),
                )
            )
    return labelled


def _seed_group(description: Description, cases: Iterable[TestCase]) -> SeedGroup:
    by_template: dict[str, list[TestCase]] = defaultdict(list)
    for case in cases:
        by_template[case.template_id or case.id].append(case)
    return SeedGroup(
        description.capability,
        description.id,
        description.text,
        description.label,
        dict(by_template),
    )


def _note(pick: _Pick) -> str:
    origin = f"{pick.case.capability} / {pick.case.description}"
    if pick.kind == "other_template":
        return f"rule other_template: a case of this description ({pick.case.template})"
    if pick.kind == "wrong_label":
        return f"rule wrong_label: a case of this description proposed as {pick.label!r}"
    return f"rule {pick.kind}: a case of {origin!r}"
