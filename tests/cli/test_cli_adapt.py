"""`testaug adapt` as a user runs it: a tree file, VADER and a `py:` model under test, our
OpenAI-compatible server as the LM, a one-member ranker ensemble for P(valid)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rankers.ensemble import load_config
from rankers.ensemble_training import trained_ensemble
from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import read_jsonl
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import CliResult, run_testaug
from tests.flow_helpers import lexical_config
from tests.tiny_models import make_labelled

TOPIC = "/Negation"
TESTS = [
    "I don't love the seat.",
    "The crew was not great.",
    "I would not call the food good.",
    "I don't hate the movie.",
    "The flight was not bad.",
    "The service was not awful.",
    "It was not a pleasant trip.",
]


def reply(prompt: str, index: int) -> str:
    """A new item for each prompt and sample, "not good" (VADER: negative, passing) or "not
    terrible" (VADER: positive, failing); sample 2 repeats a tree test."""
    shown = re.findall(r'^"(.*)"$', prompt, flags=re.M)
    tag = int(hashlib.sha256(prompt.encode()).hexdigest()[:4], 16)
    if index == 2:
        return f'{shown[0]}"\n'
    word = "good" if index % 2 == 0 else "terrible"
    return f'The meal {tag} was not {word}, case {index}."\n"more'


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("adapt")
    rows = [
        TreeTest(topic=TOPIC, input=text, comparator="should not be", output="positive")
        for text in TESTS
    ]
    rows.append(
        TreeTest(topic="/Vocabulary", input="I love it.", comparator="should be", output="positive")
    )
    write_tree(folder / "tree.jsonl", rows)
    good = [f"i love the crew {i} ." for i in range(12)] + [f"it was not bad {i}" for i in range(8)]
    bad = [f"i hate the seat {i} ." for i in range(12)]
    config = load_config(lexical_config(folder))
    trained_ensemble(config, make_labelled(good, bad), folder / "rankers")
    return folder


def adapt(folder: Path, server: ScriptedOpenAIServer, *args: str) -> CliResult:
    env = {"OPENAI_API_KEY": "sk-test", "COLUMNS": "200"}
    return run_testaug(
        folder,
        "tree",
        "adapt",
        "tree.jsonl",
        "--backend",
        "openai",
        "--base-url",
        server.base_url,
        "--llm",
        "scripted",
        *args,
        env=env,
    )


@pytest.fixture(scope="module")
def first_round(workdir, server):
    server.reset()
    result = adapt(
        workdir,
        server,
        *("--topic", TOPIC, "--model", "vader", "--model", "py:tests.adaptive.word_models:keyword"),
        *("--task", "sentiment", "--suggestions", "30", "-o", "round-1/suggestions.jsonl"),
        *("--rankers", str(next((workdir / "rankers").iterdir())), "--seed", "3"),
    )
    return result, list(server.requests)


def test_adapt_writes_suggestions_sorted_by_the_targets_failure_score(first_round, workdir):
    result, _ = first_round
    assert result.returncode == 0, result.stderr
    suggestions = list(read_jsonl(workdir / "round-1" / "suggestions.jsonl", Suggestion))
    scores = [s.failure_score for s in suggestions]
    assert scores == sorted(scores, reverse=True)
    assert len(suggestions) == 20  # 30 completions less the ten copies of a tree test
    assert all(s.target_model == "vader" for s in suggestions)
    assert all(
        set(s.test.scores) == {"vader", "py:tests.adaptive.word_models:keyword"}
        for s in suggestions
    )
    assert all(s.p_valid is not None and 0 <= s.p_valid <= 1 for s in suggestions)
    failing = [s for s in suggestions if s.failure_score > 0]
    assert len(failing) == 10 and all("not terrible" in s.test.input for s in failing)
    assert suggestions[0].test.topic == TOPIC and suggestions[0].test.labeler == "imputed"


def test_adapt_asks_ten_prompts_of_the_topic_for_three_items_each(first_round):
    _, requests = first_round
    assert len(requests) == 10
    for request in requests:
        body = request.body
        assert body["n"] == 3 and body["stop"] == ['"\n'] and body["temperature"] == 0.95
        shown = re.findall(r'^"(.*)"$', body["prompt"], flags=re.M)
        assert 3 <= len(shown) <= 7 and set(shown) <= set(TESTS)


def test_adapt_prints_the_table_and_writes_a_summary_beside(first_round, workdir):
    result, _ = first_round
    assert f"{TOPIC}: suggestions by vader's failure score" in result.stdout
    assert (
        "wrote 20 suggestions (10 failing on vader)" in result.stdout
        and "10 already in the tree" in result.stdout
    )
    summary = json.loads((workdir / "round-1" / "suggestions.summary.json").read_text())
    assert summary["counts"]["in_tree"] == 10 and summary["ensemble"]
    assert summary["models"] == ["vader", "py:tests.adaptive.word_models:keyword"]
    dropped = (workdir / "round-1" / "suggestions.dropped.jsonl").read_text().splitlines()
    assert {json.loads(line)["reason"] for line in dropped} == {"in_tree"}


def test_adapt_needs_the_task_or_its_labels(workdir, server):
    result = adapt(workdir, server, "--topic", TOPIC, "--model", "vader", "-o", "x.jsonl")
    assert result.returncode == 1
    assert "--task" in result.stderr and "Traceback" not in result.stderr
    assert not (workdir / "x.jsonl").exists()


def test_adapt_refuses_an_unknown_selection_in_one_line(workdir, server):
    result = adapt(
        workdir,
        server,
        *("--topic", TOPIC, "--model", "vader", "--task", "sentiment", "-o", "y.jsonl"),
        *("--selection", "best"),
    )
    assert result.returncode == 1 and "--selection" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
