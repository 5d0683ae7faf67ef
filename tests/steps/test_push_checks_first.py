"""`annotate push` reads and checks every local file before its first call to Label Studio:
a malformed annotations, ranked or calibration file fails with the server untouched (issue 17,
finding 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testaug.core.errors import InputError
from testaug.core.records import Annotation
from testaug.steps.review import ReviewConfig, push_to_label_studio
from tests.tiny_models import write_ranked_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ranked.jsonl with three sentiment candidates, cases.jsonl with their seeds."""
    return write_ranked_run(tmp_path, ["It was great.", "It was good.", "It was nice."])


def push(run_dir: Path, studio):
    config = ReviewConfig(ranked=run_dir / "ranked.jsonl", project="tiny run", top=1.0)
    return push_to_label_studio(config, studio=studio)


def good_annotation(run_dir: Path) -> str:
    ranked = json.loads((run_dir / "ranked.jsonl").read_text().splitlines()[0])
    person = Annotation(
        candidate_id=ranked["candidate"]["id"], annotator="ann", origin="terminal", valid=True
    )
    return person.model_dump_json() + "\n"


def assert_refused_before_the_server(run_dir, studio, fake_client, path: Path, line, field):
    before = path.read_bytes()
    with pytest.raises(InputError) as raised:
        push(run_dir, studio)
    problem = raised.value.problems[0]
    assert Path(problem.file) == path
    assert (problem.line, problem.field) == (line, field)
    assert fake_client.calls == []
    assert fake_client.store == {}
    assert path.read_bytes() == before


def test_push_refuses_an_annotations_line_that_is_not_json_before_any_server_call(
    run_dir, studio, fake_client
):
    annotations = run_dir / "annotations.jsonl"
    annotations.write_text(good_annotation(run_dir) + '{"candidate_id": "x", \n')
    assert_refused_before_the_server(run_dir, studio, fake_client, annotations, 2, None)


def test_push_refuses_an_annotation_field_of_the_wrong_type_before_any_server_call(
    run_dir, studio, fake_client
):
    annotations = run_dir / "annotations.jsonl"
    row = json.loads(good_annotation(run_dir))
    row["valid"] = {"not": "a verdict"}
    annotations.write_text(good_annotation(run_dir) + json.dumps(row) + "\n")
    assert_refused_before_the_server(run_dir, studio, fake_client, annotations, 2, "valid")


def test_push_refuses_a_malformed_ranked_file_before_any_server_call(run_dir, studio, fake_client):
    ranked = run_dir / "ranked.jsonl"
    lines = ranked.read_text().splitlines()
    row = json.loads(lines[1])
    row["rank"] = "second"
    ranked.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    assert_refused_before_the_server(run_dir, studio, fake_client, ranked, 2, "rank")


def test_push_refuses_a_malformed_calibration_file_before_any_server_call(
    run_dir, studio, fake_client
):
    calibration = run_dir / "ranked.calibration.json"
    calibration.write_text('{"scores": [0.1, 0.2], "labels": "not a list"')
    with pytest.raises(InputError) as raised:
        push(run_dir, studio)
    assert Path(raised.value.problems[0].file) == calibration
    assert fake_client.calls == []
    assert fake_client.store == {}


def test_push_refuses_an_annotations_file_in_a_missing_folder_before_any_server_call(
    run_dir, studio, fake_client
):
    annotations = run_dir / "missing" / "annotations.jsonl"
    with pytest.raises(InputError) as raised:
        push_to_label_studio(
            ReviewConfig(
                ranked=run_dir / "ranked.jsonl", annotations=annotations,
                project="tiny run", top=1.0,
            ),
            studio=studio,
        )  # fmt: skip
    assert Path(raised.value.problems[0].file) == annotations
    assert fake_client.calls == []
