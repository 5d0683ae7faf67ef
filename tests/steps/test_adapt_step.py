"""The adapt step: a tree file in, suggestions with P(valid), dropped completions, prompts and
a summary out; suggestions as the ranker ensemble reads them."""

from __future__ import annotations

import json

import pytest

from rankers.ensemble import load_config
from rankers.ensemble_training import trained_ensemble
from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.suggestions import SuggestionRoundConfig
from testaug.adaptive.tree import TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import read_jsonl
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.steps.adapt import AdaptConfig, adapt_round, as_candidate
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.adaptive.word_models import word_vectors
from tests.flow_helpers import lexical_config
from tests.tiny_models import make_labelled

LABELS = ("negative", "neutral", "positive")
BACKEND = OpenAIBackend(model="scripted", api_key="sk-test", base_url="http://127.0.0.1:9/v1")


def suggestion(**test) -> Suggestion:
    fields = {"topic": "/Negation/Double", "input": "Not bad.", "output": "positive", **test}
    return Suggestion(test=TreeTest(**fields), focus_topic="/Negation", target_model="vader")


def test_a_should_not_be_suggestion_expects_any_other_label_under_its_topic():
    candidate = as_candidate(
        suggestion(comparator="should not be"),
        task="sentiment",
        labels=LABELS,
        backend=BACKEND,
        temperature=0.95,
    )
    assert candidate.label == ("negative", "neutral")
    assert (candidate.capability, candidate.description) == ("Negation", "Negation / Double")
    assert candidate.test_type == "MFT" and candidate.text == "Not bad."


def test_comparisons_expect_any_label_and_keep_their_test_type():
    same = suggestion(comparator="should be the same as for", output="Not bad at all.")
    less = suggestion(
        comparator="should be no less than", output="Fine.", watched="positive", description="d"
    )
    for item, kind in ((same, "INV"), (less, "DIR")):
        candidate = as_candidate(
            item, task="sentiment", labels=LABELS, backend=BACKEND, temperature=None
        )
        assert candidate.label == LABELS and candidate.test_type == kind
    assert (
        as_candidate(less, task="t", labels=LABELS, backend=BACKEND, temperature=None).description
        == "d"
    )


def test_a_topic_made_from_a_suite_description_is_judged_as_that_description():
    from testaug.adaptive.from_suite import case_topic
    from testaug.steps.adapt import suite_topics

    topics = suite_topics("sentiment")
    capability, description = next(iter(topics.values()))
    item = suggestion(topic=case_topic(capability, description) + "/Found in round 2")
    candidate = as_candidate(
        item,
        task="sentiment",
        labels=LABELS,
        backend=BACKEND,
        temperature=None,
        descriptions=topics,
    )
    assert (candidate.capability, candidate.description) == (capability, description)
    assert suite_topics("no-such-task") == {} and suite_topics(None) == {}


def reply(prompt: str, index: int) -> str:
    return f'The soup {abs(hash(prompt)) % 1000} was not terrible, take {index}."\n'


@pytest.fixture
def tree_file(tmp_path):
    rows = [
        TreeTest(topic="/Negation", input=text, comparator="should not be", output="positive")
        for text in ("Not bad.", "Not awful at all.", "I don't hate it.", "It isn't terrible.")
    ]
    write_tree(tmp_path / "tree.jsonl", rows)
    return tmp_path / "tree.jsonl"


def test_a_round_writes_suggestions_with_p_valid_and_its_files(tmp_path, tree_file):
    folder = trained_ensemble(
        load_config(lexical_config(tmp_path)),
        make_labelled(
            [f"i love it {i} ." for i in range(10)], [f"i hate it {i}" for i in range(10)]
        ),
        tmp_path / "rankers",
    )
    out = tmp_path / "round" / "suggestions.jsonl"
    with ScriptedOpenAIServer(reply) as server:
        config = AdaptConfig(
            tree=tree_file,
            topic="/Negation",
            models=("py:tests.adaptive.word_models:keyword",),
            out=out,
            round=SuggestionRoundConfig(suggestions=20),
            task="sentiment",
            rankers=str(folder),
        )
        done = adapt_round(
            config,
            backend=OpenAIBackend(model="scripted", api_key="k", base_url=server.base_url),
            embed=word_vectors,
        )
    written = list(read_jsonl(out, Suggestion))
    assert done.path == out and done.records == len(written) == 20
    assert done.summary.failing == sum(s.failure_score > 0 for s in written)
    assert all(s.p_valid is not None for s in written)
    summary = json.loads(done.files["summary"].read_text())
    assert summary["kind"] == "adapt" and summary["counts"]["kept"] == 20
    assert summary["ensemble"] and summary["target"] == "py:tests.adaptive.word_models:keyword"
    assert len(done.files["prompts"].read_text().splitlines()) == 10
    assert done.files["dropped"].read_text() == ""
