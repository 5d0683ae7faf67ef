"""Unknown labels are refused wherever cases enter a step: evaluate, generate from cases, rank,
merge of people's verdicts, and annotate push (before any call to the server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testaug.core.errors import InputError
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import Annotation, RankedCandidate, TestCase
from testaug.steps import augment, measure, rank, review
from testaug.steps.review import ReviewConfig
from tests.tiny_models import make_candidate, write_ranked_run


def sentiment_case(label: str, text: str = "The seat was great.") -> TestCase:
    return TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="d",
        description="A sentence.",
        text=text,
        label=label,
    )


@pytest.fixture
def bogus_cases(tmp_path: Path) -> Path:
    """cases.jsonl whose second case has the label `bogus` (sentiment's are not)."""
    path = tmp_path / "cases.jsonl"
    write_jsonl(path, [sentiment_case("positive"), sentiment_case("bogus", "It was fine.")])
    return path


def assert_names_bogus(error: InputError, path: Path, line: int, field: str = "label") -> None:
    problem = error.problems[0]
    assert (Path(problem.file), problem.line, problem.field) == (path, line, field)
    assert "'bogus'" in problem.message and "negative, neutral, positive" in problem.message


def test_evaluate_refuses_a_case_with_an_unknown_label(bogus_cases: Path, tmp_path: Path):
    with pytest.raises(InputError) as raised:
        measure.evaluate_suite(
            measure.SuiteEvaluationConfig(
                cases=bogus_cases, models=("vader",), out=tmp_path / "ev.json", work=tmp_path
            )
        )
    assert_names_bogus(raised.value, bogus_cases, 2)
    assert not (tmp_path / "ev.json").exists()


def test_evaluate_one_model_refuses_a_case_with_an_unknown_label(bogus_cases, tmp_path):
    perturbed = tmp_path / "perturbed.jsonl"
    perturbed.write_text("")
    with pytest.raises(InputError) as raised:
        measure.evaluate_one_model(
            measure.ModelEvaluationConfig(
                cases=bogus_cases, perturbed=perturbed, model="vader", out=tmp_path / "one.json"
            )
        )
    assert_names_bogus(raised.value, bogus_cases, 2)


def test_evaluate_checks_a_users_task_against_the_labels_given(tmp_path: Path):
    path = tmp_path / "own.jsonl"
    write_jsonl(
        path, [TestCase(**sentiment_case("maybe").model_dump(exclude={"id"}) | {"task": "own"})]
    )
    none = measure.EvaluationConfig(perturb=0)
    # no labels known: accepted
    measure.perturb_suite(
        measure.PerturbConfig(cases=path, out=tmp_path / "p.jsonl", evaluation=none)
    )
    with pytest.raises(InputError, match="its labels: yes, no"):
        given = measure.EvaluationConfig(perturb=0, labels="yes,no")
        measure.perturb_suite(
            measure.PerturbConfig(cases=path, out=tmp_path / "p.jsonl", evaluation=given)
        )


def test_generate_from_cases_refuses_an_unknown_label(bogus_cases: Path):
    with pytest.raises(InputError) as raised:
        augment.read_seed_cases(bogus_cases, per_template=None, seed=0)
    assert_names_bogus(raised.value, bogus_cases, 2)


def test_rank_refuses_a_candidate_with_an_unknown_label(tmp_path: Path):
    candidates = tmp_path / "candidates.jsonl"
    bogus = make_candidate("It was fine.").model_dump(mode="json", exclude={"id"})
    bogus["label"] = "bogus"
    good = make_candidate("It was great.").model_dump(mode="json")
    candidates.write_text(json.dumps(good) + "\n" + json.dumps(bogus) + "\n")
    out = tmp_path / "ranked.jsonl"
    with pytest.raises(InputError) as raised:
        rank.rank_candidates(
            rank.RankConfig(candidates=candidates, rankers=tmp_path / "no-rankers", out=out)
        )
    assert_names_bogus(raised.value, candidates, 2)
    assert not out.exists()


def test_rank_refuses_reference_cases_with_an_unknown_label(bogus_cases: Path, tmp_path: Path):
    candidates = tmp_path / "candidates.jsonl"
    write_jsonl(candidates, [make_candidate("It was great.")])
    with pytest.raises(InputError) as raised:
        config = rank.RankConfig(
            candidates=candidates,
            rankers=tmp_path / "no-rankers",
            out=tmp_path / "r.jsonl",
            cases=bogus_cases,
        )
        rank.rank_candidates(config)
    assert_names_bogus(raised.value, bogus_cases, 2)


def person(candidate_id: str, **verdict) -> Annotation:
    return Annotation(candidate_id=candidate_id, annotator="ann", origin="terminal", **verdict)


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl with three sentiment candidates, cases.jsonl with their seeds."""
    return write_ranked_run(tmp_path, ["It was great.", "It was good.", "It was nice."])


def ranked_ids(run_dir: Path) -> list[str]:
    return [item.candidate.id for item in read_jsonl(run_dir / "ranked.jsonl", RankedCandidate)]


def test_merge_refuses_a_corrected_label_outside_the_task(run_dir: Path):
    ids = ranked_ids(run_dir)
    annotations = run_dir / "annotations.jsonl"
    write_jsonl(
        annotations,
        [
            person(ids[0], valid=True),
            person(ids[1], valid=False, reason="label", corrected_label="bogus"),
        ],
    )
    out = run_dir / "merged"
    out.mkdir()
    with pytest.raises(InputError) as raised:
        review.merge_reviewed(
            ReviewConfig(
                ranked=run_dir / "ranked.jsonl",
                annotations=annotations,
                suite=run_dir / "cases.jsonl",
                out=out,
            )
        )
    assert_names_bogus(raised.value, annotations, 2, field="corrected_label")
    assert list(out.iterdir()) == []


def test_merge_accepts_a_corrected_label_of_the_task(run_dir: Path):
    ids = ranked_ids(run_dir)
    annotations = run_dir / "annotations.jsonl"
    write_jsonl(annotations, [person(ids[0], valid=True, corrected_label="negative")])
    out = run_dir / "merged"
    out.mkdir()
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", annotations=annotations, out=out)
    merged = review.merge_reviewed(config)
    assert [case.label for case in read_jsonl(merged.path, TestCase)] == ["negative"]


def push(run_dir: Path, studio):
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", project="tiny run", top=1.0)
    return review.push_to_label_studio(config, studio=studio)


def rewrite_label(path: Path, line: int, update) -> None:
    """The JSONL file with `update` applied to the row on `line` (without ids)."""
    rows = [json.loads(text) for text in path.read_text().splitlines()]
    update(rows[line - 1])
    for row in rows:  # ids are recomputed from the content
        (row.get("candidate") or row).pop("id", None)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_push_refuses_a_ranked_candidate_with_an_unknown_label(run_dir, studio, fake_client):
    ranked = run_dir / "ranked.jsonl"
    rewrite_label(ranked, 3, lambda row: row["candidate"].update(label="bogus", id=None))
    with pytest.raises(InputError) as raised:
        push(run_dir, studio)
    assert_names_bogus(raised.value, ranked, 3, field="candidate.label")
    assert fake_client.calls == []


def test_push_refuses_a_seed_case_with_an_unknown_label(run_dir, studio, fake_client):
    cases = run_dir / "cases.jsonl"
    rewrite_label(cases, 2, lambda row: row.update(label="bogus", id=None))
    with pytest.raises(InputError) as raised:
        push(run_dir, studio)
    assert_names_bogus(raised.value, cases, 2)
    assert fake_client.calls == []


def test_push_refuses_a_corrected_label_outside_the_task(run_dir, studio, fake_client):
    annotations = run_dir / "annotations.jsonl"
    corrected = person(ranked_ids(run_dir)[0], valid=True, corrected_label="bogus")
    write_jsonl(annotations, [corrected])
    with pytest.raises(InputError) as raised:
        push(run_dir, studio)
    assert_names_bogus(raised.value, annotations, 1, field="corrected_label")
    assert fake_client.calls == []
