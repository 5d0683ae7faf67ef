"""How diverse a set of test cases is: Self-BLEU and unique dependency paths, overall and by group.

Groups are any combination of capability, description and source (template,
llm, expansion). Both measures grow or shrink with the number of cases, so, as
the TestAug paper does, the cases are first sub-sampled to the same number per
description within every compared group (seeded), and that number is reported.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, get_args

from testaug.core.errors import TestAugError
from testaug.core.records import Record, TestCase
from testaug.diversity.dependency_paths import paths_per_text
from testaug.diversity.self_bleu import Variant, sampled_self_bleu, self_bleu

if TYPE_CHECKING:
    from spacy.language import Language

logger = logging.getLogger(__name__)

Dimension = Literal["capability", "description", "source"]
DIMENSIONS: tuple[Dimension, ...] = get_args(Dimension)


class DiversityRow(Record):
    """The diversity of one group of cases (the whole input when `group` is empty)."""

    group: dict[str, str]
    description_id: str | None = None
    n_cases: int
    n_descriptions: int
    self_bleu: float
    self_bleu_ci: tuple[float, float] | None = None
    self_bleu_sampled: int | None = None
    dependency_paths: int


class DiversityMeasures(Record):
    """The measures of one set of cases as diversity.json writes them (a row without group)."""

    n_cases: int
    n_descriptions: int
    self_bleu: float
    self_bleu_ci: tuple[float, float] | None = None
    self_bleu_sampled: int | None = None
    dependency_paths: int


class DiversitySummary(DiversityMeasures):
    """diversity.json (`testaug suite diversity --json`): the whole input's measures and the
    settings first, then the equalized input (`equalized`) and one equalized row per group."""

    variant: Variant
    max_order: int
    seed: int
    by: tuple[Dimension, ...]
    per_description: int | None
    n_input: int
    n_short_cells: int = 0
    equalized: DiversityMeasures
    groups: tuple[DiversityRow, ...]


class DiversityReport(Record):
    """Diversity of the whole input and of each group, with the settings used.

    `whole` measures every input case. `overall` and `groups` are measured on the same
    equalized cases, so groups compare fairly: `n_cases` of `n_input`,
    `per_description` per description within each group (None: every case).
    `n_short_cells` counts descriptions that had fewer cases than that in some group.
    """

    variant: Variant
    max_order: int
    seed: int
    by: tuple[Dimension, ...]
    per_description: int | None
    n_input: int
    n_cases: int
    n_short_cells: int = 0
    whole: DiversityRow
    overall: DiversityRow
    groups: tuple[DiversityRow, ...]


def parse_dimensions(text: str) -> tuple[Dimension, ...]:
    """`capability,source` as a tuple of dimensions; raise TestAugError naming a bad one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    for name in names:
        if name not in DIMENSIONS:
            raise TestAugError(f"cannot group by {name!r} (use {', '.join(DIMENSIONS)})")
    return tuple(dict.fromkeys(names))  # type: ignore[arg-type]  # checked above


def group_key(case: TestCase, by: Sequence[Dimension]) -> tuple[str, ...]:
    """The case's value on each grouping dimension (descriptions by id)."""
    values = {
        "capability": case.capability,
        "description": case.description_id,
        "source": case.source,
    }
    return tuple(values[dimension] for dimension in by)


def bleu_text(case: TestCase) -> str:
    """The text Self-BLEU compares: the input, or a pair's two inputs joined by a space."""
    return case.text if case.text_pair is None else f"{case.text} {case.text_pair}"


def _cells(cases: Sequence[TestCase], by: Sequence[Dimension]) -> dict[tuple[str, ...], list[int]]:
    """Indices of the cases by description, and by source when grouping by source: the units
    that size control equalizes (a description lies in one capability)."""
    cells: dict[tuple[str, ...], list[int]] = {}
    for index, case in enumerate(cases):
        key = (case.description_id, case.source) if "source" in by else (case.description_id,)
        cells.setdefault(key, []).append(index)
    return cells


def smallest_cell(cases: Sequence[TestCase], by: Sequence[Dimension] = ()) -> int:
    """The fewest cases any description has within any group: the default per-description size."""
    cells = _cells(cases, by)
    return min((len(indices) for indices in cells.values()), default=0)


def equalize(
    cases: Sequence[TestCase],
    *,
    per_description: int,
    seed: int = 0,
    by: Sequence[Dimension] = (),
) -> list[TestCase]:
    """A seeded sample of `per_description` cases of each description within each group.

    A description with fewer cases keeps them all. Each (description, group) cell
    samples with its own generator seeded by (seed, cell), so its sample does not
    depend on the other cells. Cases keep their input order.
    """
    return [
        cases[i]
        for i in equalized_indices(cases, per_description=per_description, seed=seed, by=by)
    ]


def equalized_indices(
    cases: Sequence[TestCase], *, per_description: int, seed: int = 0, by: Sequence[Dimension] = ()
) -> list[int]:
    """The positions of the cases that `equalize` keeps, in input order."""
    if per_description < 1:
        raise TestAugError(f"per_description must be at least 1, not {per_description}")
    kept: list[int] = []
    for key, indices in _cells(cases, by).items():
        if len(indices) > per_description:
            rng = random.Random(f"{seed}:{'/'.join(key)}")
            indices = rng.sample(indices, per_description)
        kept.extend(indices)
    return sorted(kept)


def diversity_report(
    cases: Sequence[TestCase],
    *,
    by: Sequence[Dimension] = (),
    per_description: int | None = None,
    equalize_sizes: bool = True,
    seed: int = 0,
    variant: Variant = "sacrebleu",
    max_order: int = 4,
    sample: int | None = None,
    nlp: Language | None = None,
    batch_size: int = 256,
) -> DiversityReport:
    """Self-BLEU and dependency paths of the cases, overall and per group, sizes controlled.

    With `equalize_sizes`, every description keeps `per_description` cases within
    every group (default: the smallest such count). Groups larger than `sample`
    get a sampled Self-BLEU with its 95% interval instead of the exact value.
    """
    if not cases:
        raise TestAugError("no cases to measure")
    by = tuple(by)
    n_short = 0
    if equalize_sizes:
        size = per_description or smallest_cell(cases, by)
        n_short = sum(len(cell) < size for cell in _cells(cases, by).values())
        kept = equalized_indices(cases, per_description=size, seed=seed, by=by)
    else:
        size, kept = None, list(range(len(cases)))
    logger.info("measuring diversity of %d cases (%d equalized)", len(cases), len(kept))
    all_paths = _paths_per_case(cases, nlp, batch_size)
    chosen = [cases[i] for i in kept]
    paths = [all_paths[i] for i in kept]

    def row(indices: list[int], group: dict[str, str], description_id: str | None) -> DiversityRow:
        return _row(chosen, paths, indices, group, description_id, variant, max_order, sample, seed)

    whole = _row(
        cases, all_paths, list(range(len(cases))), {}, None, variant, max_order, sample, seed
    )

    groups: dict[tuple[str, ...], list[int]] = {}
    for index, case in enumerate(chosen):
        groups.setdefault(group_key(case, by), []).append(index)
    rows = []
    if by:
        for key, indices in groups.items():
            first = chosen[indices[0]]
            labels = dict(zip(by, key, strict=True))
            if "description" in labels:
                labels["description"] = first.description
            rows.append(row(indices, labels, first.description_id if "description" in by else None))
    return DiversityReport(
        variant=variant,
        max_order=max_order,
        seed=seed,
        by=by,
        per_description=size,
        n_input=len(cases),
        n_cases=len(chosen),
        n_short_cells=n_short,
        whole=whole,
        overall=row(list(range(len(chosen))), {}, None),
        groups=tuple(rows),
    )


def _paths_per_case(
    cases: Sequence[TestCase], nlp: Language | None, batch_size: int
) -> list[frozenset[tuple[str, ...]]]:
    """Each case's dependency paths (both inputs of a pair), parsing each distinct text once."""
    inputs = [(case.text, case.text_pair) for case in cases]
    distinct = list(dict.fromkeys(t for pair in inputs for t in pair if t is not None))
    parsed = dict(zip(distinct, paths_per_text(distinct, nlp, batch_size=batch_size), strict=True))
    return [
        parsed[text] | (parsed[pair] if pair is not None else frozenset()) for text, pair in inputs
    ]


def _row(
    cases: Sequence[TestCase],
    paths: Sequence[frozenset[tuple[str, ...]]],
    indices: list[int],
    group: dict[str, str],
    description_id: str | None,
    variant: Variant,
    max_order: int,
    sample: int | None,
    seed: int,
) -> DiversityRow:
    """Measure the cases at `indices`: exact Self-BLEU, or sampled beyond `sample` cases."""
    texts = [bleu_text(cases[index]) for index in indices]
    found: set[tuple[str, ...]] = set()
    for index in indices:
        found |= paths[index]
    ci, sampled = None, None
    if sample is not None and len(texts) > sample:
        estimate = sampled_self_bleu(
            texts, sample=sample, seed=seed, max_order=max_order, variant=variant
        )
        score, ci, sampled = estimate.mean, (estimate.ci_low, estimate.ci_high), estimate.n_sampled
    else:
        score = self_bleu(texts, max_order=max_order, variant=variant)
    return DiversityRow(
        group=group,
        description_id=description_id,
        n_cases=len(indices),
        n_descriptions=len({cases[index].description_id for index in indices}),
        self_bleu=score,
        self_bleu_ci=ci,
        self_bleu_sampled=sampled,
        dependency_paths=len(found),
    )


def diversity_summary(report: DiversityReport) -> DiversitySummary:
    """What diversity.json holds: the whole input's measures and the settings first, then
    the equalized input (`equalized`) and one equalized row per group."""
    row_only = {"group", "description_id"}
    return DiversitySummary(
        **report.whole.model_dump(exclude=row_only),
        **report.model_dump(exclude={"whole", "overall", "groups", "n_cases"}),
        equalized=DiversityMeasures(**report.overall.model_dump(exclude=row_only)),
        groups=report.groups,
    )
