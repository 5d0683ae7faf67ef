"""Steps that measure a suite: diversity, the models under test on it (and on CheckList
perturbations of it), and the run's report."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from testaug.core.errors import InputError, Problem
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.core.runs import sibling, write_json, write_text_atomic
from testaug.evaluation.perturbed_cases import PerturbedCase
from testaug.steps import StepOutput, step_output
from testaug.suites.provenance import Evidence

logger = logging.getLogger(__name__)

# What a run's summary keeps of each model's headline (the rest is in evaluation.json).
HEADLINE_SUMMARY = ("evidence", "fallback", "left_out", "note")


def _cases(path: Path) -> list[TestCase]:
    cases = list(read_jsonl(path, TestCase))
    if not cases:
        raise InputError(Problem("no test cases in the file", file=path))
    return cases


def measure_diversity(
    cases_path: Path, out: Path, *, by: str = "source", seed: int = 0
) -> StepOutput:
    """Self-BLEU and unique dependency paths of the cases, per group (diversity.json)."""
    from testaug.diversity.measures import diversity_report, diversity_summary, parse_dimensions

    report = diversity_report(_cases(cases_path), by=parse_dimensions(by), seed=seed)
    summary = diversity_summary(report)
    write_json(out, summary)
    return step_output(
        "diversity",
        out,
        len(report.groups),
        self_bleu=report.whole.self_bleu,
        dependency_paths=report.whole.dependency_paths,
        n_cases=report.whole.n_cases,
    )


def perturb_suite(cases_path: Path, out: Path, *, per_test: int, seed: int = 0) -> StepOutput:
    """CheckList's INV and DIR perturbations of a seeded sample of the cases."""
    from testaug.evaluation.battery import default_battery, run_battery
    from testaug.suites.task_labels import task_labels_and_lexicons

    cases = _cases(cases_path)
    labels, lexicons = task_labels_and_lexicons(cases)
    perturbed = (
        run_battery(cases, default_battery(labels, lexicons), per_test=per_test, seed=seed)
        if per_test
        else []
    )
    written = write_jsonl(out, perturbed)
    return step_output("perturb", out, written)


def model_slug(spec: str) -> str:
    """A file-name-safe form of a model spec: `spacy:eng_spacysentiment` -> `spacy-eng_spacysentiment`."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-") or "model"


def evaluate_one_model(
    cases_path: Path,
    perturbed_path: Path,
    spec: str,
    out: Path,
    *,
    batch_size: int = 32,
    on_progress: Callable[[int, int], None] | None = None,
    evidence: Evidence = "verified",
) -> StepOutput:
    """One model on the cases (MFT) and their perturbations (INV, DIR): its summary as
    JSON at `out` (headline rates on `evidence`), every case's result beside it."""
    from testaug.evaluation.failures import evaluate_model
    from testaug.evaluation.models import load_model
    from testaug.evaluation.summary import evaluation_summary
    from testaug.suites.task_labels import task_labels_and_lexicons

    cases = _cases(cases_path)
    perturbed = list(read_jsonl(perturbed_path, PerturbedCase))
    labels, _ = task_labels_and_lexicons(cases)
    model = load_model(spec, task_labels=labels)
    evaluation = evaluate_model(
        model, cases, perturbed, batch_size=batch_size, on_progress=on_progress
    )
    summary = evaluation_summary(
        [evaluation], n_cases=len(cases), n_perturbed=len(perturbed), evidence=evidence
    )
    write_json(out, summary)
    results = sibling(out, "results")
    write_jsonl(results, evaluation.results)
    return step_output(
        "evaluate",
        out,
        len(evaluation.results),
        files={"results": results},
        model=evaluation.model,
        error_rate=summary["models"][0]["error_rate"],
        evidence=summary["models"][0]["headline_evidence"],
    )


def combine_evaluations(
    parts: Sequence[StepOutput], out: Path, *, evidence: Evidence = "verified"
) -> StepOutput:
    """The per-model evaluations as one evaluation.json (what `testaug evaluate -o` writes),
    with every case's result in evaluation.results.jsonl. Each model's headline rates are
    taken again from its results, on `evidence` (verified cases only, or all)."""
    from testaug.evaluation.failures import CaseResult
    from testaug.evaluation.summary import headline, with_headline

    summaries = [json.loads(part.path.read_text(encoding="utf-8")) for part in parts]
    if not summaries:
        raise InputError(Problem("no model evaluations to combine", file=out))
    models = []
    for part, summary in zip(parts, summaries, strict=True):
        results = list(read_jsonl(part.files["results"], CaseResult))
        for model in summary["models"]:
            mine = [r for r in results if r.model == model["model"]]
            models.append(with_headline(model, headline(mine, evidence)))
    combined = {
        "n_cases": summaries[0]["n_cases"],
        "n_perturbed": summaries[0]["n_perturbed"],
        "evidence": evidence,
        "models": models,
    }
    write_json(out, combined)
    results = sibling(out, "results")
    lines = [
        line
        for part in parts
        for line in part.files["results"].read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    write_text_atomic(results, "".join(f"{line}\n" for line in lines))
    rates = {model["model"]: model["error_rate"] for model in models}
    return step_output(
        "evaluate",
        out,
        len(models),
        error_rates=rates,
        evidence=evidence,
        headline={
            model["model"]: {key: model["headline"][key] for key in HEADLINE_SUMMARY}
            for model in models
        },
    )


def write_run_report(run_dir: Path) -> StepOutput:
    """report.md and a self-contained report.html from the files in the run folder."""
    from testaug.reports.run_report import write_report

    written = write_report(run_dir)
    return step_output(
        "report",
        written.html,
        len(written.sections),
        files={"markdown": written.markdown},
        sections=list(written.sections),
    )
