"""An empty result never replaces a good output: an adapt round whose every completion is
malformed, and a tree export that could write no test, fail and leave the earlier file."""

from __future__ import annotations

import pytest

from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.suggestions import SuggestionRoundConfig
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.errors import TestAugError
from testaug.core.jsonl import read_jsonl
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.steps.adapt import AdaptConfig, adapt_round
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.adaptive.word_models import word_vectors
from tests.cli_runner import run_testaug

MODEL = "py:tests.adaptive.word_models:keyword"


def good_reply(prompt: str, index: int) -> str:
    return f'The soup {abs(hash(prompt)) % 1000} was not terrible, take {index}."\n'


def malformed_reply(prompt: str, index: int) -> str:
    return '"\n'  # an empty item


@pytest.fixture
def tree_file(tmp_path):
    rows = [
        TreeTest(topic="/Negation", input=text, comparator="should not be", output="positive")
        for text in ("Not bad.", "Not awful at all.", "I don't hate it.", "It isn't terrible.")
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    return tmp_path / "tree.jsonl"


def run_round(tree_file, out, reply, **kwargs):
    with ScriptedOpenAIServer(reply) as server:
        config = AdaptConfig(
            tree=tree_file,
            topic="/Negation",
            models=(MODEL,),
            out=out,
            round=SuggestionRoundConfig(suggestions=20),
            task="sentiment",
            **kwargs,
        )
        return adapt_round(
            config,
            backend=OpenAIBackend(model="scripted", api_key="k", base_url=server.base_url),
            embed=word_vectors,
        )


def test_a_round_of_malformed_completions_fails_and_keeps_the_earlier_suggestions(
    tmp_path, tree_file
):
    out = tmp_path / "round" / "suggestions.jsonl"
    run_round(tree_file, out, good_reply)
    before = out.read_bytes()
    assert len(list(read_jsonl(out, Suggestion))) == 20

    with pytest.raises(TestAugError) as caught:
        run_round(tree_file, out, malformed_reply)

    message = str(caught.value)
    assert "no suggestion" in message and "20 completions" in message and "empty" in message
    assert str(out) in message
    assert out.read_bytes() == before
    dropped = (tmp_path / "round" / "suggestions.dropped.jsonl").read_text().splitlines()
    assert len(dropped) == 20 and all('"reason":"empty"' in line for line in dropped)


def test_an_empty_round_is_written_when_allowed(tmp_path, tree_file):
    out = tmp_path / "suggestions.jsonl"
    out.write_text("earlier\n")
    done = run_round(tree_file, out, malformed_reply, allow_empty=True)
    assert done.records == 0 and out.read_text() == ""


def test_exporting_a_tree_of_same_as_tests_only_fails_and_keeps_the_earlier_csv(tmp_path):
    rows = [
        TreeTest(
            topic="/Robustness",
            input=f"The seat was fine {i}.",
            comparator="should be the same as for",
            output=f"The seat was fine {i}!",
        )
        for i in range(3)
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    csv = tmp_path / "tree.csv"
    csv.write_text("earlier export\n")

    result = run_testaug(tmp_path, "tree", "export", "tree.jsonl", "-o", "tree.csv")

    assert result.returncode != 0 and "Traceback" not in result.stderr
    output = " ".join((result.stdout + result.stderr).split())
    assert "no test" in output and "label columns" in output and "left as it was" in output
    assert csv.read_text() == "earlier export\n"


def test_the_type_columns_export_the_same_tree(tmp_path):
    rows = [
        TreeTest(
            topic="/Robustness",
            input="The seat was fine.",
            comparator="should be the same as for",
            output="The seat was fine!",
        )
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    result = run_testaug(
        tmp_path, "tree", "export", "tree.jsonl", "-o", "tree.csv", "--format", "type"
    )
    assert result.returncode == 0, result.stderr
    assert "The seat was fine!" in (tmp_path / "tree.csv").read_text()


def test_tree_adapt_of_malformed_completions_exits_1_with_one_line(tmp_path, tree_file):
    out = tmp_path / "suggestions.jsonl"
    out.write_text("earlier\n")
    with ScriptedOpenAIServer(malformed_reply) as server:
        result = run_testaug(
            tmp_path, "tree", "adapt", str(tree_file), "--topic", "/Negation",
            "--model", MODEL, "--task", "sentiment", "--suggestions", "20", "-o", str(out),
            "--backend", "openai", "--base-url", server.base_url, "--llm", "scripted",
            env={"OPENAI_API_KEY": "sk-test"},
        )  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "no suggestion kept from 20 completions (20 empty)" in " ".join(result.stderr.split())
    assert out.read_text() == "earlier\n"
