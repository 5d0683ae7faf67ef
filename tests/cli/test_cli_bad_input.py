"""Bad and empty inputs through the command: a corrupt ensemble.json, wrongly typed report
summaries and texts longer than spaCy parses stop with a one-line error naming the file
(issue 17, finding 10); an empty input is an error that leaves earlier outputs as they
were (finding 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from tests.cli_runner import run_testaug
from tests.tiny_models import make_candidate, make_labelled

GOOD = ["the seat was great .", "i love the crew .", "good service .", "they love the flight ."]
BAD = ["i hate the crew .", "awful flight !", "the food was bad ."]


def assert_one_line_error(result, *names: str) -> None:
    """Exit 1, no traceback, and an error line naming each of `names`."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert any(all(name in line for name in names) for line in lines), result.stderr


@pytest.fixture(scope="module")
def ensemble(tmp_path_factory) -> Path:
    """A trained ensemble of one lexical member."""
    from rankers.ensemble import load_config
    from rankers.ensemble_training import train_ensemble

    root = tmp_path_factory.mktemp("ensemble")
    config = root / "lexical.yaml"
    config.write_text(
        "name: lexical\nmembers:\n  - {name: lexical, kind: lexical, min_count: 1, "
        "iterations: 50}\n"
    )
    train_ensemble(make_labelled(GOOD, BAD), load_config(config), root / "rankers")
    return root / "rankers"


def ranked_once(tmp_path: Path, ensemble: Path) -> tuple[Path, bytes]:
    """ranked.jsonl written by a rank of two candidates, and its bytes."""
    candidates = tmp_path / "candidates.jsonl"
    write_jsonl(candidates, [make_candidate("i love the seat ."), make_candidate("awful crew !")])
    out = tmp_path / "ranked.jsonl"
    done = run_testaug(
        tmp_path, "rank", str(candidates), "--rankers", str(ensemble), "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    return out, out.read_bytes()


def test_rank_with_a_corrupt_ensemble_json_names_the_file(tmp_path: Path, ensemble: Path):
    broken = tmp_path / "rankers"
    broken.mkdir()
    for item in ensemble.iterdir():
        target = broken / item.name
        target.symlink_to(item, target_is_directory=item.is_dir())
    (broken / "ensemble.json").unlink()
    (broken / "ensemble.json").write_text('{"config": {"name": "lexical", "members": [')
    candidates = tmp_path / "candidates.jsonl"
    write_jsonl(candidates, [make_candidate("i love the seat .")])
    result = run_testaug(
        tmp_path, "rank", str(candidates), "--rankers", str(broken), "-o", str(tmp_path / "r.jsonl")
    )
    assert_one_line_error(result, str(broken / "ensemble.json"), "not valid JSON")
    assert not (tmp_path / "r.jsonl").exists()


def test_rank_with_a_wrongly_typed_ensemble_json_names_the_field(tmp_path: Path, ensemble):
    broken = tmp_path / "rankers"
    broken.mkdir()
    manifest = json.loads((ensemble / "ensemble.json").read_text())
    manifest["folds"] = "five"
    (broken / "ensemble.json").write_text(json.dumps(manifest))
    candidates = tmp_path / "candidates.jsonl"
    write_jsonl(candidates, [make_candidate("i love the seat .")])
    result = run_testaug(
        tmp_path, "rank", str(candidates), "--rankers", str(broken), "-o", str(tmp_path / "r.jsonl")
    )
    assert_one_line_error(result, str(broken / "ensemble.json"), "folds")


def test_rank_of_an_empty_candidates_file_is_an_error_and_keeps_the_earlier_ranking(
    tmp_path: Path, ensemble: Path
):
    out, before = ranked_once(tmp_path, ensemble)
    calibration = tmp_path / "ranked.calibration.json"
    calibration_before = calibration.read_bytes() if calibration.exists() else None
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = run_testaug(tmp_path, "rank", str(empty), "--rankers", str(ensemble), "-o", str(out))
    assert_one_line_error(result, str(empty), "no candidates")
    assert out.read_bytes() == before
    after = calibration.read_bytes() if calibration.exists() else None
    assert after == calibration_before


@pytest.mark.parametrize(
    ("name", "content", "field"),
    [
        ("evaluation.json", {"models": "not a list", "n_cases": "many"}, None),
        ("diversity.json", {"self_bleu": "high", "groups": 3}, None),
    ],
)
def test_report_of_a_wrongly_typed_summary_names_the_file(tmp_path, name, content, field):
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "cases.jsonl", [case("The seat was great.")])
    (run / name).write_text(json.dumps(content))
    result = run_testaug(tmp_path, "report", str(run))
    assert_one_line_error(result, str(run / name))
    assert not (run / "report.md").exists() and not (run / "report.html").exists()


def test_report_of_a_folder_without_run_files_is_an_error_and_writes_nothing(tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("not a run file\n")
    result = run_testaug(tmp_path, "report", str(run), "-o", str(tmp_path / "out"))
    assert_one_line_error(result, str(run), "no run files")
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "out").exists()


def case(text: str, **fields) -> TestCase:
    base = {
        "task": "sentiment",
        "capability": "Vocabulary",
        "description_id": "d",
        "description": "A positive sentence.",
        "label": "positive",
        "source": "template",
    }
    return TestCase(**{**base, **fields, "text": text})


LONG = "The seat was great. " * 60_000  # 1,200,000 characters: over spaCy's 1,000,000


def test_diversity_of_a_text_longer_than_spacy_parses_names_the_case(tmp_path: Path):
    cases = tmp_path / "cases.jsonl"
    write_jsonl(cases, [case("The seat was great."), case(LONG.strip())])
    result = run_testaug(tmp_path, "diversity", str(cases), "--by", "")
    assert_one_line_error(result, "1,000,000", "The seat was great.")


def test_induce_of_a_text_longer_than_spacy_parses_names_file_and_line(tmp_path: Path):
    seed = case("The seat was great.")
    cases = tmp_path / "cases.jsonl"
    write_jsonl(cases, [seed])
    accepted = tmp_path / "accepted.jsonl"
    long_case = case(LONG.strip(), source="llm", meta={"seed_case_ids": [seed.id]})
    write_jsonl(accepted, [case("The seat was nice.", source="llm"), long_case])
    out = tmp_path / "templates.yaml"
    result = run_testaug(tmp_path, "templates", "induce", str(accepted), "-o", str(out))
    assert_one_line_error(result, f"{accepted}:2", "1,000,000")
    assert not out.exists()


def earlier_induce_outputs(folder: Path) -> dict[str, bytes]:
    """Non-empty outputs of an earlier `templates induce` into folder/templates.yaml."""
    files = {
        "templates.yaml": "name: earlier\n",
        "templates.lexicons.yaml": "air_noun: [seat]\n",
        "templates.induced.jsonl": '{"earlier": true}\n',
    }
    for name, text in files.items():
        (folder / name).write_text(text)
    return {name: (folder / name).read_bytes() for name in files}


def test_induce_that_yields_no_template_is_an_error_and_keeps_earlier_outputs(tmp_path):
    seed = case("The seat was great.")
    cases = tmp_path / "cases.jsonl"
    write_jsonl(cases, [seed])
    accepted = tmp_path / "accepted.jsonl"  # reuses no slot word of its seed
    write_jsonl(accepted, [case("Nobody cares.", source="llm", meta={"seed_case_ids": [seed.id]})])
    out = tmp_path / "out"
    out.mkdir()
    before = earlier_induce_outputs(out)
    result = run_testaug(
        tmp_path, "templates", "induce", str(accepted), "--seed-cases", str(cases),
        "-o", str(out / "templates.yaml"),
    )  # fmt: skip
    assert_one_line_error(result, str(accepted), "no template")
    assert {name: (out / name).read_bytes() for name in before} == before


def test_induce_with_an_empty_cases_file_is_an_error_and_keeps_earlier_outputs(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_text("")
    accepted = tmp_path / "accepted.jsonl"
    write_jsonl(accepted, [case("The seat was nice.", source="llm")])
    out = tmp_path / "out"
    out.mkdir()
    before = earlier_induce_outputs(out)
    result = run_testaug(
        tmp_path, "templates", "induce", str(accepted), "--seed-cases", str(cases),
        "-o", str(out / "templates.yaml"),
    )  # fmt: skip
    assert_one_line_error(result, str(cases), "no seed cases")
    assert {name: (out / name).read_bytes() for name in before} == before
