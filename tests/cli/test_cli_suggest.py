"""`testaug suggest` as a user runs it: CheckList-style masked sentences whose other slots name
built-in lexicons, with and without a suite (a tiny masked LM stands in for the model)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.editor.suggestion import WordSuggestion
from tests.cli_runner import run_testaug
from tests.editor.test_fill_in import build_tiny_mlm

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_mlm(tmp_path_factory.mktemp("mlm") / "mlm", favourite="good")


@pytest.mark.parametrize("suite", [None, "sentiment"], ids=["no-suite", "suite"])
def test_a_slot_naming_a_builtin_lexicon_is_filled_with_or_without_a_suite(
    tmp_path, tiny_mlm, suite
):
    args = ["suggest", "{first_name} is {a:mask}.", "--pos", "NOUN", "-n", "3"]
    args += ["--mlm", f"hf:{tiny_mlm}", "-o", "out.jsonl"]
    suite_args = ["--suite", suite] if suite else []
    result = run_testaug(tmp_path, *args, *suite_args, without_env=("OMP_WAIT_POLICY",))
    assert result.returncode == 0, result.stderr
    written = list(read_jsonl(tmp_path / "out.jsonl", WordSuggestion))
    assert written[0].filled == "James is a good."  # first_name's first word, James
    assert all(s.masked == "{first_name} is {a:mask}." for s in written)


def test_a_suites_own_lexicon_wins_over_the_builtin_of_the_same_name(write_suite, tiny_mlm):
    suite = write_suite(
        """
        task: sentiment
        labels: [negative, positive]
        lexicons: [lexicons.yaml]
        capabilities:
          - name: Vocabulary
            descriptions:
              - description: d
                label: positive
                templates: ["{first_name} is great."]
        """,
        lexicons="first_name: [Zelda, Ada]\n",
    )
    args = ["suggest", "{first_name} is {a:mask}.", "--suite", str(suite), "-n", "1"]
    args += ["--mlm", f"hf:{tiny_mlm}", "-o", "out.jsonl"]
    result = run_testaug(suite.parent, *args, without_env=("OMP_WAIT_POLICY",))
    assert result.returncode == 0, result.stderr
    [written] = read_jsonl(suite.parent / "out.jsonl", WordSuggestion)
    assert written.filled == "Zelda is a good."


def test_an_unknown_slot_is_named_with_the_close_lexicon_names(tmp_path, tiny_mlm):
    args = ["suggest", "{frist_name} is {a:mask}.", "--mlm", f"hf:{tiny_mlm}"]
    result = run_testaug(tmp_path, *args, without_env=("OMP_WAIT_POLICY",))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())  # rich wraps long lines
    assert "{frist_name}" in message and "did you mean {first_name}" in message


@pytest.mark.parametrize(("users", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_suggest_lets_torch_threads_wait_passively_unless_the_user_chose(
    tmp_path, monkeypatch, users, expected
):
    import testaug.steps.suggest as step
    from testaug.steps.suggest import SuggestResult

    seen: list[str | None] = []

    def fake_run_suggest(request, *, cache_dir, scorer=None):
        seen.append(os.environ.get("OMP_WAIT_POLICY"))
        return SuggestResult(suggestions=[])

    monkeypatch.setattr(step, "run_suggest", fake_run_suggest)
    env = {"OMP_WAIT_POLICY": users} if users else {}
    result = run_testaug(
        tmp_path, "suggest", "It was {mask}.", env=env, without_env=("OMP_WAIT_POLICY",)
    )
    assert result.returncode == 0, result.stderr
    assert seen == [expected]


def test_a_mistyped_part_of_speech_is_refused_before_the_model_loads(tmp_path, monkeypatch):
    from testaug.editor.scorer import LMScorer

    loads: list[Path] = []

    def load(cache_dir, **options):
        loads.append(cache_dir)
        raise AssertionError("the model loaded before the part of speech was checked")

    monkeypatch.setattr(LMScorer, "load", staticmethod(load))
    args = ("lexicon", "suggest", "{first_name} is {a:mask}.", "--pos", "NOUNS", "-n", "15")
    result = run_testaug(tmp_path, *args, without_env=("OMP_WAIT_POLICY",))
    assert result.returncode == 1 and loads == []
    assert result.stderr.strip() == (
        "error: --pos: unknown part of speech 'NOUNS': use NOUN, VERB, ADJ, ADV"
    )


def test_a_part_of_speech_in_any_case_is_wordnets_tag():
    from testaug.steps.suggest import SuggestConfig

    assert SuggestConfig(text="It was {mask}.", pos="adj").pos == "ADJ"
    assert SuggestConfig(text="It was {mask}.").pos is None
