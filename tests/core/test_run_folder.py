"""A run folder's files are named once, in RunFolder: the names on disk are the layout runs
have always had, and the files a step writes beside its output are the ones RunFolder
names beside it."""

from __future__ import annotations

from pathlib import Path

from testaug.core.run_folder import RunFolder
from testaug.review.acceptance import calibration_beside
from testaug.review.plans import acceptance_path

ROOT = Path("runs/one")


def test_the_files_keep_their_names_on_disk():
    run = RunFolder(ROOT)
    names = {
        run.cases: "cases.jsonl",
        run.candidates: "candidates.jsonl",
        run.candidate_rejects: "candidates.rejects.jsonl",
        run.ranked: "ranked.jsonl",
        run.ranked_calibration: "ranked.calibration.json",
        run.triage: "triage.json",
        run.annotations: "annotations.jsonl",
        run.annotation_acceptance: "annotations.acceptance.json",
        run.label_studio_projects: "label-studio-projects.json",
        run.verdicts: "verdicts.jsonl",
        run.accepted: "accepted.jsonl",
        run.templates: "templates.yaml",
        run.induced_templates: "templates.induced.jsonl",
        run.expanded: "expanded.jsonl",
        run.suite: "suite.jsonl",
        run.diversity: "diversity.json",
        run.perturbed: "perturbed.jsonl",
        run.evaluation: "evaluation.json",
        run.patching: "patching.json",
        run.manifest: "manifest.json",
        run.report_markdown: "report.md",
        run.report_files: "report_files",
        run.report_html: "report.html",
    }
    for path, name in names.items():
        assert path == ROOT / name
    assert run.generated_part(3) == ROOT / "generated" / "03.candidates.jsonl"
    assert run.evaluations == ROOT / "evaluation"


def test_the_files_beside_a_steps_output_are_where_the_step_writes_them():
    run = RunFolder(ROOT)
    assert run.ranked_calibration == calibration_beside(run.ranked)
    assert run.annotation_acceptance == acceptance_path(run.annotations)


def test_a_file_names_its_run_folder():
    assert RunFolder.of(ROOT / "ranked.jsonl") == RunFolder(ROOT)
    assert RunFolder.of(ROOT / "ranked.jsonl").annotations == ROOT / "annotations.jsonl"
