"""Prompts from seed cases: k seeds spread over a description's templates, seeded, recorded."""

from __future__ import annotations

from collections import Counter

import pytest

from testaug.core.errors import InputError
from testaug.core.records import TestCase
from testaug.generation.prompts import prompt_for
from testaug.generation.seeding import build_prompts, seed_groups
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


@pytest.fixture
def tiny_cases(tiny_suite_path) -> list[TestCase]:
    return list(expand_suite(load_suite(tiny_suite_path), per_template=20, seed=0))


def test_each_description_and_label_gets_its_prompts(tiny_cases):
    prompts = build_prompts(tiny_cases, prompt_for("sentiment"), per_description=4, k=3, seed=1)
    groups = Counter((p.description_id, p.label) for p in prompts)
    assert len(groups) == len(seed_groups(tiny_cases)) == 3
    assert set(groups.values()) == {4}


def test_seeds_are_spread_across_the_descriptions_templates(tiny_cases):
    by_id = {c.id: c for c in tiny_cases}
    negation = [
        p
        for p in build_prompts(tiny_cases, prompt_for("sentiment"), per_description=6, k=2, seed=0)
        if p.capability == "Negation"
    ]
    for prompt in negation:
        templates = {by_id[i].template_id for i in prompt.seed_case_ids}
        assert len(templates) == 2


def test_every_prompt_shows_its_seed_cases_and_ends_open(tiny_cases):
    by_id = {c.id: c for c in tiny_cases}
    for prompt in build_prompts(tiny_cases, prompt_for("sentiment"), per_description=3, seed=2):
        assert prompt.text.startswith(prompt.description + "\n")
        assert prompt.text.endswith("\n- {")
        for case_id in prompt.seed_case_ids:
            assert f"- {{ {by_id[case_id].text} }}" in prompt.text
        assert all(by_id[i].label == prompt.label for i in prompt.seed_case_ids)


def test_same_seed_gives_the_same_prompts_and_another_seed_others(tiny_cases):
    template = prompt_for("sentiment")
    first = build_prompts(tiny_cases, template, per_description=5, seed=7)
    assert first == build_prompts(tiny_cases, template, per_description=5, seed=7)
    assert first != build_prompts(tiny_cases, template, per_description=5, seed=8)


def test_no_two_prompts_of_a_description_share_their_seed_set(tiny_cases):
    prompts = build_prompts(tiny_cases[:6], prompt_for("sentiment"), per_description=50, k=2)
    seed_sets = [frozenset(p.seed_case_ids) for p in prompts]
    assert len(seed_sets) == len(set(seed_sets)) < 50


def test_pair_prompt_from_single_cases_is_an_error(tiny_cases):
    with pytest.raises(InputError, match="needs pairs"):
        build_prompts(tiny_cases, prompt_for("paraphrase"), per_description=1)


def test_nli_prompt_writes_each_seeds_label_word():
    case = TestCase(
        task="nli",
        capability="Boolean",
        description_id="d1",
        description="and",
        text="Mary has a cat and a dog.",
        text_pair="Mary has a dog.",
        label="entailment",
    )
    (prompt,) = build_prompts([case], prompt_for("nli"), per_description=1, k=3)
    assert "- { Mary has a cat and a dog. }\n- Implication: { Mary has a dog. }\n- {" in prompt.text
