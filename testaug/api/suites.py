"""Suites and their cases in memory: load a suite (a file, a folder or a shipped name),
expand its templates into test cases, and read or write cases as JSONL."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from testaug.core.records import Suite, TestCase

# What the functions take as cases: the records, a JSONL file of them, or a suite (a
# `Suite`, or a file, folder or shipped name) whose templates are filled.
Cases = Iterable[TestCase] | Suite | str | Path


def load_suite(suite: str | Path) -> Suite:
    """A suite from a YAML file, a folder holding suite.yaml, or a shipped name
    (`sentiment`, `paraphrase`, `nli`), as the CLI takes it."""
    from testaug.core.bundled import resolve_suite
    from testaug.suites.load import load_suite as read_suite

    return read_suite(resolve_suite(suite))


def suite_names() -> list[str]:
    """The names of the shipped suites."""
    from testaug.core.bundled import bundled_suites

    return bundled_suites()


def expand(
    suite: Suite | str | Path,
    *,
    per_template: int | None = None,
    seed: int = 0,
    capabilities: str | Iterable[str] = (),
    out: str | Path | None = None,
) -> list[TestCase]:
    """The suite's templates filled into test cases: every fill, or a seeded sample of
    `per_template` per template; only the `capabilities` named (all when none; a string
    is one), each of which the suite must have. With `out`, the cases are also written
    there as JSONL."""
    from testaug.suites.cases import capability_names, check_capabilities, expand_suite

    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    wanted = capability_names(capabilities)
    check_capabilities(wanted, (c.name for c in loaded.capabilities))
    cases = [
        case
        for case in expand_suite(loaded, per_template=per_template, seed=seed)
        if not wanted or case.capability in wanted
    ]
    if out is not None:
        write_cases(cases, out)
    return cases


def read_cases(path: str | Path) -> list[TestCase]:
    """The test cases of a JSONL file."""
    from testaug.core.jsonl import read_jsonl

    return list(read_jsonl(Path(path), TestCase))


def write_cases(cases: Iterable[TestCase], path: str | Path) -> int:
    """Write the cases as JSONL (atomically); how many were written."""
    from testaug.core.jsonl import write_jsonl

    return write_jsonl(Path(path), cases)


def cases_file(cases: Cases, where: Path) -> Path:
    """A JSONL file of the cases: the file given, else the cases (or the suite's, every
    fill) written to `where`."""
    if isinstance(cases, (str, Path)) and _is_cases_file(Path(cases)):
        return Path(cases)
    if isinstance(cases, (Suite, str, Path)):
        cases = expand(cases)
    where.parent.mkdir(parents=True, exist_ok=True)
    write_cases(cases, where)
    return where


def _is_cases_file(path: Path) -> bool:
    return path.suffix == ".jsonl" and path.is_file()
