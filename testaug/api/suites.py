"""Suites and their cases in memory: load a suite (a file, a folder or a shipped name),
expand its templates into test cases, and read or write cases as JSONL."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from testaug.api.arguments import (
    api_function,
    case_records,
    check_count,
    check_suite,
    written_from,
)
from testaug.core.records import Suite, TestCase
from testaug.core.run_sizes import SIZES

logger = logging.getLogger(__name__)

# What the functions take as cases: the records, a JSONL file of them, or a suite (a
# `Suite`, or a file, folder or shipped name) whose templates are filled.
Cases = Iterable[TestCase] | Suite | str | Path

# The cases `expand` samples per template unless told otherwise: as many as a default
# `testaug run` takes as seeds (every fill of a shipped suite is 300,000 to 1,400,000).
PER_TEMPLATE = SIZES["default"].per_template
# Every fill of more cases than this is logged as a warning before it starts.
LARGE_EXPANSION = 100_000


@api_function()
def load_suite(suite: str | Path) -> Suite:
    """A suite from a YAML file, a folder holding suite.yaml, or a shipped name
    (`sentiment`, `paraphrase`, `nli`), as the CLI takes it."""
    from testaug.core.bundled import resolve_suite
    from testaug.suites.load import load_suite as read_suite

    check_suite(suite)
    return read_suite(resolve_suite(suite))


def suite_names() -> list[str]:
    """The names of the shipped suites."""
    from testaug.core.bundled import bundled_suites

    return bundled_suites()


@api_function(paths=("out",))
def expand(
    suite: Suite | str | Path,
    *,
    per_template: int | None = PER_TEMPLATE,
    seed: int = 0,
    capabilities: str | Iterable[str] = (),
    out: str | Path | None = None,
) -> list[TestCase]:
    """The suite's templates filled into test cases: a seeded sample of `per_template`
    cases per template (20, the seeds of a default `testaug run`), or every fill with
    `per_template=None` (a shipped suite's every fill is hundreds of thousands of cases and
    takes minutes: more than 100,000 is logged as a warning first); only the
    `capabilities` named (one name, or several; all when none), each of which the suite
    must have. With `out`, the cases are also written there as JSONL."""
    from testaug.suites.cases import expand_suite

    check_count(per_template, "per_template", none="every fill")
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    chosen = with_capabilities(loaded, capabilities)
    if per_template is None:
        warn_of_every_fill(chosen)
    cases = list(expand_suite(chosen, per_template=per_template, seed=seed))
    if out is not None:
        write_cases(cases, out)
    return cases


def with_capabilities(suite: Suite, capabilities: str | Iterable[str]) -> Suite:
    """The suite with only the capabilities named (all when none; a string is one); an
    InputError naming `capabilities` for a name the suite does not have, with the nearest
    ones."""
    from testaug.suites.cases import capability_names, check_capabilities

    wanted = capability_names(capabilities)
    if not wanted:
        return suite
    check_capabilities(
        wanted,
        (c.name for c in suite.capabilities),
        field="capabilities",
        within=f"suite {suite.name!r}",
    )
    kept = tuple(capability for capability in suite.capabilities if capability.name in wanted)
    return suite.model_copy(update={"capabilities": kept})


def warn_of_every_fill(suite: Suite) -> None:
    """Log a warning before every fill of more than `LARGE_EXPANSION` cases."""
    from testaug.suites.cases import template_case_counts

    total = sum(template_case_counts(suite).values())
    if total > LARGE_EXPANSION:
        logger.warning(
            "filling every case of suite %r: %s cases, which takes minutes and gigabytes "
            "(per_template=N samples N per template)",
            suite.name,
            f"{total:,}",
        )


@api_function(paths=("path",))
def read_cases(path: str | Path) -> list[TestCase]:
    """The test cases of a JSONL file."""
    from testaug.core.jsonl import read_jsonl

    return list(read_jsonl(Path(path), TestCase))


@api_function(paths=("path",))
def write_cases(cases: Iterable[TestCase], path: str | Path) -> int:
    """Write the cases as JSONL (atomically); how many were written."""
    from testaug.core.jsonl import write_jsonl

    return write_jsonl(Path(path), case_records(cases))


@contextmanager
def cases_file(cases: Cases, where: Path, name: str = "cases") -> Iterator[Path]:
    """A JSONL file of the cases: the file given, else the cases (or the suite's, sampled
    as `expand` samples by default) written to `where`, and, while the block runs, its
    problems named as the argument `name`'s items; an InputError naming `name` for
    anything that is no cases."""
    if isinstance(cases, str | Path) and _is_cases_file(Path(cases)):
        yield Path(cases)
        return
    suite = isinstance(cases, Suite | str | Path)
    listed = expand(cases) if suite else case_records(cases, name)
    where.parent.mkdir(parents=True, exist_ok=True)
    write_cases(listed, where)
    with written_from(where, name):
        yield where


def _is_cases_file(path: Path) -> bool:
    return path.suffix == ".jsonl" and path.is_file()
