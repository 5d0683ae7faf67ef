"""An LLM prompted to classify, as a model under test (`llm:` specs), against our scripted
OpenAI-compatible server on 127.0.0.1 through the real openai client."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest

from testaug.core.errors import InputError
from testaug.core.records import TestCase, description_id
from testaug.evaluation.model_runs import evaluate_model
from testaug.evaluation.models import ModelError, check_model_specs, load_model
from testaug.evaluation.models.llm_prompt import AnswerReader, classify_prompt
from testaug.testing.openai_server import ScriptedOpenAIServer

SENTIMENT = ("negative", "neutral", "positive")
NLI = ("entailment", "neutral", "contradiction")
PARAPHRASE = ("duplicate", "not_duplicate")

# The answer the scripted model gives to the case whose (first) text is the key.
ANSWERS = {
    "I love the crew.": "Positive.",
    "The food was awful.": "**NEGATIVE**",
    "The seat was a seat.": " neutral\n",
    "What a good flight.": "It is good, I think.",
    "Flight 12 left at noon.": "I cannot tell from one sentence.",
    "A man sleeps.": "Contradiction",
    "A dog runs in a park.": "entailment - the hypothesis follows",
    "A woman sings.": "Neutral.",
    "How do I learn Python?": "Yes, they are duplicates.",
    "How tall is Everest?": "not_duplicate",
    "Who wrote Hamlet?": "No.",
}


def reply(prompt: str, index: int) -> str:
    """The scripted answer to the case the prompt holds (after its first input's name)."""
    first = re.search(r"^(?:Sentence|Premise|Question 1): (.*)$", prompt, re.MULTILINE)
    return ANSWERS.get(first.group(1) if first else "", "no idea")


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


@pytest.fixture
def settings_env(tmp_path, monkeypatch):
    """The cache folder and the API key where an `llm:` model reads them (the settings)."""
    monkeypatch.setenv("TESTAUG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("TESTAUG_BASE_URL", raising=False)
    return tmp_path / "cache"


def spec_for(server: ScriptedOpenAIServer, options: str = "") -> str:
    return f"llm:openai:scripted?base_url={server.base_url}&attempts=3{options}"


def model_for(server, labels, options: str = ""):
    return load_model(spec_for(server, options), task_labels=labels)


def case(text: str, label: str, pair: str | None = None, task: str = "sentiment") -> TestCase:
    return TestCase(
        task=task,
        capability="Vocabulary",
        description_id=description_id(task, "Vocabulary", "words"),
        description="words",
        text=text,
        text_pair=pair,
        label=label,
        source="template",
    )


def labels_of(model, inputs) -> list[str]:
    probs = model.predict_proba(inputs)
    return [model.labels[int(np.argmax(row))] for row in probs]


def test_single_text_answers_map_to_the_task_labels_whatever_their_case_and_punctuation(
    server, settings_env
):
    model = model_for(server, SENTIMENT)
    texts = [
        "I love the crew.",
        "The food was awful.",
        "The seat was a seat.",
        "What a good flight.",
    ]
    assert labels_of(model, [(t, None) for t in texts]) == [
        "positive",
        "negative",
        "neutral",
        "positive",  # "good", a synonym the prompt file lists
    ]
    assert model.unparsed == {}
    body = server.requests[0].body
    assert body["model"] == "scripted" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["user"]  # no list-continuing system prompt
    assert "Answer with one word: negative, neutral or positive." in body["messages"][0]["content"]


def test_pair_answers_map_to_the_task_labels(server, settings_env):
    nli = model_for(server, NLI)
    pairs = [
        ("A man sleeps.", "A man runs."),
        ("A dog runs in a park.", "An animal moves."),
        ("A woman sings.", "A woman is on stage."),
    ]
    assert labels_of(nli, pairs) == ["contradiction", "entailment", "neutral"]
    prompts = [r.prompts[0] for r in server.requests]  # sent concurrently, in any order
    assert any("Premise: A man sleeps.\nHypothesis: A man runs." in p for p in prompts)

    paraphrase = model_for(server, PARAPHRASE)
    questions = [
        ("How do I learn Python?", "How can I learn Python?"),
        ("How tall is Everest?", "How old is Everest?"),
        ("Who wrote Hamlet?", "Who wrote Macbeth?"),
    ]
    assert labels_of(paraphrase, questions) == ["duplicate", "not_duplicate", "not_duplicate"]
    prompts = [r.prompts[0] for r in server.requests[3:]]
    assert any("Question 1: How do I learn Python?\nQuestion 2: How can" in p for p in prompts)


def test_an_unparseable_answer_is_counted_apart_neither_passed_nor_failed(server, settings_env):
    model = model_for(server, SENTIMENT)
    cases = [
        case("I love the crew.", "positive"),
        case("The food was awful.", "positive"),  # a real failure
        case("Flight 12 left at noon.", "neutral"),  # the answer names no label
    ]
    evaluation = evaluate_model(model, cases)
    assert model.unparsed == {("Flight 12 left at noon.", None): "I cannot tell from one sentence."}
    overall = evaluation.overall
    assert (overall.n, overall.failed, overall.unparsed, overall.filtered) == (2, 1, 1, 0)
    assert overall.rate == 50.0
    unparsed = [r for r in evaluation.results if r.unparsed]
    assert [r.text for r in unparsed] == ["Flight 12 left at noon."]
    assert "I cannot tell" in unparsed[0].reason
    assert [r.text for r in evaluation.failures] == ["The food was awful."]
    assert evaluation.by_capability["Vocabulary"].unparsed == 1


def test_a_server_error_then_success_is_retried(server, settings_env):
    model = model_for(server, SENTIMENT)
    server.fail_next(1, 500)
    assert labels_of(model, [("I love the crew.", None)]) == ["positive"]
    assert server.request_count == 2
    assert model.stats.retries == 1 and model.stats.fresh == 1


def test_a_failure_that_outlasts_the_retries_is_a_model_error_not_a_label(server, settings_env):
    model = model_for(server, SENTIMENT)
    server.fail_next(3, 400)
    with pytest.raises(ModelError, match="HTTP 400"):
        model.predict_proba([("I love the crew.", None)])


def test_a_second_evaluation_is_answered_from_the_response_cache(server, settings_env):
    cases = [case(text, "positive") for text in ("I love the crew.", "The food was awful.")]
    first = evaluate_model(model_for(server, SENTIMENT), cases)
    sent = server.request_count
    assert sent == 2
    again = model_for(server, SENTIMENT)  # a new model, as a new process would load it
    second = evaluate_model(again, cases)
    assert server.request_count == sent
    assert again.stats.cached == 2 and again.stats.requests == 0
    assert [r.predicted for r in second.results] == [r.predicted for r in first.results]
    assert (settings_env / "responses.sqlite").is_file()


def test_the_labels_option_sets_the_words_offered_and_maps_them_to_the_task_labels(
    server, settings_env
):
    model = model_for(server, SENTIMENT, "&labels=positive,negative")
    assert model.offered == ("positive", "negative")
    assert labels_of(model, [("The food was awful.", None)]) == ["negative"]
    content = server.requests[0].body["messages"][0]["content"]
    assert "Answer with one word: positive or negative." in content


@pytest.mark.parametrize(
    ("spec", "suggestion"),
    [
        ("llm:opnai:gpt-4o-mini", "did you mean 'llm:openai:gpt-4o-mini'"),
        ("lm:openai:gpt-4o-mini", "did you mean 'llm:openai:gpt-4o-mini'"),
        ("llm:openai:gpt-4o-mini?lables=a,b", "did you mean 'labels'"),
        ("llm:openai:m?endpoint=chatt", "did you mean 'llm:openai:m?endpoint=chat'"),
    ],
)
def test_a_mistyped_llm_spec_is_refused_at_once_with_a_suggestion(spec, suggestion):
    with pytest.raises(InputError, match=re.escape(suggestion)):
        check_model_specs([spec])


def test_a_base_url_with_credentials_is_refused_without_echoing_them():
    with pytest.raises(InputError) as caught:
        check_model_specs(["llm:openai:m?base_url=http://user:hunter2@127.0.0.1:9/v1"])
    assert "credentials" in str(caught.value) and "hunter2" not in str(caught.value)


def test_labels_that_tell_no_task_need_a_task_or_a_prompt(server, settings_env):
    with pytest.raises(ModelError, match="task=sentiment"):
        model_for(server, ("yes", "no"))


def test_the_first_label_word_of_an_answer_is_its_label():
    reader = AnswerReader(PARAPHRASE, classify_prompt("paraphrase").synonyms)
    assert reader.read("Not duplicate; a duplicate would ask the same.") == "not_duplicate"
    assert reader.read("NOT-DUPLICATE") == "not_duplicate"
    assert reader.read("Duplicate, not different") == "duplicate"
    assert reader.read("1") is None  # digits are no label words
    assert reader.read("nowhere to be seen") is None  # "no" only as a whole word


@pytest.mark.parametrize(
    ("task", "names"),
    [
        ("sentiment", ["Sentence"]),
        ("nli", ["Premise", "Hypothesis"]),
        ("paraphrase", ["Question 1", "Question 2"]),
    ],
)
def test_each_task_ships_a_classify_prompt_naming_its_inputs(task, names):
    prompt = classify_prompt(task)
    pair = "second" if len(names) == 2 else None
    text = prompt.render("first", pair, ["a_b", "c"])
    assert [f"{name}: " in text for name in names] == [True] * len(names)
    assert "a b or c" in text and "${" not in text
