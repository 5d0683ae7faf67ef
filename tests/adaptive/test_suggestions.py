"""A suggestion round end to end: prompts through the real openai client to the scripted
server on 127.0.0.1, completions parsed, deduplicated, scored on `py:` models and sorted."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import pytest

from testaug.adaptive.prompting import STOP
from testaug.adaptive.selection import PromptSelectionConfig
from testaug.adaptive.suggestions import SuggestionRoundConfig, suggestion_round
from testaug.adaptive.tree import TestTree, TreeTest
from testaug.evaluation.models import load_model
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.generation.cache import ResponseCache
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.adaptive.word_models import word_vectors

LABELS = ("negative", "neutral", "positive")
FOCUS = "/Negation"
NEAR_SUBTOPIC = "The food I do not dislike"  # the words of a /Negation/Double test


def not_positive(topic: str, text: str) -> TreeTest:
    return TreeTest(topic=topic, input=text, comparator="should not be", output="positive")


FAILING = [f"I don't love the {thing}." for thing in ("seat", "crew", "food", "movie")]
PASSING = [f"I don't hate the {thing}." for thing in ("seat", "crew", "food", "movie")]
TREE = TestTree(
    rows=(
        *(not_positive(FOCUS, text) for text in FAILING + PASSING),
        not_positive(f"{FOCUS}/Double", "I do not dislike the food"),
        not_positive(f"{FOCUS}/Double", "It is not untrue that I liked it"),
        not_positive("/Other", "Other topic, great and failing"),
        not_positive("/Other", "Another great one"),
    )
)


def inputs_of(prompt: str) -> list[str]:
    return re.findall(r'^"(.*)"$', prompt, flags=re.M)


def reply(prompt: str, index: int) -> str:
    """One next item: a copy of a tree test, a line every prompt repeats, a malformed line,
    a near copy of a subtopic test, then new failing (even) and passing (odd) ones."""
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:6]
    lines = {
        0: inputs_of(prompt)[0],
        1: "The same line for every prompt",
        2: 'Too" "many" "fields',
        3: NEAR_SUBTOPIC,
    }
    text = lines.get(index) or (
        f"I don't love case {tag} {index}." if index % 2 == 0 else f"I hate case {tag} {index}."
    )
    return f'{text}{STOP}"Never read'


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


@pytest.fixture(scope="module")
def models():
    target = load_model("py:tests.adaptive.word_models:keyword", task_labels=LABELS)
    other = load_model("py:tests.adaptive.word_models:gloomy", task_labels=LABELS)
    return target, other


def backend(server: ScriptedOpenAIServer) -> OpenAIBackend:
    return OpenAIBackend(model="scripted", api_key="sk-test", base_url=server.base_url)


def run(server, models, **settings):
    server.reset()
    target, other = models
    return suggestion_round(
        TREE,
        FOCUS,
        target,
        backend(server),
        ResponseCache(None),
        word_vectors,
        others=[other],
        settings=SuggestionRoundConfig(**settings),
    )


@pytest.fixture(scope="module")
def default_round(server, models):
    result = run(server, models, suggestions=60, seed=1)
    return result, list(server.requests)


def test_ten_prompts_ask_for_floor_k_over_ten_items_each_as_adatest_does(default_round):
    result, requests = default_round
    bodies = [r.body for r in requests]
    assert result.counts.prompts == 10 and result.counts.per_prompt == 6
    assert sum(body["n"] for body in bodies) == 60
    assert all(body["n"] % 6 == 0 for body in bodies)
    assert {body["temperature"] for body in bodies} == {0.95}
    assert {body["max_tokens"] for body in bodies} == {100}
    assert all(body["stop"] == [STOP] for body in bodies)
    assert result.counts.requested == 60 and result.counts.completions == 60


def test_prompts_hold_three_to_seven_tests_of_the_topic_and_end_with_a_failing_one(
    default_round,
):
    _, requests = default_round
    in_topic = {t.input for t in TREE.tests_in(FOCUS)}
    lasts = []
    for request in requests:
        prompt = request.body["prompt"]
        assert prompt.endswith('\n"')
        shown = inputs_of(prompt)
        assert 3 <= len(shown) <= 7
        assert set(shown) <= in_topic  # never /Other
        lasts.append(shown[-1])
    assert sum(text in FAILING for text in lasts) >= len(lasts) * 0.6


def test_repeats_malformed_lines_and_near_copies_of_subtopic_tests_are_dropped_with_reasons(
    default_round,
):
    result, _ = default_round
    counts = result.counts
    assert counts.in_tree == 10  # sample 0 copies a prompt test
    # samples 1 and 3 are the same lines in all ten prompts: nine repeats each
    assert counts.duplicates == 18
    assert counts.malformed == {"wrong_arity": 10}
    assert counts.in_subtopic == 1  # the first near copy of a /Negation/Double test
    assert counts.kept == 60 - 10 - 18 - 10 - 1 == 21
    reasons = {d.reason for d in result.dropped}
    assert reasons == {"in_tree", "duplicate", "wrong_arity", "in_subtopic"}
    near = next(d for d in result.dropped if d.reason == "in_subtopic")
    assert "I do not dislike the food" in near.detail and "/Negation/Double" in near.detail


def test_suggestions_are_scored_on_every_model_and_sorted_by_the_targets_failure_score(
    default_round, models
):
    result, _ = default_round
    target, other = models
    suggestions = result.suggestions
    scores = [s.failure_score for s in suggestions]
    assert scores == sorted(scores, reverse=True)
    assert all(s.target_model == target.name for s in suggestions)
    assert all(set(s.test.scores) == {target.name, other.name} for s in suggestions)
    assert all(set(s.outputs) == {target.name, other.name} for s in suggestions)
    top, bottom = suggestions[0], suggestions[-1]
    assert "love" in top.test.input and top.outputs[target.name] == "positive"
    assert "hate" in bottom.test.input and bottom.failure_score < 0
    assert all(s.test.topic == FOCUS and s.test.labeler == "imputed" for s in suggestions)
    assert all(s.outputs[other.name] == "negative" for s in suggestions)


def test_the_same_prompt_twice_shares_one_request_and_gets_new_samples(server, models):
    greedy = PromptSelectionConfig(
        score_randomization=0.0, skip_randomization=0.0, slot_randomization=0.0
    )
    result = run(server, models, suggestions=40, prompt=greedy)
    assert result.counts.prompts == 10 and len({p.text for p in result.prompts}) == 1
    assert server.request_count == 1 and server.requests[0].body["n"] == 40
    shown = inputs_of(server.requests[0].body["prompt"])
    assert set(shown[-4:]) == set(FAILING)  # the failing tests last
    assert result.counts.completions == 40


def test_a_repeated_round_is_answered_from_the_cache(server, models):
    target, _ = models
    cache = ResponseCache(None)
    first = suggestion_round(TREE, FOCUS, target, backend(server), cache, word_vectors)
    sent = server.request_count
    again = suggestion_round(TREE, FOCUS, target, backend(server), cache, word_vectors)
    assert server.request_count == sent
    assert again.suggestions == first.suggestions
    assert again.counts.generation["cached_samples"] == 100


def test_random_selection_uses_the_same_budget_and_notation(server, models):
    result = run(server, models, suggestions=20, selection="random", seed=2)
    in_topic = {t.input for t in TREE.tests_in(FOCUS)}
    assert sum(r.body["n"] for r in server.requests) == 20
    for request in server.requests:
        assert set(inputs_of(request.body["prompt"])) <= in_topic
    assert result.counts.kept > 0


def test_a_topic_with_one_test_borrows_close_tests_for_its_prompt(server, models):
    tree = TestTree(rows=(*TREE.rows, not_positive("/Negation/Lonely", "Not a lovely day.")))
    target, _ = models
    suggestion_round(
        tree,
        "/Negation/Lonely",
        target,
        backend(server),
        ResponseCache(None),
        word_vectors,
        settings=SuggestionRoundConfig(suggestions=10),
    )
    prompts = [inputs_of(r.body["prompt"]) for r in server.requests[-10:]]
    assert all(p[-1] == "Not a lovely day." and len(p) >= 3 for p in prompts)
    assert not any("Other topic" in text for p in prompts for text in p)


def test_at_the_root_prompts_visit_the_subtopics_and_near_copies_of_their_tests_are_dropped(
    server, models
):
    root = suggestion_round(
        TREE,
        "/",
        models[0],
        backend(server),
        ResponseCache(None),
        word_vectors,
        settings=SuggestionRoundConfig(suggestions=40, seed=4),
    )
    prompts = [inputs_of(p.text) for p in root.prompts]
    topics = {t.input: t.topic for t in TREE.tests}
    assert all(len(p) == 7 for p in prompts)
    assert any({topics[text] for text in p} >= {FOCUS, "/Other"} for p in prompts)
    assert root.counts.in_subtopic == 1
    assert all(s.test.topic == "/" for s in root.suggestions)


def pair_reply(prompt: str, index: int) -> str:
    tag = hashlib.sha256(prompt.encode()).hexdigest()[:4]
    return f'How do I cook {tag} {index}?" "What is the way to cook {tag} {index}?{STOP}'


def test_a_pair_task_round_reads_both_texts_back(models):
    pairs = TestTree(
        rows=tuple(
            TreeTest(topic="/Synonyms", input=f"How do I {verb}?", input_pair=f"How can I {verb}?",
                     output="duplicate")
            for verb in ("swim", "run", "cook", "drive")
        )
    )  # fmt: skip
    labels = ("duplicate", "not_duplicate")
    target = load_model("py:tests.adaptive.word_models:same_words", task_labels=labels)
    with ScriptedOpenAIServer(pair_reply) as server:
        result = suggestion_round(
            pairs, "/Synonyms", target, backend(server), ResponseCache(None), word_vectors,
            settings=SuggestionRoundConfig(suggestions=20),
        )  # fmt: skip
        prompt = server.requests[0].body["prompt"]
    assert prompt.splitlines()[0].count('" "') == 1  # both texts, the label shared
    assert result.counts.kept == 20
    first = result.suggestions[0].test
    assert first.input.startswith("How do I cook") and first.output == "duplicate"
    assert (first.input_pair or "").startswith("What is the way to cook")
