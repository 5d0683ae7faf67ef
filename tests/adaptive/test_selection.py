"""AdaTest's greedy prompt selection (AT-7, AT-code-3): each rule on its own."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from testaug.adaptive.selection import (
    PromptSelectionConfig,
    positive_scores,
    random_prompts,
    select_prompts,
    subtopic_of,
    topic_weights,
)
from testaug.adaptive.tree import TreeTest

# No randomness at all: the pure greedy order.
GREEDY = PromptSelectionConfig(
    score_randomization=0.0, skip_randomization=0.0, slot_randomization=0.0
)


def make(topic: str, text: str, output: str = "positive", comparator="should not be") -> TreeTest:
    return TreeTest(topic=topic, input=text, comparator=comparator, output=output)


def distinct_embeddings(n: int, seed: int = 0) -> np.ndarray:
    """Nearly orthogonal random vectors: no test resembles another."""
    return np.random.default_rng(seed).normal(size=(n, 256))


def counts(prompts: list[list[TreeTest]]) -> Counter[str]:
    return Counter(test.input for prompt in prompts for test in prompt)


def test_failing_tests_are_chosen_more_often_than_passing_ones():
    tests = [make("/A", f"fail {i}") for i in range(10)] + [
        make("/A", f"pass {i}") for i in range(10)
    ]
    scores = [0.8] * 10 + [-0.8] * 10
    seen: Counter[str] = Counter()
    for seed in range(20):
        prompts = select_prompts(
            tests, scores, "/A", distinct_embeddings(20), np.random.default_rng(seed)
        )
        seen.update(counts(prompts))
    failing = sum(n for text, n in seen.items() if text.startswith("fail"))
    passing = sum(n for text, n in seen.items() if text.startswith("pass"))
    assert failing > 3 * passing
    assert passing > 0  # the random slots and skips still let passing tests in


def test_prompts_hold_prompt_size_tests_of_the_focus_topic_ten_times():
    tests = [make("/A", f"a {i}") for i in range(12)] + [make("/B", f"b {i}") for i in range(12)]
    prompts = select_prompts(
        tests, [0.1] * 24, "/A", distinct_embeddings(24), np.random.default_rng(1)
    )
    assert len(prompts) == 10
    assert all(len(prompt) == 7 for prompt in prompts)
    assert all(test.topic == "/A" for prompt in prompts for test in prompt)


def test_subtopic_and_outside_tests_are_penalised_even_when_they_fail_harder():
    direct = [make("/A", f"direct {i}") for i in range(8)]
    sub = [make("/A/Sub", f"sub {i}") for i in range(8)]
    outside = [make("/B", f"outside {i}") for i in range(8)]
    tests = direct + sub + outside
    scores = [-0.5] * 8 + [0.9] * 8 + [0.9] * 8
    seen: Counter[str] = Counter()
    for seed in range(10):
        seen.update(
            counts(
                select_prompts(
                    tests, scores, "/A", distinct_embeddings(24), np.random.default_rng(seed)
                )
            )
        )
    by_kind = Counter(text.split()[0] for text in seen.elements())
    assert by_kind["outside"] == 0
    assert by_kind["direct"] > 5 * by_kind["sub"]


def test_a_topic_without_direct_tests_is_prompted_from_its_subtopics():
    sub = [make("/A/One", f"one {i}") for i in range(4)] + [
        make("/A/Two", f"two {i}") for i in range(4)
    ]
    prompts = select_prompts(sub, [0.0] * 8, "/A", distinct_embeddings(8), np.random.default_rng(0))
    assert all(len(prompt) == 7 for prompt in prompts)
    # subtopic diversity: a prompt visits both subtopics early rather than one exhaustively
    firsts = {prompt[-1].topic for prompt in prompts} | {prompt[-2].topic for prompt in prompts}
    assert firsts == {"/A/One", "/A/Two"}
    assert all(
        {t.topic for t in prompt[-2:]} == {"/A/One", "/A/Two"}
        for prompt in select_prompts(
            sub, [0.0] * 8, "/A", distinct_embeddings(8), np.random.default_rng(0), GREEDY
        )
    )


def test_a_topic_with_fewer_than_three_tests_borrows_the_closest_outside_tests():
    tests = [
        make("/A/B", "the only one"),
        make("/A/C", "a sibling topic"),
        make("/A/C", "another sibling"),
        make("/Z", "far away"),
        make("/Z", "far away too"),
    ]
    weights = topic_weights(tests, "/A/B")
    assert weights[0] == 1.0
    assert 0 < weights[3] < weights[1] < 0.01  # a sibling is closer than another branch
    prompts = select_prompts(
        tests,
        [0.0] * 5,
        "/A/B",
        distinct_embeddings(5),
        np.random.default_rng(0),
        GREEDY.model_copy(update={"prompt_size": 3}),
    )
    picked = [t.input for t in prompts[0]]
    assert picked[-1] == "the only one"
    assert set(picked[:2]) == {"a sibling topic", "another sibling"}
    # with three tests in the topic, nothing outside it is used
    enough = [*tests, make("/A/B", "second"), make("/A/B", "third")]
    assert topic_weights(enough, "/A/B")[1] == 0.0


def test_an_exact_duplicate_of_a_picked_test_is_not_picked_but_a_distinct_one_is():
    tests = [make("/A", "best"), make("/A", "best copy"), make("/A", "other"), make("/A", "low")]
    scores = [0.9, 0.8, 0.5, 0.1]
    vectors = distinct_embeddings(4)
    vectors[1] = vectors[0] * 1.01  # cosine 1 with "best"
    settings = GREEDY.model_copy(update={"prompt_size": 3, "prompts": 1})
    picked = select_prompts(tests, scores, "/A", vectors, np.random.default_rng(0), settings)[0]
    assert [t.input for t in picked] == ["low", "other", "best"]
    plain = settings.model_copy(update={"prompt_diversity": False})
    picked = select_prompts(tests, scores, "/A", vectors, np.random.default_rng(0), plain)[0]
    assert [t.input for t in picked] == ["other", "best copy", "best"]


def test_the_highest_priority_test_comes_last():
    tests = [make("/A", f"t{i}") for i in range(7)]
    scores = [0.3, -0.2, 0.9, 0.1, 0.5, -0.6, 0.0]
    prompt = select_prompts(
        tests, scores, "/A", distinct_embeddings(7), np.random.default_rng(0), GREEDY
    )[0]
    assert [t.input for t in prompt] == ["t5", "t1", "t6", "t3", "t0", "t4", "t2"]


def test_skips_sometimes_leave_out_the_top_test_and_random_slots_bring_in_low_ones():
    tests = [make("/A", f"t{i}") for i in range(30)]
    scores = list(np.linspace(1.0, -1.0, 30))
    no_noise = PromptSelectionConfig(score_randomization=0.0, slot_randomization=0.0)
    prompts = select_prompts(
        tests, scores, "/A", distinct_embeddings(30), np.random.default_rng(3), no_noise
    )
    assert sum("t0" not in {t.input for t in p} for p in prompts) >= 1
    low = {f"t{i}" for i in range(20, 30)}
    greedy = select_prompts(
        tests, scores, "/A", distinct_embeddings(30), np.random.default_rng(3), GREEDY
    )
    assert not any(t.input in low for p in greedy for t in p)
    slots = GREEDY.model_copy(update={"slot_randomization": 1.0})
    mixed = select_prompts(
        tests, scores, "/A", distinct_embeddings(30), np.random.default_rng(3), slots
    )
    assert any(t.input in low for p in mixed for t in p)


def test_the_same_seed_gives_the_same_prompts_and_another_seed_others():
    tests = [make("/A", f"t{i}") for i in range(20)]
    scores = list(np.random.default_rng(9).normal(size=20))
    vectors = distinct_embeddings(20)

    def run(seed: int) -> list[list[str]]:
        prompts = select_prompts(tests, scores, "/A", vectors, np.random.default_rng(seed))
        return [[t.id for t in p] for p in prompts]

    assert run(5) == run(5)
    assert run(5) != run(6)


def test_a_prompt_holds_tests_of_one_shape():
    labels = [make("/A", f"label {i}") for i in range(5)]
    same = [
        make("/A", f"inv {i}", output=f"orig {i}", comparator="should be the same as for")
        for i in range(5)
    ]
    prompts = select_prompts(
        labels + same,
        [0.0] * 5 + [0.9] * 5,
        "/A",
        distinct_embeddings(10),
        np.random.default_rng(0),
    )
    assert all(t.comparator == "should be the same as for" for p in prompts for t in p)


def test_unscored_tests_rank_below_every_scored_one():
    values = positive_scores([float("nan"), -1.0, 2.0])
    assert values[0] < values[1] < values[2]
    assert values[1] == pytest.approx(1e-8)


def test_subtopic_of_names_the_child_of_the_focus():
    assert subtopic_of("/A/B/C", "/A") == "/A/B"
    assert subtopic_of("/A/B", "/") == "/A"
    assert subtopic_of("/A", "/A") is None
    assert subtopic_of("/Z", "/A") is None


def test_random_prompts_draw_from_the_topic_only():
    tests = [make("/A", f"a{i}") for i in range(10)] + [make("/B", f"b{i}") for i in range(10)]
    prompts = random_prompts(tests, "/A", np.random.default_rng(0))
    assert len(prompts) == 10 and all(len(p) == 7 for p in prompts)
    assert all(t.topic == "/A" for p in prompts for t in p)
    assert len({tuple(t.id for t in p) for p in prompts}) > 1
