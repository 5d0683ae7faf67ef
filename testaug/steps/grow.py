"""Steps that grow the suite from accepted cases: templates induced from reused slot
words, filled into new cases (source `expansion`) and added to the suite."""

from __future__ import annotations

import logging
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar, Literal

from testaug.core.bundled import resolve_suite
from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Record, TestCase
from testaug.core.runs import sibling, write_yaml
from testaug.review.verdicts import merge_into_suite
from testaug.steps.contract import StepOutput, StepSummary, step_output
from testaug.suites.builtin_lexicons import builtin_lexicon
from testaug.suites.cases import expand_suite, template_case_counts
from testaug.suites.load import load_suite
from testaug.suites.provenance import case_provenance, with_origin
from testaug.suites.templates import lexicon_of

logger = logging.getLogger(__name__)

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"traced_to_origin"})


class InduceSummary(StepSummary):
    """Templates induced from accepted cases: the cases read, the cases the templates
    fill, the templates per capability, and why cases gave no template."""

    kind: Literal["induce"] = "induce"
    from_cases: int
    fills: int
    per_capability: dict[str, int]
    skipped: dict[str, int]


class ExpandInducedSummary(StepSummary):
    """Cases filled from induced templates: the templates, and the new cases by provenance."""

    kind: Literal["expand-induced"] = "expand-induced"
    templates: int
    provenance: dict[str, int]


class SuiteSummary(StepSummary):
    """The extended suite: the cases added, and every case by source and by provenance."""

    kind: Literal["suite"] = "suite"
    added: int
    by_source: dict[str, int]
    by_provenance: dict[str, int]


class InduceConfig(Record):
    """Templates induced from the accepted cases' file (`accepted`) and their seed cases'
    file (`cases`), written as a suite to `out`; `suite` names the suite whose lexicons
    the templates use (default: the task's shipped suite), and `allow_empty` writes an
    empty suite where no template comes of the cases instead of failing."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    accepted: Path
    cases: Path
    out: Path
    suite: str | None = None
    allow_empty: bool = False


class ExpandInducedConfig(Record):
    """Cases filled from induced templates (the induce step's output, `templates`), leaving
    out those in the `known` case files, written to `out`; a seeded sample of cases per
    template (`per_template`; None: every case)."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    templates: StepOutput
    out: Path
    known: tuple[Path, ...] = ()
    per_template: int | None
    seed: int


class ExtendConfig(Record):
    """A suite's cases file (`suite`) extended with the cases in the `new_cases` files,
    written to `out`."""

    WRITES: ClassVar[tuple[str, ...]] = ("out",)

    suite: Path
    new_cases: tuple[Path, ...]
    out: Path


def induce_templates_file(config: InduceConfig) -> StepOutput:
    """Templates from accepted cases whose text reuses slot words of their seed cases,
    written as a suite (`config.out`, source `expansion`) with its lexicons beside it.

    The summary holds the templates per capability, the cases they fill, and why
    cases gave no template. No accepted case, no seed case or no template is an error
    that leaves earlier outputs as they were, unless `config.allow_empty` (then an empty
    suite is written, with a warning where no template came of accepted cases)."""
    from testaug.core.spacy_pipeline import load_spacy
    from testaug.induction.induce import induce_templates, induced_suite, lexicons_used

    accepted_path, cases_path, out = config.accepted, config.cases, config.out
    suite, allow_empty = config.suite, config.allow_empty
    accepted = list(read_jsonl(accepted_path, TestCase))
    if not accepted and not allow_empty:
        raise InputError(Problem("no accepted cases in the file", file=accepted_path))
    seed_list = list(read_jsonl(cases_path, TestCase))
    if not seed_list and (accepted or suite is None):
        raise InputError(Problem("no seed cases in the file", file=cases_path))
    _check_parse_lengths(accepted, accepted_path)
    _check_parse_lengths(seed_list, cases_path)
    _check_fill_names(seed_list, cases_path)
    _check_seed_ids(accepted, accepted_path)
    seeds = {case.id: case for case in seed_list}
    if suite is None and not accepted:
        suite = next(iter(seeds.values())).task
    loaded = load_suite(resolve_suite(suite or accepted[0].task))
    result = induce_templates(accepted, seeds, load_spacy())
    templates = []
    skipped = Counter(result.skipped)
    known = dict(loaded.lexicons)  # and the built-ins that seeds from another suite used
    for name in {lexicon_of(t) for template in result.templates for t in template.slots}:
        if name not in known and (builtin := builtin_lexicon(name)) is not None:
            known[name] = builtin
    for template in result.templates:
        if all(lexicon_of(t) in known for t in template.slots):
            templates.append(template)
        else:
            skipped["unknown_lexicon"] += 1
    if accepted and not templates:
        _no_template(accepted_path, len(accepted), skipped, allow_empty, cases_path)

    files = {"lexicons": sibling(out, "lexicons", ".yaml"), "induced": sibling(out, "induced")}
    used = lexicons_used(templates)
    lexicons = {name: list(known[name].words) for name in used}
    document = induced_suite(
        templates,
        name=f"{loaded.name}-induced",
        task=loaded.task,
        labels=loaded.labels,
        lexicon_file=files["lexicons"].name,
    )
    fills = _validated_fills(
        document, lexicons, files["lexicons"].name, templates, (accepted_path, out)
    )
    write_yaml(files["lexicons"], lexicons)
    write_yaml(out, document)
    write_jsonl(files["induced"], templates)
    return step_output(
        "induce",
        out,
        len(templates),
        files=files,
        summary=InduceSummary(
            from_cases=len(accepted),
            fills=fills,
            per_capability=dict(Counter(t.capability for t in templates)),
            skipped=dict(skipped),
        ),
    )


def _no_template(
    path: Path, cases: int, skipped: Counter, allow_empty: bool, seeds_path: Path
) -> None:
    """An error (a warning with `allow_empty`) saying that no template came of the cases;
    where seeds gave no slot words, it names the seed cases' file too."""
    reasons = ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items()))
    message = f"no template induced from its {cases:,} accepted cases (skipped: {reasons})"
    if skipped.get("no_seed_fills"):
        message += f"; no_seed_fills: their seed cases in {seeds_path} are missing or have no fills"
    if not allow_empty:
        raise InputError(Problem(message + "; earlier outputs left as they were", file=path))
    logger.warning("%s: %s; writing an empty suite", path, message)


def _check_parse_lengths(cases: Sequence[TestCase], path: Path) -> None:
    """An error naming file, line and field of the first text longer than spaCy parses."""
    from testaug.core.spacy_pipeline import check_parse_length

    for line, case in enumerate(cases, 1):
        for field in ("text", "text_pair"):
            if value := getattr(case, field):
                check_parse_length(value, path, line, field)


def _check_seed_ids(cases: Sequence[TestCase], path: Path) -> None:
    """An error naming file, line and field of the first accepted case whose seed case ids
    (`meta.seed_case_ids`) are not a list of ids."""
    for line, case in enumerate(cases, 1):
        ids = case.meta.get("seed_case_ids", [])
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            shown = repr(ids) if len(repr(ids)) <= 40 else repr(ids)[:40] + "..."
            message = f"expected a list of seed case ids, got {shown}"
            raise InputError(Problem(message, path, line, "meta.seed_case_ids"))


def _check_fill_names(cases: Sequence[TestCase], path: Path) -> None:
    """An error naming file, line and field of the first fill whose name is no slot name."""
    from testaug.suites.templates import TemplateSyntaxError, parse

    for line, case in enumerate(cases, 1):
        for name in case.fills:
            try:
                parse(f"{{{name}}}")
            except TemplateSyntaxError:
                message = f"{name!r} is not a slot name (a letter or _, then letters, digits, _)"
                raise InputError(Problem(message, path, line, "fills")) from None


def _validated_fills(
    document: dict, lexicons: dict, lexicon_file: str, templates: Sequence, paths: tuple[Path, Path]
) -> int:
    """The cases the induced suite fills, checked as `testaug suite validate` checks it
    before anything is written; a problem names the accepted case behind its template."""
    from testaug.induction.induce import suite_positions

    if not templates:
        return 0
    with tempfile.TemporaryDirectory(prefix="testaug-induce-") as folder:
        write_yaml(Path(folder) / lexicon_file, lexicons)
        accepted, out = paths
        name = out.name
        write_yaml(Path(folder) / name, document)
        try:
            return sum(template_case_counts(load_suite(Path(folder) / name)).values())
        except InputError as exc:
            positions = suite_positions(templates)
            raise InputError(
                [_induced_problem(p, positions, accepted) for p in exc.problems]
            ) from None


def _induced_problem(problem: Problem, positions: dict, accepted: Path) -> Problem:
    """A problem of the induced suite restated in terms of the accepted case behind it."""
    field = problem.field or ""
    inside = [k for k in positions if field == k or field.startswith((k + ".", k + "["))]
    at = max(inside, key=len, default=None)
    if at is None:
        return Problem(
            f"the induced suite would be invalid: {problem.message} ({field or 'lexicons'})",
            accepted,
        )
    template = positions[at]
    return Problem(
        f"the template {template.text!r} induced from accepted case {template.case_id} "
        f"({template.capability} / {template.description}) would make an invalid suite: "
        f"{problem.message}",
        accepted,
    )


def expand_induced(config: ExpandInducedConfig) -> StepOutput:
    """Cases filled from induced templates, leaving out any already in the `known` files;
    each traced to the case its template was induced from (`traced_to_origin`)."""
    templates, out = config.templates, config.out
    seen = {case.id for path in config.known for case in read_jsonl(path, TestCase)}
    cases: list[TestCase] = []
    if templates.records:
        induced = load_suite(templates.path)
        expanded = expand_suite(induced, per_template=config.per_template, seed=config.seed)
        fresh = (case for case in expanded if case.id not in seen)
        cases = list(traced_to_origin(fresh, templates.files.get("induced")))
    written = write_jsonl(out, cases)
    provenance = Counter(case_provenance(case) for case in cases)
    logger.info("expanded %d templates into %d new cases", templates.records, written)
    summary = ExpandInducedSummary(templates=templates.records, provenance=dict(provenance))
    return step_output("expand-induced", out, written, summary=summary)


def traced_to_origin(cases: Iterable[TestCase], induced: Path | None) -> Iterator[TestCase]:
    """Expanded cases with the case their template was induced from, and its provenance,
    in their `meta` (`testaug.suites.provenance.with_origin`), read from templates.induced.jsonl;
    a case whose template is not there (or no file) stays as it is: unverified."""
    from testaug.induction.induce import InducedTemplate

    origins = (
        {t.id: t for t in read_jsonl(induced, InducedTemplate)}
        if induced is not None and induced.is_file()
        else {}
    )
    if induced is not None and not origins:
        logger.warning("no induced templates in %s: expanded cases stay untraced", induced)
    for case in cases:
        origin = origins.get(case.template_id or "")
        yield case if origin is None else with_origin(case, origin.case_id, origin.case_provenance)


def extend_suite(config: ExtendConfig) -> StepOutput:
    """The suite's cases with the new ones appended (each case once)."""
    out = config.out
    merged, added = merge_into_suite(
        list(read_jsonl(config.suite, TestCase)),
        (case for path in config.new_cases for case in read_jsonl(path, TestCase)),
    )
    write_jsonl(out, merged)
    by_source = Counter(case.source for case in merged)
    by_provenance = Counter(case_provenance(case) for case in merged)
    return step_output(
        "suite",
        out,
        len(merged),
        summary=SuiteSummary(
            added=added, by_source=dict(by_source), by_provenance=dict(by_provenance)
        ),
    )
