"""`report.md` and a self-contained `report.html` for a run directory, from the files the
stages wrote there. A section appears only where the run has its file; every number in
it is read from that file, so the report and the JSON agree.

Files read (all optional): the stage outputs (cases.jsonl, candidates.jsonl, ranked.jsonl,
ranked.calibration.json, annotations.jsonl, verdicts.jsonl, accepted.jsonl,
templates.induced.jsonl, expanded.jsonl), manifest.json, and the JSON summaries triage.json (`testaug rankers evaluate --json`),
diversity.json (`testaug suite diversity --json`), evaluation.json (`testaug evaluate models --json`)
and patching.json (`testaug evaluate patching --json`), tree_report.json (`testaug tree retest`)
and crossfunctional.json (`testaug evaluate generalization`), and fix_report.json (`testaug tree fix`, in a
round-NNN/ folder).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from testaug.adaptive.retest import TREE_REPORT_FILE, TreeReport
from testaug.core.errors import InputError, Problem, format_path
from testaug.core.jsonl import open_input, read_json, read_jsonl
from testaug.core.records import Annotation
from testaug.core.run_folder import RunFolder
from testaug.core.runs import remove_stale_temporaries
from testaug.core.triage import TriageReport, TriageSummary
from testaug.diversity.measures import DiversityMeasures, DiversityRow, DiversitySummary
from testaug.evaluation.summary import EvaluationSummary
from testaug.fixing.crossfunctional.analysis import CROSSFUNCTIONAL_FILE, CrossFunctionalReport
from testaug.fixing.debugging.records import FIX_REPORT_FILE, FixRound
from testaug.fixing.patching.protocol import PatchingReport
from testaug.reports.acceptance import acceptance_blocks, auto_mode_notice, read_run_acceptance
from testaug.reports.blocks import Heading, Image, Report, Table, Text, render_html, render_markdown
from testaug.reports.crossfunctional import crossfunctional_section
from testaug.reports.evaluation import evaluation_section
from testaug.reports.fix import fix_section
from testaug.reports.patching import patching_section
from testaug.reports.plots import acc_curves_png
from testaug.reports.test_summary import read_test_summary
from testaug.reports.test_summary_html import per_test_blocks
from testaug.reports.tree import tree_section
from testaug.review.verdicts import Verdict, pairwise_agreement, status_counts

SummaryT = TypeVar("SummaryT", bound=BaseModel)

_LAYOUT = RunFolder(Path())  # a run folder's files, relative to it

STAGE_FILES = {
    _LAYOUT.cases.name: "seed cases from the template suite",
    _LAYOUT.candidates.name: "generated candidates",
    _LAYOUT.candidate_rejects.name: "generated replies rejected by the parser",
    _LAYOUT.ranked.name: "candidates ranked by the validity ensemble",
    _LAYOUT.annotations.name: "verdicts (people and ranker)",
    _LAYOUT.accepted.name: "accepted generated cases (source llm)",
    _LAYOUT.induced_templates.name: "templates induced from accepted cases",
    _LAYOUT.expanded.name: "cases expanded from induced templates (source expansion)",
    _LAYOUT.suite.name: "the suite: seed cases, accepted and expanded ones",
}


# Every file a report reads: a folder with none of them is not a run.
RUN_FILES = (
    *STAGE_FILES,
    *(
        path.name
        for path in (
            _LAYOUT.verdicts,
            _LAYOUT.ranked_calibration,
            _LAYOUT.annotation_acceptance,
            _LAYOUT.manifest,
            _LAYOUT.triage,
            _LAYOUT.diversity,
            _LAYOUT.evaluation,
            _LAYOUT.patching,
        )
    ),
    TREE_REPORT_FILE,
    CROSSFUNCTIONAL_FILE,
    FIX_REPORT_FILE,
)


@dataclass(frozen=True)
class WrittenReport:
    markdown: Path
    html: Path
    sections: tuple[str, ...]


def build_report(run_dir: Path) -> Report:
    """The report of a run directory: one section per kind of result found in it."""
    return _build(run_dir)


def _build(run_dir: Path) -> Report:
    """The report and, where the run has an evaluation, its per-test summary."""
    if not run_dir.is_dir():
        raise InputError(Problem("not a run directory", file=run_dir))
    if not any((run_dir / name).exists() for name in RUN_FILES):
        raise InputError(
            Problem(f"no run files found (none of {', '.join(RUN_FILES)})", file=run_dir)
        )
    report = Report(title=f"testaug report: {run_dir.name}")
    run = RunFolder(run_dir)
    verdicts_path = run.verdicts
    verdicts = (
        {v.candidate_id: v for v in read_jsonl(verdicts_path, Verdict)}
        if verdicts_path.exists()
        else None
    )
    acceptance = read_run_acceptance(run_dir)
    notice = auto_mode_notice(acceptance, verdicts or {})
    if notice is not None:
        report.add(notice)
    _overview(report, run_dir)
    if verdicts is not None:
        _annotation(report, run_dir, verdicts)
        report.add(*acceptance_blocks(acceptance, verdicts))
    _triage(report, run_dir)
    _diversity(report, run_dir)
    evaluation = read_summary(run.evaluation, EvaluationSummary)
    if evaluation is not None:
        report.add(*evaluation_section(evaluation))
        report.add(*per_test_blocks(read_test_summary(run.evaluation, evaluation)))
    patching = read_summary(run.patching, PatchingReport)
    if patching is not None:
        report.add(*patching_section(patching))
    fix = read_summary(run_dir / FIX_REPORT_FILE, FixRound)
    if fix is not None:
        report.add(*fix_section(fix))
    tree = read_summary(run_dir / TREE_REPORT_FILE, TreeReport)
    if tree is not None:
        report.add(*tree_section(tree))
    crossfunctional = read_summary(run_dir / CROSSFUNCTIONAL_FILE, CrossFunctionalReport)
    if crossfunctional is not None:
        report.add(*crossfunctional_section(crossfunctional))
    return report


def write_report(run_dir: Path, output_dir: Path | None = None) -> WrittenReport:
    """Write report.md (images in report_files/) and report.html into the output folder;
    nothing is written (nor the folder made) when the run cannot be reported. Each file is
    written whole or not at all, replacing a symbolic link rather than writing through it;
    what killed writes left there over an hour ago is removed."""
    output_dir = output_dir or run_dir
    report = _build(run_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    written = RunFolder(output_dir)
    remove_stale_temporaries(output_dir)
    if not written.report_files.is_symlink():  # a link there is replaced, not swept
        remove_stale_temporaries(written.report_files)
    markdown = written.report_markdown
    render_markdown(report, markdown, written.report_files)
    html = written.report_html
    render_html(report, html)
    sections = tuple(b.text for b in report.blocks if isinstance(b, Heading) and b.level == 2)
    return WrittenReport(markdown, html, sections)


def read_summary(path: Path, model: type[SummaryT]) -> SummaryT | None:
    """A JSON summary file as its record, or None when the run does not have it; a number
    that is not finite (NaN, Infinity, 1e999) is an InputError naming the file and field."""
    if not path.exists():
        return None
    summary = read_json(path, model)
    _check_finite(path)
    return summary


def _check_finite(path: Path) -> None:
    """InputError naming the first field of a JSON file whose number is not finite."""
    with open_input(path) as handle:
        data = json.load(handle)
    stack: list[tuple[tuple[int | str, ...], object]] = [((), data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            field = format_path(where) or None
            raise InputError(Problem(f"{value} is not a finite number", path, None, field))
        if isinstance(value, dict):
            stack.extend(((*where, key), item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*where, i), item) for i, item in reversed(list(enumerate(value))))


def _count_lines(path: Path) -> int:
    with open_input(path) as handle:
        return sum(1 for line in handle if line.strip())


def _overview(report: Report, run_dir: Path) -> None:
    rows = [
        [name, f"{_count_lines(run_dir / name):,}", what]
        for name, what in STAGE_FILES.items()
        if (run_dir / name).exists()
    ]
    report.add(Heading("Run"))
    if rows:
        report.add(Table(["file", "records", "what"], rows))
    else:
        report.add(Text("No stage outputs in this directory yet."))


def _annotation(report: Report, run_dir: Path, verdicts: dict[str, Verdict]) -> None:
    report.add(Heading("Annotation"))
    counts = status_counts(verdicts)
    report.add(Table(["status", "candidates"], [[k, f"{v:,}"] for k, v in counts.items()]))
    annotations_path = RunFolder(run_dir).annotations
    if annotations_path.exists():
        agreements = pairwise_agreement(read_jsonl(annotations_path, Annotation))
        if agreements:
            report.add(
                Table(
                    ["annotators", "overlap", "agreement", "Cohen's kappa"],
                    [
                        [
                            f"{a.annotator_a} / {a.annotator_b}",
                            str(a.overlap),
                            f"{a.observed:.1%}",
                            "n/a" if a.kappa is None else f"{a.kappa:.3f}",
                        ]
                        for a in agreements
                    ],
                    caption="agreement between annotators on the candidates both judged",
                )
            )
    disputed = sum(v.disagreement for v in verdicts.values())
    if disputed:
        report.add(Text(f"{disputed:,} candidates had annotators who disagreed."))


def _triage_row(name: str, triage: TriageReport) -> list[str]:
    """A ranking's effort, its reduction against random order and the gap it closes."""
    closed = triage.gap_closed  # None in triage files written before it existed
    return [
        name,
        f"{triage.effort_at_target:.1%}",
        f"{triage.reduction_vs_random:.1%}",
        "" if closed is None else f"{closed:.0%}",
    ]


def _triage(report: Report, run_dir: Path) -> None:
    triage = read_summary(RunFolder(run_dir).triage, TriageSummary)
    if triage is None:
        return
    report.add(Heading("Validity triage"))
    first = triage.triage
    rows = [_triage_row(TRIAGE, first)]
    rows.extend(_triage_row(name, part) for name, part in triage.parts.items())
    rows.append(["random order", f"{first.random_effort_at_target:.1%}", "", "0%"])
    oracle_reduction = first.oracle_reduction_vs_random
    rows.append(
        [
            "oracle order",
            f"{first.oracle_effort_at_target:.1%}",
            "" if oracle_reduction is None else f"{oracle_reduction:.1%}",
            "100%",
        ]
    )
    report.add(
        Table(
            [
                "ranking",
                f"review effort for {triage.target:.0%} accuracy",
                "reduction vs random",
                "share of the random-to-oracle gap closed",
            ],
            rows,
            caption=f"{triage.n:,} labelled candidates, {triage.n_invalid:,} invalid; the triage "
            "is the order people review, the rows below it its parts alone",
        )
    )
    curves = {TRIAGE: first.curve}
    curves.update({name: part.curve for name, part in triage.parts.items()})
    curves.update(random=triage.random_curve, oracle=triage.oracle_curve)
    png = acc_curves_png(curves, target=triage.target)
    report.add(Image(png, "acc_curve.png", "ACC@k: accuracy after people review the top k"))


TRIAGE = "triage"


def _diversity_row(name: str, measures: DiversityMeasures | DiversityRow) -> list[str]:
    """A group's cases, Self-BLEU and unique dependency paths."""
    return [
        name,
        f"{measures.n_cases:,}",
        f"{measures.self_bleu:.3f}",
        f"{measures.dependency_paths:,}",
    ]


def _diversity(report: Report, run_dir: Path) -> None:
    diversity = read_summary(RunFolder(run_dir).diversity, DiversitySummary)
    if diversity is None:
        return
    report.add(Heading("Diversity"))
    columns = ["group", "cases", "Self-BLEU", "dependency paths"]
    rows = [
        _diversity_row("whole input", diversity),
        _diversity_row("equalized", diversity.equalized),
    ]
    for group in diversity.groups:
        rows.append(_diversity_row(", ".join(str(v) for v in group.group.values()), group))
    per = diversity.per_description
    caption = f"Self-BLEU-4 ({diversity.variant}; lower is more diverse)"
    if per:
        caption += f"; groups equalized to {per} cases per description (seed {diversity.seed})"
    report.add(Table(columns, rows, caption=caption))
