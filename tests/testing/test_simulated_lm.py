"""The simulated LM: valid cases near a prompt's last items, in AdaTest's notation, through
the scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from testaug.adaptive.prompting import STOP, Malformed, parse_completion, render_prompt
from testaug.adaptive.tree import TreeTest
from testaug.core.bundled import resolve_suite
from testaug.core.records import Suite, TestCase, label_options
from testaug.generation.backends.base import CompletionRequest
from testaug.generation.backends.openai_compatible import OpenAIBackend
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite
from testaug.testing.openai_server import ScriptedOpenAIServer
from testaug.testing.simulated_lm import SimulatedLM, TemplateProducts


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(resolve_suite("sentiment"))


@pytest.fixture(scope="module")
def products(suite: Suite) -> TemplateProducts:
    return TemplateProducts(suite)


@pytest.fixture(scope="module")
def cases(suite: Suite) -> list[TestCase]:
    return list(expand_suite(suite, per_template=4, seed=7))


def as_test(case: TestCase) -> TreeTest:
    return TreeTest(topic="/t", input=case.text, output="|".join(label_options(case.label)))


def of_description(cases: Sequence[TestCase], index: int, n: int = 5) -> list[TestCase]:
    ids = list(dict.fromkeys(case.description_id for case in cases))
    return [case for case in cases if case.description_id == ids[index]][:n]


def reply_test(lm: SimulatedLM, tests: Sequence[TreeTest], index: int) -> TreeTest:
    prompt = render_prompt(tests)
    reply = lm(prompt.text, index)
    assert reply.endswith(STOP)
    parsed = parse_completion(reply[: -len(STOP)], prompt.layout, topic="/t", labels=None)
    assert not isinstance(parsed, Malformed), parsed
    return parsed


def slot_fills(products: TemplateProducts, text: str) -> tuple[str, dict[str, str]]:
    located = products.locate(text)
    assert located is not None, text
    return located.index.template.id, located.fills


def test_every_expanded_case_is_in_its_description_product_and_no_other_text_is(products, cases):
    assert all(products.contains(case.text, case.description_id) for case in cases)
    first, other = of_description(cases, 0, 1)[0], of_description(cases, 6, 1)[0]
    assert not products.contains(other.text, first.description_id)
    assert not products.contains("The flight was pizza.", first.description_id)
    assert not products.contains(first.text + " Really.", first.description_id)


def test_the_label_must_be_one_the_template_expects(products, cases):
    case = of_description(cases, 0, 1)[0]  # positive
    assert products.contains(case.text, case.description_id, label="positive")
    assert not products.contains(case.text, case.description_id, label="negative")


def test_distinct_copies_of_a_lexicon_must_differ(products):
    flying = "Maria is flying from Paris to {} on Monday."
    located = products.locate(flying.format("Rome"))
    if located is None:
        pytest.skip("the bundled suite changed its travel template")
    assert products.locate(flying.format("Paris")) is None


def test_replies_are_valid_cases_of_the_prompts_description_one_step_from_its_last_items(
    suite, products, cases
):
    lm = SimulatedLM(suite)
    for index in (0, 3, 7, 12, 20):
        group = of_description(cases, index)
        tests = [as_test(case) for case in group]
        last_two = [slot_fills(products, t.input) for t in tests[-2:]]
        for sample in range(6):
            reply = reply_test(lm, tests, sample)
            assert products.contains(reply.input, group[0].description_id)
            assert reply.input not in {t.input for t in tests}
            assert any(one_step(slot_fills(products, reply.input), near) for near in last_two)


def one_step(reply: tuple[str, dict[str, str]], near: tuple[str, dict[str, str]]) -> bool:
    """One slot refilled in the same template, or a sibling template keeping the words of
    the slots the two templates share."""
    (template, fills), (near_template, near_fills) = reply, near
    if template == near_template:
        return sum(fills[tag] != near_fills[tag] for tag in fills) == 1
    return all(fills[tag] == near_fills[tag] for tag in fills.keys() & near_fills.keys())


def test_the_reply_shows_the_fields_the_prompts_lines_show(suite, cases):
    lm = SimulatedLM(suite)
    mixed = [as_test(c) for c in of_description(cases, 0, 3) + of_description(cases, 1, 3)]
    prompt = render_prompt(mixed)
    assert "output" in prompt.layout.fields
    reply = reply_test(lm, mixed, 0)
    assert reply.output in {"positive", "negative"}
    assert reply.comparator == "should be"


def test_replies_are_deterministic_per_prompt_sample_and_seed_and_vary_across_samples(suite, cases):
    tests = [as_test(case) for case in of_description(cases, 12)]
    text = render_prompt(tests).text
    first, again = SimulatedLM(suite), SimulatedLM(suite)
    assert [first(text, i) for i in range(8)] == [again(text, i) for i in range(8)]
    assert len({first(text, i) for i in range(8)}) > 1
    other_seed = SimulatedLM(suite, seed=1)
    assert [first(text, i) for i in range(8)] != [other_seed(text, i) for i in range(8)]


def test_a_prompt_of_unknown_items_gets_a_case_of_the_suite(suite, products):
    lm = SimulatedLM(suite)
    tests = [TreeTest(topic="/t", input=f"Nothing a template writes {i}.", output="neutral")
             for i in range(3)]  # fmt: skip
    reply = reply_test(lm, tests, 0)
    assert products.locate(reply.input) is not None


def test_the_scripted_server_answers_with_the_simulated_lm_through_a_real_client(suite, cases):
    group = of_description(cases, 7)
    prompt = render_prompt([as_test(case) for case in group])
    lm = SimulatedLM(suite)
    with ScriptedOpenAIServer(lm) as server:
        backend = OpenAIBackend(model="simulated", api_key="k", base_url=server.base_url)
        result = backend.complete(
            CompletionRequest(prompt=prompt.text, n=3, max_tokens=60, stop=(STOP,))
        )
    texts = [completion.text for completion in result.completions]
    assert texts == [lm(prompt.text, i)[: -len(STOP)] for i in range(3)]
    products = lm.products
    assert all(products.contains(text, group[0].description_id) for text in texts)
