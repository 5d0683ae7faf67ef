"""What the reader fuzzing found, kept as plain tests: JSON that Python's parser gives up on
(deep nesting, a 5,000-digit number), escaped lone surrogates, YAML with NUL bytes,
unreadable numbers or dates, a duplicated seed case, a corrupt lexical.json, member names
that are no folder names, an empty training file; in the loops, words no lexicon can hold
(a line break, a control character, U+FFFF) and negative counts in a tree report."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel

from testaug.core.errors import InputError
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.yaml_source import load_yaml
from tests.cli_runner import run_testaug

DATA = Path(__file__).parent.parent / "data"


class Row(BaseModel):
    text: object


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"text": ' + "[" * 100_000 + "}", r":2: not valid JSON \(nested too deeply, column 1\)"),
        ('{"text": ' + "9" * 5_000 + "}", r":2: not valid JSON \(a number of more than 4,300 digits, column 10\)"),
        ('{"text": "a\\ud800b"}', r":2: not valid JSON \(a lone surrogate escape, not text, column 12\)"),
    ],
    ids=["deep nesting", "huge number", "lone surrogate"],
)  # fmt: skip
def test_jsonl_that_python_cannot_hold_is_an_input_error_naming_file_and_line(
    tmp_path, line, message
):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "ok"}\n' + line + "\n")
    with pytest.raises(InputError, match=f"^{path}{message}"):
        list(read_jsonl(path, Row))


@pytest.mark.parametrize("key", ["\x85", "a\nb", "\u2028", "tab\there"])
def test_a_field_name_with_a_line_break_is_quoted_so_the_error_stays_one_line(tmp_path, key):
    class Scores(BaseModel):
        scores: dict[str, float]

    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"scores": {key: None}}) + "\n")
    with pytest.raises(InputError) as raised:
        list(read_jsonl(path, Scores))
    message = str(raised.value)
    assert message.splitlines() == [message]
    assert message == f"{path}:1: scores[{key!r}]: Input should be a valid number"


def test_an_escaped_surrogate_pair_is_text(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"text": "\\ud83d\\ude00"}\n')
    assert [row.text for row in read_jsonl(path, Row)] == ["\U0001f600"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: 1\nb: x\x00y\n", r":2: invalid YAML: character 0x0000 is not allowed in YAML"),
        ("a: 1\nb: " + "9" * 5_000 + "\n", r":2: cannot read the value '9999.*': a number of more than 4,300 digits"),
        ("a: 1\nb: 2020-13-45\n", r":2: cannot read the value '2020-13-45': month must be in 1..12"),
        ('a: 1\nb: "x\\ud800"\n', r":2: 'x\\ud800' holds a lone surrogate escape, not text"),
    ],
    ids=["NUL", "huge number", "no such date", "lone surrogate"],
)  # fmt: skip
def test_yaml_values_python_cannot_hold_are_input_errors_naming_file_and_line(
    tmp_path, text, message
):
    path = tmp_path / "lexicons.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=f"^{path}{message}"):
        load_yaml(path)


def test_suite_validate_of_a_lexicons_file_with_a_nul_byte_is_a_clean_error(tmp_path):
    for name in ("suite.yaml", "lexicons.yaml"):
        shutil.copy(DATA / "tiny" / name, tmp_path / name)
    (tmp_path / "lexicons.yaml").write_bytes(b"adj: [usual, \x00honest]\n")
    result = run_testaug(tmp_path, "suite", "validate", "suite.yaml")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "lexicons.yaml:1: invalid YAML: character 0x0000" in result.stderr


def test_expand_of_a_suite_with_a_label_that_is_a_list_of_lists_names_the_field(tmp_path):
    for name in ("suite.yaml", "lexicons.yaml"):
        shutil.copy(DATA / "tiny" / name, tmp_path / name)
    suite = tmp_path / "suite.yaml"
    suite.write_text(suite.read_text().replace("label: neutral", "label: [[]]"))
    result = run_testaug(tmp_path, "expand", "suite.yaml", "-o", "cases.jsonl")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "suite.yaml:22: capabilities[1].descriptions[0].templates[1].label: expected a label"
        in (result.stderr)
    )
    assert not (tmp_path / "cases.jsonl").exists()


def test_report_refuses_a_manifest_json_nested_too_deeply_naming_it(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(Path(__file__).parent.parent / "reports" / "data" / "triage.json", run)
    (run / "manifest.json").write_text("[" * 100_000)
    result = run_testaug(tmp_path, "report", "run")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr == "error: run/manifest.json:1: not valid JSON (nested too deeply)\n"
    assert not (run / "report.md").exists()


@pytest.mark.parametrize("value", ["NaN", "-1", "7", "true", '"0.9"'])
def test_report_ignores_a_manifest_precision_that_is_no_fraction(tmp_path, value):
    from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

    run = write_ranked_run(
        tmp_path / "run",
        ["Case 0 is nice.", "Case 1 is nice."],
        p_valid=[0.3, 0.95],
        calibration=make_calibration(m=VOUCHED_CURVE),
    )
    (run / "verdicts.jsonl").write_text("")
    (run / "manifest.json").write_text(f'{{"arguments": {{"accept_precision": {value}}}}}')
    result = run_testaug(tmp_path, "report", "run")
    assert result.returncode == 0, result.stderr
    assert (run / "report.md").exists()


def test_generate_from_a_cases_file_listing_a_case_twice_counts_it_once(tmp_path):
    shutil.copytree(DATA / "tiny", tmp_path / "suite")
    done = run_testaug(
        tmp_path, "expand", "suite/suite.yaml", "--per-template", "2", "-o", "cases.jsonl"
    )
    assert done.returncode == 0, done.stderr
    cases = tmp_path / "cases.jsonl"
    cases.write_text(cases.read_text() * 2)
    result = run_testaug(tmp_path, "generate", "cases.jsonl", "-o", "c.jsonl", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "dry run: 6 prompts" in result.stderr + result.stdout


@pytest.fixture(scope="module")
def lexical_ensemble(tmp_path_factory) -> Path:
    from rankers.ensemble import load_config
    from rankers.ensemble_training import train_ensemble
    from tests.tiny_models import make_labelled

    root = tmp_path_factory.mktemp("ensemble")
    config = root / "lexical.yaml"
    config.write_text(
        "name: lexical\nmembers:\n  - {name: lexical, kind: lexical, min_count: 1, "
        "iterations: 50}\n"
    )
    good = ["the seat was great .", "i love the crew .", "good service .", "they love it ."]
    bad = ["i hate the crew .", "awful flight !", "the food was bad ."]
    train_ensemble(make_labelled(good, bad), load_config(config), root / "rankers")
    return root / "rankers"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda saved: saved.pop("weights"), "weights: Field required"),
        (lambda saved: saved.update(weights=saved["weights"][1:]), "vocabulary entries but"),
        (lambda saved: saved.update(bias="high"), "bias: Input should be a valid number"),
        (lambda saved: saved.update(bias=float("nan")), "bias: Input should be a finite number"),
    ],
    ids=["missing", "wrong length", "wrong type", "NaN"],
)
def test_rank_with_a_corrupt_lexical_member_names_its_file(
    tmp_path, lexical_ensemble, change, message
):
    from tests.tiny_models import make_candidate

    rankers = tmp_path / "rankers"
    shutil.copytree(lexical_ensemble, rankers)
    member = rankers / "lexical" / "fold-1" / "lexical.json"
    saved = json.loads(member.read_text())
    change(saved)
    member.write_text(json.dumps(saved))
    write_jsonl(tmp_path / "candidates.jsonl", [make_candidate("i love the seat .")])
    result = run_testaug(
        tmp_path, "rank", "candidates.jsonl", "--rankers", "rankers", "-o", "ranked.jsonl"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        result.stderr.strip().splitlines()[-1].startswith(f"error: {member.relative_to(tmp_path)}")
    )
    assert message in result.stderr
    assert not (tmp_path / "ranked.jsonl").exists()


def test_rank_with_an_ensemble_json_naming_a_member_without_a_folder_names_it(
    tmp_path, lexical_ensemble
):
    from tests.tiny_models import make_candidate

    rankers = tmp_path / "rankers"
    shutil.copytree(lexical_ensemble, rankers)
    manifest = rankers / "ensemble.json"
    saved = json.loads(manifest.read_text())
    saved["config"]["members"][0]["name"] = "lexAical"
    manifest.write_text(json.dumps(saved))
    write_jsonl(tmp_path / "candidates.jsonl", [make_candidate("i love the seat .")])
    result = run_testaug(
        tmp_path, "rank", "candidates.jsonl", "--rankers", "rankers", "-o", "ranked.jsonl"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "error: rankers/ensemble.json: config.members[0].name: member 'lexAical' has no folder "
        "rankers/lexAical/fold-0; train the ensemble again"
    ) in result.stderr


@pytest.mark.parametrize("name", ["../outside", "so " * 40, ".hidden", ""])
def test_an_ensemble_config_refuses_a_member_name_that_is_no_folder_name(tmp_path, name):
    from rankers.config import load_config

    config = tmp_path / "config.yaml"
    config.write_text(f"name: x\nmembers:\n  - {{name: {json.dumps(name)}, kind: lexical}}\n")
    with pytest.raises(
        InputError, match=rf"^{config}:2: members: \[0\]\.name .* is not a member name"
    ):
        load_config(config)


def test_an_ensemble_config_refuses_a_member_name_used_twice(tmp_path):
    from rankers.config import load_config

    config = tmp_path / "config.yaml"
    member = "  - {name: lex, kind: lexical}\n"
    config.write_text("name: x\nmembers:\n" + member * 2)
    with pytest.raises(InputError, match=r":2: members: \[1\]\.name 'lex' is used twice$"):
        load_config(config)


def test_rankers_train_on_an_empty_file_names_it(tmp_path):
    (tmp_path / "labelled.jsonl").write_text("")
    result = run_testaug(
        tmp_path, "rankers", "train", "labelled.jsonl", "--config", "offline", "-o", "out"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "error: labelled.jsonl: no labelled candidates to train on" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda saved: saved.update(scale=saved["scale"][:1]), "2 means, 1 scales and 2 weights"),
        (lambda saved: saved.update(scale=[0.0, 1.0]), "a scale of 0"),
        (lambda saved: saved.update(bias=float("inf")), "bias: Input should be a finite number"),
        (lambda saved: saved.pop("model"), "model: Field required"),
    ],
    ids=["wrong length", "zero scale", "infinite", "missing"],
)
def test_a_corrupt_linear_head_member_file_names_it(tmp_path, change, message):
    import numpy as np

    from rankers.members.linear_head import LinearHead, LinearRanker

    class Member(LinearRanker):
        file_name = "member.json"

    head = LinearHead(np.zeros(2), np.ones(2), np.array([0.5, -0.5]), 0.1)
    Member("m", "model", head).save(tmp_path)
    path = tmp_path / "member.json"
    saved = json.loads(path.read_text())
    change(saved)
    path.write_text(json.dumps(saved))
    with pytest.raises(InputError, match=f"^{path}: .*{re.escape(message)}"):
        Member.load(tmp_path)


def test_a_saved_linear_head_member_loads_back(tmp_path):
    import numpy as np

    from rankers.members.linear_head import LinearHead, LinearRanker

    class Member(LinearRanker):
        file_name = "member.json"

    head = LinearHead(np.zeros(2), np.ones(2), np.array([0.5, -0.5]), 0.1)
    Member("m", "model", head).save(tmp_path)
    loaded = Member.load(tmp_path)
    assert (loaded.name, loaded.model, loaded.head.bias) == ("m", "model", 0.1)
    assert np.allclose(loaded.head.weights, head.weights)


def induce_from(tmp_path, seed: dict, accepted: dict):
    """Run `templates induce` on one accepted case generated from one seed case."""
    from testaug.core.records import TestCase

    fields = {"task": "sentiment", "capability": "Vocabulary", "description_id": "d"}
    seed_case = TestCase(**fields, description="D.", **seed)
    seed_ids = accepted.pop("seed_case_ids", [seed_case.id])
    accepted_case = TestCase(
        **fields, description="D.", source="llm", **accepted, meta={"seed_case_ids": seed_ids}
    )
    write_jsonl(tmp_path / "cases.jsonl", [seed_case])
    write_jsonl(tmp_path / "accepted.jsonl", [accepted_case])
    result = run_testaug(
        tmp_path, "templates", "induce", "accepted.jsonl", "--seed-cases", "cases.jsonl",
        "-o", "templates.yaml",
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "templates.yaml").exists()
    return result


def test_induce_from_seeds_without_fills_names_the_seed_cases_file(tmp_path):
    result = induce_from(
        tmp_path,
        {"text": "The seat was great.", "label": "positive"},
        {"text": "The seat was nice.", "label": "positive"},
    )
    assert "error: accepted.jsonl: no template induced" in result.stderr
    assert "their seed cases in cases.jsonl are missing or have no fills" in result.stderr


def test_induce_from_a_seed_whose_fill_name_is_no_slot_name_names_file_line_and_field(tmp_path):
    seed = {
        "text": "No one likes the seat.",
        "label": "negative",
        "fills": {"pos_verb_ 3sg": "likes", "air_noun": "seat"},
    }
    result = induce_from(tmp_path, seed, {"text": "Nobody likes that seat.", "label": "negative"})
    assert "error: cases.jsonl:1: fills: 'pos_verb_ 3sg' is not a slot name" in result.stderr


@pytest.mark.parametrize("ids", [float("nan"), "abc", [1, 2]])
def test_induce_of_an_accepted_case_whose_seed_ids_are_no_list_names_file_line_and_field(
    tmp_path, ids
):
    result = induce_from(
        tmp_path,
        {"text": "The seat was great.", "label": "positive"},
        {"text": "The seat was nice.", "label": "positive", "seed_case_ids": ids},
    )
    assert "error: accepted.jsonl:1: meta.seed_case_ids: expected a list of seed case ids" in (
        result.stderr
    )


def test_rankers_train_on_a_file_of_only_valid_candidates_names_it(tmp_path):
    from tests.tiny_models import make_labelled

    write_jsonl(tmp_path / "labelled.jsonl", make_labelled(["good seat .", "nice crew ."], []))
    result = run_testaug(
        tmp_path, "rankers", "train", "labelled.jsonl", "--config", "offline", "-o", "out"
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert (
        "error: labelled.jsonl: all 2 labelled candidates are valid; training needs both"
    ) in result.stderr
    assert not (tmp_path / "out").exists()


NOT_A_WORD = ["a\nb", "a\x85b", "a\u2028b", "\x7f", "a\tb", "a\x00b", "a\uffffb"]


@pytest.mark.parametrize("word", NOT_A_WORD)
def test_applying_a_kept_word_no_lexicon_can_hold_names_file_line_and_field(tmp_path, word):
    from tests.editor.lexicon_suite import LEXICONS, write_suite

    write_suite(tmp_path / "suite")
    verdict = {"word": word, "decision": "keep", "lexicon": "pos_verb", "annotator": "ann"}
    (tmp_path / "verdicts.jsonl").write_text(json.dumps(verdict) + "\n")
    result = run_testaug(tmp_path, "review", "words", "apply", "verdicts.jsonl", "--suite", "suite")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: verdicts.jsonl:1: word: ")
    assert "a lexicon word is one line of text" in result.stderr
    assert (tmp_path / "suite" / "lexicons.yaml").read_text() == LEXICONS


@pytest.mark.parametrize("word", NOT_A_WORD)
def test_a_suggested_word_no_lexicon_can_hold_is_refused_before_the_review(tmp_path, word):
    from tests.editor.lexicon_suite import suggestion, write_suggestions, write_suite

    write_suite(tmp_path / "suite")
    write_suggestions(tmp_path / "words.jsonl", [suggestion("adore", -8.0), suggestion(word, -9.0)])
    result = run_testaug(
        tmp_path, "review", "words", "terminal", "words.jsonl", "--suite", "suite",
        "--into", "pos_verb", "--annotator", "ann", input="kk",
    )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "error: words.jsonl:2: words[0]: " in result.stderr
    assert not (tmp_path / "words.verdicts.jsonl").exists()


def test_a_label_studio_word_edited_to_two_lines_is_a_problem_not_a_verdict():
    from testaug.editor.review_label_studio import DROP, VERDICT, read_word_export

    answer = {"result": [{"from_name": VERDICT, "value": {"choices": [DROP]}}]}
    reading = read_word_export([{"id": 3, "data": {"word": "a\nb"}, "annotations": [answer]}], {})
    assert reading.verdicts == []
    assert reading.problems == [
        "task 3: 'a\\nb' holds '\\n': a lexicon word is one line of text a YAML file can hold"
    ]


@pytest.mark.parametrize(
    "field", ["tests", "failing", "filtered", "direct_tests", "direct_failing"]
)
def test_a_tree_report_with_a_negative_count_names_file_and_field(tmp_path, field):
    from testaug.adaptive.tree_files import write_tree
    from tests.adaptive.suggestion_helpers import tree

    write_tree(tmp_path / "tree.jsonl", tree())
    args = ("tree", "retest", "tree.jsonl", "--model", "py:tests.models_fixture:predict",
            "--task", "sentiment")  # fmt: skip
    assert run_testaug(tmp_path, *args, "-o", "previous.json").returncode == 0
    report = json.loads((tmp_path / "previous.json").read_text())
    report["topics"][1][field] = -3
    (tmp_path / "previous.json").write_text(json.dumps(report))
    result = run_testaug(tmp_path, *args, "--previous", "previous.json", "-o", "retest.json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert re.search(rf"error: previous\.json\b.*topics\[1\]\.{field}\b", result.stderr), (
        result.stderr
    )
    assert not (tmp_path / "retest.json").exists()
