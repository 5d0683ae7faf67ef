"""A suite's test cases: streamed from its templates, and counted without expanding."""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import BaseModel

from testaug.core.errors import InputError, Problem, close_names, did_you_mean
from testaug.core.records import Suite, TestCase
from testaug.suites.templates import expand as expand_template
from testaug.suites.templates import fill_space, tags

logger = logging.getLogger(__name__)


class DescriptionCount(BaseModel):
    """How many templates and cases one description has."""

    capability: str
    description: str
    description_id: str
    templates: int
    cases: int


class SuiteStats(BaseModel):
    """Counts of a suite or case file: capabilities, descriptions, templates, cases."""

    task: str
    capabilities: int
    descriptions: int
    templates: int
    cases: int
    per_description: list[DescriptionCount]


def template_case_counts(suite: Suite) -> dict[str, int]:
    """How many cases each template yields with the suite's lexicons (its full product), by id."""
    words = suite.words()
    return {
        template.id: fill_space(
            tags(template.text, template.text_pair), words, template.distinct_copies
        ).count
        for description in suite.descriptions()
        for template in description.templates
    }


def capability_names(capabilities: str | Iterable[str] | None) -> tuple[str, ...]:
    """The capabilities named, in order, each once: a string is one capability, not its
    letters."""
    if capabilities is None:
        return ()
    if isinstance(capabilities, str):
        return (capabilities,)
    return tuple(dict.fromkeys(capabilities))


def check_capabilities(
    named: Iterable[str],
    known: Iterable[str],
    *,
    where: Path | str | None = None,
    field: str | None = None,
    within: str = "",
) -> None:
    """An InputError for each of the `named` capabilities not `known` (of what `within`
    names, such as a suite), with the closest known names (all of them, when none is
    close)."""
    choices = sorted(set(known))
    problems = []
    for name in named:
        if name in choices:
            continue
        hint = did_you_mean(close_names(name, choices))
        if not hint:
            hint = f"; the capabilities are {', '.join(repr(c) for c in choices) or 'none'}"
        place = f" in {within}" if within else ""
        problems.append(Problem(f"no capability {name!r}{place}{hint}", where, field=field))
    if problems:
        raise InputError(problems)


def expand_suite(
    suite: Suite, *, per_template: int | None = None, seed: int = 0
) -> Iterator[TestCase]:
    """Stream the suite's cases: every fill, or a seeded sample of `per_template` per template.

    Each template samples with its own generator seeded by (seed, template id), so
    its sample does not depend on the rest of the suite. A case whose text another
    template already produced (same id) is yielded once, the first time.
    """
    words = suite.words()
    seen: set[str] = set()
    duplicates = 0
    for description in suite.descriptions():
        for template in description.templates:
            rng = random.Random(f"{seed}:{template.id}")
            for (text, text_pair), fills in expand_template(
                (template.text, template.text_pair),
                words,
                distinct=template.distinct_copies,
                n=per_template,
                rng=rng,
            ):
                case = TestCase(
                    task=suite.task,
                    capability=description.capability,
                    description_id=description.id,
                    description=description.text,
                    text=text or "",
                    text_pair=text_pair,
                    label=template.label,
                    test_type=description.test_type,
                    source=suite.source,
                    template_id=template.id,
                    template=template.text,
                    template_pair=template.text_pair,
                    fills=fills,
                )
                if case.id in seen:
                    duplicates += 1
                    continue
                seen.add(case.id)
                yield case
    if duplicates:
        logger.info("skipped %d duplicate cases (same text from two templates)", duplicates)


def suite_stats(suite: Suite) -> SuiteStats:
    """Count a suite's capabilities, descriptions, templates and cases (full products)."""
    counts = template_case_counts(suite)
    rows = [
        DescriptionCount(
            capability=d.capability,
            description=d.text,
            description_id=d.id,
            templates=len(d.templates),
            cases=sum(counts[t.id] for t in d.templates),
        )
        for d in suite.descriptions()
    ]
    return _stats(suite.task, rows)


def case_stats(cases: Iterable[TestCase]) -> SuiteStats:
    """Count the capabilities, descriptions, templates and distinct cases of a case file."""
    rows: dict[str, DescriptionCount] = {}
    templates: dict[str, set[str]] = {}
    seen: set[str] = set()
    task = ""
    for case in cases:
        task = task or case.task
        row = rows.setdefault(
            case.description_id,
            DescriptionCount(
                capability=case.capability,
                description=case.description,
                description_id=case.description_id,
                templates=0,
                cases=0,
            ),
        )
        if case.id not in seen:
            seen.add(case.id)
            row.cases += 1
        if case.template_id:
            templates.setdefault(case.description_id, set()).add(case.template_id)
    for did, row in rows.items():
        row.templates = len(templates.get(did, ()))
    return _stats(task, list(rows.values()))


def _stats(task: str, rows: list[DescriptionCount]) -> SuiteStats:
    return SuiteStats(
        task=task,
        capabilities=len({r.capability for r in rows}),
        descriptions=len(rows),
        templates=sum(r.templates for r in rows),
        cases=sum(r.cases for r in rows),
        per_description=rows,
    )
