"""JSONL round trips for every record, atomic writes, and errors that name file, line and field."""

import json
import os
import stat
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testaug.core.errors import InputError
from testaug.core.jsonl import jsonl_files, read_jsonl, read_jsonl_parts, write_jsonl
from testaug.core.records import (
    Annotation,
    Candidate,
    Prediction,
    RankedCandidate,
    RunManifest,
    TestCase,
    case_id,
)

text = st.text(min_size=1, max_size=40)
labels = st.one_of(
    st.sampled_from(["negative", "neutral", "positive"]),
    st.lists(
        st.sampled_from(["negative", "neutral", "positive"]), min_size=2, max_size=3, unique=True
    ).map(tuple),
)
cases = st.builds(
    TestCase,
    task=st.sampled_from(["sentiment", "nli"]),
    capability=text,
    description_id=st.text("0123456789abcdef", min_size=16, max_size=16),
    description=text,
    text=text,
    text_pair=st.none() | text,
    label=labels,
    test_type=st.sampled_from(["MFT", "INV", "DIR"]),
    source=st.sampled_from(["template", "llm", "expansion"]),
    fills=st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), text, max_size=3),
    meta=st.dictionaries(
        st.from_regex(r"[a-z]{1,8}", fullmatch=True), st.integers() | text, max_size=2
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(cases, max_size=5))
def test_test_cases_round_trip_through_jsonl(tmp_path_factory, records):
    path = tmp_path_factory.mktemp("rt") / "cases.jsonl"
    assert write_jsonl(path, records) == len(records)
    assert list(read_jsonl(path, TestCase)) == records


def _candidate():
    return Candidate(
        task="nli",
        capability="Negation",
        description_id="d" * 16,
        description="The hypothesis negates the premise.",
        text="Ann is here.",
        text_pair="Ann is not here.",
        label="contradiction",
        prompt_id="p1",
        seed_case_ids=("a", "b"),
        backend="openai",
        model="m",
    )


def test_every_other_record_round_trips(tmp_path):
    candidate = _candidate()
    now = datetime(2026, 11, 21, tzinfo=UTC)
    records = [
        [candidate],
        [RankedCandidate(candidate=candidate, scores={"bert": 0.7}, borda_points=3.0, rank=1)],
        [
            Annotation(
                candidate_id=candidate.id,
                valid=False,
                reason="label",
                annotator="ann",
                origin="terminal",
                created_at=now,
            )
        ],
        [
            Prediction(
                case_id=candidate.id, model="vader", probabilities={"neutral": 1.0}, label="neutral"
            )
        ],
        [RunManifest(run_id="r1", command="expand", created_at=now, package_version="0.1.0")],
    ]
    for index, batch in enumerate(records):
        path = tmp_path / f"{index}.jsonl"
        write_jsonl(path, batch)
        assert list(read_jsonl(path, type(batch[0]))) == batch


def test_ids_are_content_hashes_and_a_wrong_id_is_rejected():
    candidate = _candidate()
    assert candidate.id == case_id("nli", "Ann is here.", "Ann is not here.")
    with pytest.raises(ValueError, match="does not match the content"):
        Candidate.model_validate({**candidate.model_dump(), "id": "0" * 16})


def test_a_failed_write_leaves_the_earlier_file_whole(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("earlier\n")

    def broken():
        yield _candidate()
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        write_jsonl(path, broken())
    assert path.read_text() == "earlier\n"
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(_candidate().model_dump_json() + "\n\n{not json\n")
    with pytest.raises(InputError) as caught:
        list(read_jsonl(path, Candidate))
    problem = caught.value.problems[0]
    assert (problem.file, problem.line) == (path, 3)
    assert "not valid JSON" in problem.message


def test_invalid_record_names_file_line_and_field(tmp_path):
    path = tmp_path / "c.jsonl"
    bad = _candidate().model_dump()
    bad["seed_case_ids"] = ["a", 3]
    path.write_text(_candidate().model_dump_json() + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError) as caught:
        list(read_jsonl(path, Candidate))
    problem = caught.value.problems[0]
    assert (problem.line, problem.field) == (2, "seed_case_ids[1]")
    assert str(problem).startswith(f"{path}:2: seed_case_ids[1]: ")


def test_unknown_fields_are_rejected(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({**_candidate().model_dump(), "colour": "red"}) + "\n")
    with pytest.raises(InputError, match="colour"):
        list(read_jsonl(path, Candidate))


def test_written_files_get_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = tmp_path / "cases.jsonl"
    write_jsonl(path, [_candidate()])
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask


def test_a_folder_of_parts_reads_as_one_file_in_name_order(tmp_path):
    annotations = [
        Annotation(candidate_id=f"c{i}", valid=True, annotator="a", origin="terminal")
        for i in range(5)
    ]
    folder = tmp_path / "parts"
    folder.mkdir()
    write_jsonl(folder / "part-2.jsonl", annotations[3:])
    write_jsonl(folder / "part-1.jsonl", annotations[:3])
    (folder / "notes.txt").write_text("not a part")
    assert jsonl_files(folder) == [folder / "part-1.jsonl", folder / "part-2.jsonl"]
    assert list(read_jsonl_parts(folder, Annotation)) == annotations
    assert list(read_jsonl_parts(folder / "part-1.jsonl", Annotation)) == annotations[:3]


def test_a_folder_without_parts_is_an_error_naming_it(tmp_path):
    with pytest.raises(InputError) as raised:
        list(read_jsonl_parts(tmp_path, Annotation))
    assert str(tmp_path) in str(raised.value) and "without .jsonl files" in str(raised.value)
