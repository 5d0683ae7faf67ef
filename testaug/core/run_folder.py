"""The layout of a run folder: the files the pipeline's steps write there, each named once.

`RunFolder(root).ranked` is `root / "ranked.jsonl"`; the flows, the report and the steps
that default to a file beside another take their paths from here. Files a step writes
beside its main output (`candidates.rejects.jsonl`, `ranked.calibration.json`, ...) are
named by `runs.sibling`, as the step names them, so they follow wherever that output goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from testaug.core.runs import sibling


@dataclass(frozen=True)
class RunFolder:
    """A run folder and its files, in the order the pipeline writes them."""

    root: Path

    CASES: ClassVar[str] = "cases.jsonl"
    GENERATED: ClassVar[str] = "generated"
    CANDIDATES: ClassVar[str] = "candidates.jsonl"
    RANKED: ClassVar[str] = "ranked.jsonl"
    TRIAGE: ClassVar[str] = "triage.json"
    ANNOTATIONS: ClassVar[str] = "annotations.jsonl"
    LABEL_STUDIO_PROJECTS: ClassVar[str] = "label-studio-projects.json"
    VERDICTS: ClassVar[str] = "verdicts.jsonl"
    ACCEPTED: ClassVar[str] = "accepted.jsonl"
    TEMPLATES: ClassVar[str] = "templates.yaml"
    EXPANDED: ClassVar[str] = "expanded.jsonl"
    SUITE: ClassVar[str] = "suite.jsonl"
    DIVERSITY: ClassVar[str] = "diversity.json"
    PERTURBED: ClassVar[str] = "perturbed.jsonl"
    EVALUATIONS: ClassVar[str] = "evaluation"
    EVALUATION: ClassVar[str] = "evaluation.json"
    PATCHING: ClassVar[str] = "patching.json"
    MANIFEST: ClassVar[str] = "manifest.json"
    REPORT_MARKDOWN: ClassVar[str] = "report.md"
    REPORT_FILES: ClassVar[str] = "report_files"
    REPORT_HTML: ClassVar[str] = "report.html"

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The name of every file and folder above, as the pipeline writes them."""
        return tuple(
            value for key, value in vars(cls).items() if key.isupper() and isinstance(value, str)
        )

    @classmethod
    def of(cls, path: Path) -> RunFolder:
        """The run folder a file of it lies in (`ranked.jsonl` -> its folder)."""
        return cls(path.parent)

    @property
    def cases(self) -> Path:
        """The seed cases expanded from the suite's templates."""
        return self.root / self.CASES

    @property
    def generated(self) -> Path:
        """The folder of each capability's candidates, before they are combined."""
        return self.root / self.GENERATED

    def generated_part(self, index: int) -> Path:
        """The candidates of the `index`th capability generated for."""
        return self.generated / f"{index:02d}.{self.CANDIDATES}"

    @property
    def candidates(self) -> Path:
        """The generated candidates, combined."""
        return self.root / self.CANDIDATES

    @property
    def candidate_rejects(self) -> Path:
        """The generated replies the parser rejected (beside the candidates)."""
        return sibling(self.candidates, "rejects")

    @property
    def ranked(self) -> Path:
        """The candidates ranked by the validity ensemble."""
        return self.root / self.RANKED

    @property
    def ranked_calibration(self) -> Path:
        """The ensemble's calibration evidence (beside the ranking)."""
        return sibling(self.ranked, "calibration", ".json")

    @property
    def triage(self) -> Path:
        """The rankers' triage summary (`testaug rankers evaluate --json`)."""
        return self.root / self.TRIAGE

    @property
    def annotations(self) -> Path:
        """The verdicts, of people and of the ranker."""
        return self.root / self.ANNOTATIONS

    @property
    def label_studio_projects(self) -> Path:
        """The Label Studio projects the run's candidates were pushed to, by server."""
        return self.root / self.LABEL_STUDIO_PROJECTS

    @property
    def annotation_acceptance(self) -> Path:
        """The latest review plan's rules and counts (beside the annotations)."""
        return sibling(self.annotations, "acceptance", ".json")

    @property
    def verdicts(self) -> Path:
        """The verdicts merged, one per candidate."""
        return self.root / self.VERDICTS

    @property
    def accepted(self) -> Path:
        """The accepted generated cases."""
        return self.root / self.ACCEPTED

    @property
    def templates(self) -> Path:
        """The templates induced from the accepted cases."""
        return self.root / self.TEMPLATES

    @property
    def induced_templates(self) -> Path:
        """The induced templates as records (beside the templates)."""
        return sibling(self.templates, "induced")

    @property
    def expanded(self) -> Path:
        """The cases expanded from the induced templates."""
        return self.root / self.EXPANDED

    @property
    def suite(self) -> Path:
        """The suite: seed cases, accepted and expanded ones."""
        return self.root / self.SUITE

    @property
    def diversity(self) -> Path:
        """The suite's diversity measures."""
        return self.root / self.DIVERSITY

    @property
    def perturbed(self) -> Path:
        """The suite's perturbation (INV and DIR) tests."""
        return self.root / self.PERTURBED

    @property
    def evaluations(self) -> Path:
        """The folder of each model's evaluation, before they are combined."""
        return self.root / self.EVALUATIONS

    @property
    def evaluation(self) -> Path:
        """The models under test on the suite, combined."""
        return self.root / self.EVALUATION

    @property
    def patching(self) -> Path:
        """The patching evaluation (`testaug evaluate patching --json`)."""
        return self.root / self.PATCHING

    @property
    def manifest(self) -> Path:
        """The run's manifest: its command, configuration and seed."""
        return self.root / self.MANIFEST

    @property
    def report_markdown(self) -> Path:
        """The run's report in markdown."""
        return self.root / self.REPORT_MARKDOWN

    @property
    def report_files(self) -> Path:
        """The images of the markdown report."""
        return self.root / self.REPORT_FILES

    @property
    def report_html(self) -> Path:
        """The run's report as one self-contained HTML file."""
        return self.root / self.REPORT_HTML
