"""`testaug evaluate` then `testaug report`: the report shows the JSON's numbers, with plots."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from rankers.evaluation.report import evaluate_scores
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Annotation, RankedCandidate, TestCase
from testaug.reports.run_report import build_report, write_report
from testaug.review.verdicts import decide
from tests.cli_runner import run_testaug
from tests.tiny_models import make_labelled


def case(
    text: str, label: str, capability: str, source: str = "template", accepted_by=None
) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=capability[:3],
        description=f"A {label} sentence about {capability}.",
        text=text,
        label=label,
        source=source,
        meta={"accepted_by": accepted_by} if accepted_by else {},
    )


CASES = [
    case("The food was great.", "positive", "Vocabulary"),
    case("I love this airline.", "positive", "Vocabulary"),
    case("The seat was awful.", "negative", "Vocabulary"),
    case("The crew was not great.", "negative", "Negation"),  # the keyword model fails it
    case("I do not hate the food.", "positive", "Negation", "llm", "people"),  # and this
    case("The staff was bad.", "negative", "Negation", "llm", "people"),
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
    assert f"{model['error_rate']:.1f}% (9.7–70.0), 2/6" in markdown
    assert "| Negation | 66.7% (20.8–93.9), 2/3 |" in markdown
    assert "| llm | 50.0% (9.5–90.5), 1/2 |" in markdown
    assert "The crew was not great." in markdown or "I do not hate the food." in markdown
    images = sorted(p.name for p in (run_dir / "report_files").iterdir())
    assert images == ["error_rates.png", "error_rates_provenance.png", "matrix_0.png"]
    html = (run_dir / "report.html").read_text()
    sources = re.findall(r'src="([^"]*)"', html)
    assert len(sources) == 3 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "66.7% (20.8–93.9), 2/3" in html


RANKER_CASES = [
    *CASES[:4],
    case("I do not hate the food.", "positive", "Negation", "llm", "ranker"),  # fails
    case("The staff was bad.", "negative", "Negation", "llm", "people"),
]
RANKER_BADGE = "unverified: accepted by the ranker, no person reviewed it"


def marked_rows(html: str) -> list[str]:
    return re.findall(r'<tr class="marked">(.*?)</tr>', html)


def evaluate_and_report(run_dir: Path, cases: list[TestCase], *options: str) -> dict:
    write_jsonl(run_dir / "cases.jsonl", cases)
    done = run_testaug(
        run_dir, "evaluate", "cases.jsonl", "--model", "py:tests.models_fixture:predict",
        "--perturb", "0", "-o", "evaluation.json", "--json", *options,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    reported = run_testaug(run_dir, "report", ".")
    assert reported.returncode == 0, reported.stderr
    return json.loads(done.stdout)


def test_the_headline_leaves_out_ranker_accepted_cases_and_the_html_marks_them(tmp_path):
    printed = evaluate_and_report(tmp_path, RANKER_CASES)
    [model] = printed["models"]
    assert model["error_rate"] == 20.0  # 1 of the 5 verified cases; all 6 would give 2/6
    assert (model["headline_evidence"], model["headline_left_out"]) == ("verified", 1)
    assert model["error_rate_by_capability"] == {"Vocabulary": 0.0, "Negation": 50.0}

    html = (tmp_path / "report.html").read_text()
    assert "rest on verified evidence only" in html
    assert "left out: py:tests.models_fixture:predict 1 (1 ranker)" in html
    assert "20.0% (3.6–62.4), 1/5" in html
    rows = marked_rows(html)
    assert any(
        row.startswith(f'<td>ranker <span class="badge">{RANKER_BADGE}</span></td>') for row in rows
    )  # the provenance table's row
    [example] = [row for row in rows if "I do not hate the food." in row]  # a failing example
    assert f'<span class="badge">{RANKER_BADGE}</span>' in example
    assert "<td>ranker</td>" in example
    assert not any("The crew was not great." in row for row in rows)  # a template case
    assert "tr.marked td" in html and ".badge" in html  # styled apart

    markdown = (tmp_path / "report.md").read_text()
    assert f"| ranker **[{RANKER_BADGE}]** | 100.0% (20.7–100.0), 1/1 |" in markdown
    assert "| template | 25.0% (4.6–69.9), 1/4 | verified: template seed cases |" in markdown
    assert "error_rates_provenance.png" in markdown


def test_evaluate_with_evidence_all_puts_ranker_accepted_cases_in_the_headline(tmp_path):
    printed = evaluate_and_report(tmp_path, RANKER_CASES, "--evidence", "all")
    [model] = printed["models"]
    assert printed["evidence"] == "all"
    assert model["error_rate"] == pytest.approx(100 * 2 / 6)
    assert (model["headline_evidence"], model["headline_left_out"]) == ("all", 0)
    html = (tmp_path / "report.html").read_text()
    assert '<p class="notice">The headline error rates rest on all cases, verified or not.' in html
    [row] = [row for row in marked_rows(html) if "33.3% (3.6–62.4) on verified only, 2/6" in row]
    assert "includes unverified evidence: 1 cases no person reviewed" in row


def test_with_no_verified_case_the_report_says_the_headline_rests_on_all_cases(tmp_path):
    only_ranker = [
        case("I do not hate the food.", "positive", "Negation", "llm", "ranker"),
        case("The staff was bad.", "negative", "Negation", "llm", "ranker"),
    ]
    printed = evaluate_and_report(tmp_path, only_ranker)
    [model] = printed["models"]
    assert model["error_rate"] == 50.0 and model["headline_evidence"] == "all"
    assert model["headline"]["fallback"] is True
    html = (tmp_path / "report.html").read_text()
    assert '<p class="notice">' in html and "no verified case" in html
    assert any("all cases: no verified case" in row for row in marked_rows(html))
    assert "0/0" not in html


def test_an_evaluation_json_written_before_provenance_still_renders(tmp_path):
    printed = evaluate_and_report(tmp_path, RANKER_CASES)
    old = {"n_cases": printed["n_cases"], "n_perturbed": printed["n_perturbed"], "models": []}
    for model in printed["models"]:
        kept = {k: v for k, v in model.items() if not k.startswith("headline")}
        kept.pop("by_provenance")
        kept["error_rate"] = model["overall"]["rate"]
        for cell in kept["by_description"].values():
            for example in cell["examples"]:
                example.pop("provenance")
        old["models"].append(kept)
    (tmp_path / "evaluation.json").write_text(json.dumps(old))

    written = write_report(tmp_path)
    markdown = written.markdown.read_text()
    assert "does not record the provenance of its cases" in markdown
    assert (
        "| py:tests.models_fixture:predict | 33.3% (9.7–70.0), 2/6 | all cases (provenance"
        in markdown
    )
    assert "Not available: this evaluation.json predates provenance." in markdown
    assert "| n/a | 66.7% (20.8–93.9) | I do not hate the food." in markdown
    assert "badge" not in written.html.read_text().split("<body>")[1]


def test_report_has_annotation_triage_and_diversity_sections_where_the_run_has_them(run_dir):
    from testaug.core.records import Candidate

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
    diversity = {"n_cases": 6, "n_descriptions": 2, "self_bleu": 0.25, "dependency_paths": 17,
                 "variant": "sacrebleu", "max_order": 4, "seed": 0, "by": ["source"],
                 "per_description": 2, "n_input": 6,
                 "equalized": {"n_cases": 4, "n_descriptions": 2, "self_bleu": 0.2, "dependency_paths": 12},
                 "groups": [{"group": {"source": "llm"}, "n_cases": 2, "n_descriptions": 1,
                             "self_bleu": 0.1, "dependency_paths": 9}]}  # fmt: skip
    (run_dir / "diversity.json").write_text(json.dumps(diversity))

    report = build_report(run_dir)
    written = write_report(run_dir)
    assert written.sections == ("Run", "Annotation", "Validity triage", "Diversity")
    markdown = written.markdown.read_text()
    assert "| accepted by people | 1 |" in markdown
    assert f"| triage | {triage.triage.effort_at_target:.1%} |" in markdown
    assert f"| oracle order | {triage.triage.oracle_effort_at_target:.1%} |" in markdown
    assert "share of the random-to-oracle gap closed" in markdown
    assert "| whole input | 6 | 0.250 | 17 |" in markdown
    assert "| llm | 2 | 0.100 | 9 |" in markdown
    assert (run_dir / "report_files" / "acc_curve.png").exists()
    assert len(report.blocks) > 4


def test_a_missing_run_directory_is_an_input_error(tmp_path):
    from testaug.core.errors import InputError

    with pytest.raises(InputError, match="not a run directory"):
        build_report(tmp_path / "nope")


def test_the_report_states_what_the_ranker_accepted_at_what_precision_and_what_waits(tmp_path):
    from testaug.review.plans import read_annotations, save_annotations
    from testaug.steps.review import ReviewConfig, merge_reviewed, review_automatically
    from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

    p_valid = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 0.92, 0.95]
    texts = [f"Case {i} is nice." for i in range(10)]
    run = write_ranked_run(
        tmp_path, texts, p_valid=p_valid, calibration=make_calibration(m=VOUCHED_CURVE)
    )
    annotations, ranked = run / "annotations.jsonl", run / "ranked.jsonl"
    config = ReviewConfig(ranked=ranked, annotations=annotations, accept_precision=0.9)
    review_automatically(config)
    first = next(iter(read_jsonl(ranked, RankedCandidate))).candidate.id
    person = Annotation(candidate_id=first, valid=False, annotator="ann", origin="terminal")
    save_annotations(annotations, [*read_annotations(annotations), person])
    merge_reviewed(config.model_copy(update={"out": run}))

    markdown = write_report(run).markdown.read_text()
    notice = markdown.split("\n\n")[1]
    assert notice.startswith("> **Note:** Annotation mode auto: no person reviewed")
    assert "accepted only what it can vouch for at the stated precision: 3 candidates" in notice
    assert "reaches 90% with 95% confidence; 6 wait for people" in notice
    assert "### Acceptance by the ranker" in markdown
    assert "The ranker accepted 3 candidates without a person" in markdown
    assert "Their estimated precision is 96.0%." in markdown
    assert "6 wait for people; people accepted 0 and rejected 1." in markdown
    assert "| m | 10 | 3 | 0.900 | 96.0% (100 of 200 labelled) | 91.1% | 90% | 200 |" in markdown


def test_a_generator_without_labels_is_reported_as_a_weak_prior_resting_on_no_labels(tmp_path):
    from testaug.core.jsonl import write_jsonl
    from testaug.steps.review import ReviewConfig, merge_reviewed, review_automatically
    from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

    texts = [f"Case {i} is nice." for i in range(4)]
    run = write_ranked_run(
        tmp_path, texts, p_valid=[0.99] * 4, calibration=make_calibration(m=VOUCHED_CURVE)
    )
    ranked = list(read_jsonl(run / "ranked.jsonl", RankedCandidate))
    weak = "zero-shot: this generator has no labels of its own, so the order is a weak prior"
    write_jsonl(
        run / "ranked.jsonl",
        [r.model_copy(update={"calibration_group": "any generator", "triage_basis": weak})
         for r in ranked],
    )  # fmt: skip
    config = ReviewConfig(ranked=run / "ranked.jsonl", accept_precision=0.9)
    review_automatically(config)
    merge_reviewed(config.model_copy(update={"out": run}))
    markdown = write_report(run).markdown.read_text()
    assert "The order of these candidates is a weak prior (any generator: 4)" in markdown
    assert "none of its own (pooled over other generators; opt-in)" in markdown
    assert "accepted only what it can vouch for at the stated precision: 0 candidates" in markdown


def test_a_group_without_a_rule_and_a_run_without_calibration_say_so(tmp_path):
    from testaug.steps.review import ReviewConfig, merge_reviewed, review_automatically
    from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

    texts = [f"Case {i} is nice." for i in range(4)]
    run = write_ranked_run(
        tmp_path, texts, p_valid=[0.9] * 4, calibration=make_calibration(m=VOUCHED_CURVE)
    )
    config = ReviewConfig(ranked=run / "ranked.jsonl", accept_precision=0.97)
    review_automatically(config)
    merge_reviewed(config.model_copy(update={"out": run}))
    markdown = write_report(run).markdown.read_text()
    assert "| m | 4 | 0 | no threshold qualifies |  |  | 97% | 200 |" in markdown
    assert "accepted only what it can vouch for at the stated precision: 0 candidates" in markdown

    (run / "ranked.calibration.json").unlink()
    markdown = write_report(run).markdown.read_text()
    assert "The run has no ranked.calibration.json: no rule could be read." in markdown
