"""`testaug evaluate` then `testaug report`: the report shows the JSON's numbers, with plots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rankers.evaluation import evaluate_scores
from testaug.jsonl import write_jsonl
from testaug.records import Annotation, TestCase
from testaug.reports import build_report, write_report
from testaug.verdicts import decide
from tests.cli_runner import run_testaug
from tests.tiny_models import make_labelled


def case(text: str, label: str, capability: str, source: str = "template") -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=capability[:3],
        description=f"A {label} sentence about {capability}.",
        text=text,
        label=label,
        source=source,
    )


CASES = [
    case("The food was great.", "positive", "Vocabulary"),
    case("I love this airline.", "positive", "Vocabulary"),
    case("The seat was awful.", "negative", "Vocabulary"),
    case("The crew was not great.", "negative", "Negation"),  # the keyword model fails it
    case("I do not hate the food.", "positive", "Negation", source="llm"),  # and this
    case("The staff was bad.", "negative", "Negation", source="llm"),
]


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    write_jsonl(tmp_path / "cases.jsonl", CASES)
    return tmp_path


def test_report_shows_the_evaluation_numbers_of_the_json_with_plots(run_dir):
    done = run_testaug(
        run_dir, "evaluate", "cases.jsonl", "--model", "py:tests.models_fixture:predict",
        "--perturb", "0", "-o", "evaluation.json", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    [model] = printed["models"]
    assert model["error_rate"] == pytest.approx(100 * 2 / 6)
    assert model["error_rate_by_capability"] == {
        "Vocabulary": 0.0,
        "Negation": pytest.approx(200 / 3),
    }
    assert json.loads((run_dir / "evaluation.json").read_text()) == printed

    reported = run_testaug(run_dir, "report", ".")
    assert reported.returncode == 0, reported.stderr
    markdown = (run_dir / "report.md").read_text()
    assert f"{model['error_rate']:.1f}% (2/6)" in markdown
    assert "| Negation | 66.7% (2/3) |" in markdown
    assert "| llm | 50.0% (1/2) |" in markdown
    assert "The crew was not great." in markdown or "I do not hate the food." in markdown
    images = sorted(p.name for p in (run_dir / "report_files").iterdir())
    assert images == ["error_rates.png", "matrix_0.png"]
    html = (run_dir / "report.html").read_text()
    sources = re.findall(r'src="([^"]*)"', html)
    assert len(sources) == 2 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "66.7% (2/3)" in html


def test_report_has_annotation_triage_and_diversity_sections_where_the_run_has_them(run_dir):
    from testaug.records import Candidate

    candidate = Candidate(
        **CASES[0].model_dump(include={"task", "capability", "description_id", "description", "text", "label"}),
        prompt_id="p", seed_case_ids=(), backend="b", model="m",
    )  # fmt: skip
    votes = [
        Annotation(candidate_id=candidate.id, valid=True, annotator=who, origin="terminal")
        for who in ("x", "y")
    ]
    write_jsonl(run_dir / "annotations.jsonl", votes)
    write_jsonl(run_dir / "verdicts.jsonl", decide(votes, {candidate.id: candidate}).values())
    labelled = make_labelled(["good one", "fine one", "nice one"], ["bad one", "worse one"])
    scores = {"m": np.array([0.1, 0.2, 0.3, 0.9, 0.8])}
    triage = evaluate_scores(labelled, scores, 0.9)
    (run_dir / "triage.json").write_text(triage.model_dump_json())
    diversity = {"n_cases": 6, "self_bleu": 0.25, "dependency_paths": 17, "per_description": 2,
                 "seed": 0, "variant": "sacrebleu",
                 "equalized": {"n_cases": 4, "self_bleu": 0.2, "dependency_paths": 12},
                 "groups": [{"group": {"source": "llm"}, "n_cases": 2, "self_bleu": 0.1, "dependency_paths": 9}]}  # fmt: skip
    (run_dir / "diversity.json").write_text(json.dumps(diversity))

    report = build_report(run_dir)
    written = write_report(run_dir)
    assert written.sections == ("Run", "Annotation", "Validity triage", "Diversity")
    markdown = written.markdown.read_text()
    assert "| accepted by people | 1 |" in markdown
    assert f"| ensemble (Borda) | {triage.ensemble.effort_at_target:.1%} |" in markdown
    assert f"| oracle order | {triage.ensemble.oracle_effort_at_target:.1%} |" in markdown
    assert "share of the random-to-oracle gap closed" in markdown
    assert "| whole input | 6 | 0.250 | 17 |" in markdown
    assert "| llm | 2 | 0.100 | 9 |" in markdown
    assert (run_dir / "report_files" / "acc_curve.png").exists()
    assert len(report.blocks) > 4


def test_a_missing_run_directory_is_an_input_error(tmp_path):
    from testaug.errors import InputError

    with pytest.raises(InputError, match="not a run directory"):
        build_report(tmp_path / "nope")
