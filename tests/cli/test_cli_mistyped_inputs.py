"""Typos a new user makes, refused at once by the commands they reach: a topic the tree does
not have (`adapt`, `fix`), a model spec of no known kind, a local model folder that does not
exist. Each error names the option, says what was meant where it can, and comes before any
work: no LM request, no model loaded, no output written."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.fixing.patching.protocol import IidExample
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import CliResult, run_testaug

NEGATED = "/Negation/A negative sentence with a negated positive verb"
TOPICS = {
    NEGATED: ["I don't love the seat.", "The crew was not great.", "I would not call it good."],
    "/Vocabulary/A neutral statement about two passengers": ["Ann sat next to Bo on the plane."],
}


def stable_number(prompt: str) -> int:
    """A number for a prompt, the same in every process (unlike `hash`, which is salted)."""
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:12], 16)


def reply(prompt: str, index: int) -> str:
    """A new negated positive for each prompt and sample."""
    return f'The meal {stable_number(prompt)} was not good, case {index}."\n'


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


@pytest.fixture
def tree(tmp_path) -> Path:
    rows = [
        TreeTest(topic=topic, input=text, comparator="should not be", output="positive")
        for topic, texts in TOPICS.items()
        for text in texts
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    return tmp_path / "tree.jsonl"


def adapt(folder: Path, server: ScriptedOpenAIServer, *args: str) -> CliResult:
    server.reset()
    return run_testaug(
        folder,
        "adapt",
        "tree.jsonl",
        *("--backend", "openai", "--base-url", server.base_url, "--generator-model", "scripted"),
        *("--task", "sentiment", "-o", "round-1/suggestions.jsonl"),
        *args,
        env={"OPENAI_API_KEY": "sk-test", "COLUMNS": "300"},
    )


def one_line(result: CliResult) -> str:
    """The error of a command that failed as a user error: exit code 1, no traceback."""
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return " ".join(result.stderr.split())


# --- bug 6: a topic the tree does not have ---------------------------------------------


def test_adapt_refuses_a_mistyped_topic_before_any_generation_naming_option_tree_and_near_topics(
    tmp_path, tree, server
):
    result = adapt(tmp_path, server, "--topic", "/Negaton", "--model", "vader")
    error = one_line(result)
    assert "tree.jsonl" in error and "--topic" in error and "no topic /Negaton" in error
    assert "did you mean /Negation?" in error
    assert "--new-topic" in error
    assert server.requests == [] and not (tmp_path / "round-1").exists()


def test_adapt_suggests_topics_whatever_their_case_and_from_the_last_part_alone(
    tmp_path, tree, server
):
    lower = one_line(adapt(tmp_path, server, "--topic", NEGATED.lower(), "--model", "vader"))
    assert f"did you mean {NEGATED}?" in lower
    leaf = "/A negative sentence with a negated positive verb"
    assert f"did you mean {NEGATED}?" in one_line(
        adapt(tmp_path, server, "--topic", leaf, "--model", "vader")
    )
    assert server.requests == []


def test_adapt_with_new_topic_suggests_into_a_topic_the_tree_does_not_have_yet(
    tmp_path, tree, server
):
    new = "/Negation/Sarcasm"
    result = adapt(
        tmp_path, server, "--topic", new, "--new-topic", "--model", "vader", "--suggestions", "10"
    )
    assert result.returncode == 0, result.stderr
    assert server.requests
    suggestions = list(read_jsonl(tmp_path / "round-1" / "suggestions.jsonl", Suggestion))
    assert suggestions and all(s.test.topic == new for s in suggestions)


def test_fix_refuses_a_mistyped_topic_before_loading_the_model(tmp_path, tree):
    (tmp_path / "models" / "base").mkdir(parents=True)  # empty: loading it would fail
    write_jsonl(tmp_path / "iid.jsonl", [IidExample(text="fine", label="positive")] * 4)
    result = run_testaug(
        tmp_path,
        *("fix", "--work", "work", "--tree", "tree.jsonl", "--iid", "iid.jsonl"),
        *(
            "--labels",
            "negative,positive",
            "--start-model",
            "hf:models/base",
            "--topic",
            "/Vocabulry",
        ),
    )
    error = one_line(result)
    assert "--topic" in error and "tree.jsonl" in error
    assert "did you mean /Vocabulary" in error and "--new-topic" not in error
    assert not (tmp_path / "work").exists()


# --- bug 7: model specs -------------------------------------------------------------------


@pytest.fixture
def cases(tmp_path, tiny_suite_path) -> Path:
    done = run_testaug(tmp_path, "expand", str(tiny_suite_path), "-o", "cases.jsonl")
    assert done.returncode == 0, done.stderr
    return tmp_path / "cases.jsonl"


@pytest.mark.parametrize(
    ("spec", "meant"),
    [("vadr", "'vader'"), ("spcy:eng_spacysentiment", "'spacy:eng_spacysentiment'")],
)
def test_evaluate_refuses_a_mistyped_model_kind_before_perturbing_and_suggests_the_kind(
    tmp_path, cases, spec, meant
):
    result = run_testaug(tmp_path, "evaluate", "cases.jsonl", "--model", spec, "-o", "out.json")
    error = one_line(result)
    assert f"--model: unknown model spec {spec!r}; did you mean {meant}?" in error
    assert "perturbing" not in result.stdout + result.stderr
    assert not (tmp_path / "out.json").exists()


def test_evaluate_checks_every_model_before_the_first_is_loaded(tmp_path, cases):
    (tmp_path / "models" / "empty").mkdir(parents=True)  # a folder, but loading it would fail
    result = run_testaug(
        tmp_path,
        *("evaluate", "cases.jsonl", "-o", "o.json"),
        *("--model", "hf:models/empty", "--model", "vadr"),
    )
    assert "did you mean 'vader'?" in one_line(result)
    assert not (tmp_path / "o.json").exists()


def test_evaluate_takes_a_model_kind_in_any_case(tmp_path, cases):
    result = run_testaug(
        tmp_path, "evaluate", "cases.jsonl", "--model", "VADER", "--perturb", "0", "--json"
    )
    assert result.returncode == 0, result.stderr
    assert '"model": "vader"' in result.stdout


def test_a_mistyped_local_model_folder_is_no_such_folder_with_the_folder_meant(tmp_path, tree):
    (tmp_path / "models" / "sentiment-v2").mkdir(parents=True)
    args = ("--task", "sentiment", "-o", "report.json")
    near = run_testaug(tmp_path, "tree", "retest", "tree.jsonl", "--model", "hf:modles/sentiment-v2", *args)  # fmt: skip
    error = one_line(near)
    assert "--model" in error and "no such folder: modles/sentiment-v2" in error
    assert "did you mean 'models/sentiment-v2'?" in error and "huggingface" not in error.lower()
    dotted = run_testaug(tmp_path, "tree", "retest", "tree.jsonl", "--model", "hf:./checkpoints/v3", *args)  # fmt: skip
    assert "no such folder: ./checkpoints/v3" in one_line(dotted)
    assert not (tmp_path / "report.json").exists()


def test_run_refuses_a_mistyped_model_before_starting_prefect(tmp_path):
    result = run_testaug(
        tmp_path, "run", "--model", "Vadr", env={"PREFECT_HOME": str(tmp_path / "prefect")}
    )
    assert "--model: unknown model spec 'Vadr'; did you mean 'vader'?" in one_line(result)
    assert not (tmp_path / "prefect").exists() and not (tmp_path / "runs").exists()


def test_patch_eval_refuses_a_mistyped_shipped_encoder_before_reading_the_suites(tmp_path):
    args = ("patch-eval", "--suite-a", "a.jsonl", "--suite-b", "b.jsonl", "-o", "p.json")
    typo = one_line(run_testaug(tmp_path, *args, "--model", "minlm"))
    assert "--model" in typo and "did you mean 'minilm'?" in typo
    missing = one_line(run_testaug(tmp_path, *args, "--model", "hf:../no-such-model"))
    assert "no such folder: ../no-such-model" in missing
