"""Prompt files: declared variables, checked formats, rendering errors, the shipped prompts."""

from __future__ import annotations

import textwrap

import pytest

from testaug.core.errors import InputError
from testaug.generation.prompts import load_prompt, prompt_for


def write(tmp_path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


GOOD = """
    name: demo
    task: sentiment
    purpose: generate
    format: single
    variables:
      description: the instruction
      examples: the items
    template: |-
      ${description}
      ${examples}
      - {
"""


def test_prompt_renders_its_declared_variables(tmp_path):
    prompt = load_prompt(write(tmp_path, GOOD))
    assert prompt.render(description="Be kind.", examples="- { Hi. }") == "Be kind.\n- { Hi. }\n- {"


def test_rendering_with_a_missing_variable_names_it(tmp_path):
    prompt = load_prompt(write(tmp_path, GOOD))
    with pytest.raises(InputError, match=r"missing value for variable \$\{examples\}"):
        prompt.render(description="Be kind.")


def test_rendering_with_an_unknown_variable_names_it(tmp_path):
    prompt = load_prompt(write(tmp_path, GOOD))
    with pytest.raises(InputError, match="unknown variable 'tone'"):
        prompt.render(description="x", examples="y", tone="z")


def test_template_using_an_undeclared_variable_is_reported_at_its_line(tmp_path):
    path = write(tmp_path, GOOD.replace("${description}", "${instruction}"))
    with pytest.raises(InputError) as caught:
        load_prompt(path)
    messages = [str(p) for p in caught.value.problems]
    assert any("p.yaml:8: template: uses ${instruction}" in m for m in messages)
    assert any(
        "variables.description: declared but the template never uses it" in m for m in messages
    )


def test_template_must_end_with_the_formats_opening(tmp_path):
    path = write(tmp_path, GOOD.replace("format: single", "format: pair"))
    with pytest.raises(InputError, match=r"must end with the pair format's opening '- \{\{'"):
        load_prompt(path)


def test_unknown_format_and_field_are_reported(tmp_path):
    path = write(tmp_path, GOOD.replace("format: single", "format: triple\n    colour: red"))
    with pytest.raises(InputError) as caught:
        load_prompt(path)
    text = "\n".join(str(p) for p in caught.value.problems)
    assert "format: unknown format" in text and "colour: unknown field" in text


def test_labelled_pair_needs_label_words(tmp_path):
    path = write(tmp_path, GOOD.replace("format: single", "format: labelled_pair"))
    with pytest.raises(InputError, match="labelled_pair needs label_words"):
        load_prompt(path)


@pytest.mark.parametrize("task", ["sentiment", "paraphrase", "nli"])
def test_shipped_prompts_load_for_every_task(task):
    prompt = prompt_for(task)
    assert prompt.task == task and prompt.purpose == "generate"


def test_shipped_nli_prompt_uses_the_papers_instruction_and_label_words():
    prompt = prompt_for("nli")
    text = prompt.render(examples="- { A. }\n- Implication: { B. }")
    assert text.startswith(
        "Write a pair of sentences that have the same relationship as the previous examples. Examples:"
    )
    assert prompt.label_words == {
        "entailment": "Implication",
        "neutral": "Possibility",
        "contradiction": "Contradiction",
    }


def test_missing_shipped_prompt_says_which_exist():
    with pytest.raises(InputError, match="no shipped prompt for task 'ner'"):
        prompt_for("ner")
