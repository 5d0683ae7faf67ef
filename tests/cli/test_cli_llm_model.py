"""`testaug evaluate models` with an LLM under test (`llm:openai:...`), end to end against our
scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase, description_id
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import HANG_TIMEOUT, CliResult, run_testaug

ANSWERS = {"good": "Positive!", "bad": "negative", "odd": "Hmm, hard to say."}


def reply(prompt: str, index: int) -> str:
    """Answers by the case's last word: a label (any case and punctuation), or none."""
    sentence = re.search(r"^Sentence: .* (\w+)\.$", prompt, re.MULTILINE)
    return ANSWERS[sentence.group(1)] if sentence else "?"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


def write_cases(folder: Path) -> list[TestCase]:
    def case(text: str, label: str) -> TestCase:
        return TestCase(
            task="sentiment",
            capability="Vocabulary",
            description_id=description_id("sentiment", "Vocabulary", "adjectives"),
            description="adjectives",
            text=text,
            label=label,
            source="template",
        )

    cases = [case(f"The {noun} was {word}.", label) for noun in ("crew", "seat", "food", "tea")
             for word, label in (("good", "positive"), ("bad", "negative"), ("odd", "neutral"))]  # fmt: skip
    cases[0] = case("The pie was bad.", "positive")  # one real failure
    write_jsonl(folder / "cases.jsonl", cases)
    return cases


def evaluate(folder: Path, server: ScriptedOpenAIServer, *extra: str) -> CliResult:
    spec = f"llm:openai:scripted?base_url={server.base_url}"
    return run_testaug(
        folder,
        "evaluate", "models", "cases.jsonl", "--model", spec, "--perturb", "0", *extra,
        env={"OPENAI_API_KEY": "sk-test-secret"},
        timeout=HANG_TIMEOUT,
    )  # fmt: skip


def test_evaluate_models_puts_an_llm_under_test_and_counts_unparseable_answers_apart(
    tmp_path, server
):
    write_cases(tmp_path)
    done = evaluate(tmp_path, server, "--json")
    assert done.returncode == 0, done.stderr
    (model,) = json.loads(done.stdout)["models"]
    assert model["model"].startswith("llm:openai:scripted")
    overall = model["overall"]
    # 12 cases: 4 answers name no label, 1 of the other 8 is wrong.
    assert (overall["n"], overall["failed"], overall["unparsed"]) == (8, 1, 4)
    assert model["error_rate"] == 12.5
    assert server.request_count == 12
    assert "sk-test-secret" not in done.stdout + done.stderr


def test_the_printed_summary_says_how_many_answers_were_unparseable_and_a_rerun_sends_nothing(
    tmp_path, server
):
    write_cases(tmp_path)
    first = evaluate(tmp_path, server)
    assert first.returncode == 0, first.stderr
    assert "4 unparseable answers" in " ".join(first.stdout.split())
    sent = server.request_count
    again = evaluate(tmp_path, server)
    assert again.returncode == 0, again.stderr
    assert server.request_count == sent  # every answer came from the response cache


def test_a_mistyped_llm_backend_is_refused_before_any_request(tmp_path, server):
    write_cases(tmp_path)
    done = run_testaug(
        tmp_path,
        "evaluate", "models", "cases.jsonl", "--model", "llm:opnai:scripted", "--perturb", "0",
        env={"OPENAI_API_KEY": "sk-test-secret"},
        timeout=HANG_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 1
    assert "did you mean 'llm:openai:scripted'" in " ".join(done.stderr.split())
    assert server.request_count == 0


def test_the_report_states_each_models_unparseable_answers_apart_from_its_rates(tmp_path, server):
    write_cases(tmp_path)
    done = evaluate(tmp_path, server, "-o", "evaluation.json")
    assert done.returncode == 0, done.stderr
    report = run_testaug(tmp_path, "report", ".", timeout=HANG_TIMEOUT)
    assert report.returncode == 0, report.stderr
    markdown = " ".join((tmp_path / "report.md").read_text(encoding="utf-8").split())
    stated = r"Unparseable answers \(no label in them\), left out of the error rates: llm:\S+: 4\."
    assert re.search(stated, markdown), markdown[:2000]


KEY_VARIABLES = ("OPENAI_API_KEY", "TESTAUG_OPENAI_API_KEY", "OPENAI_BASE_URL", "TESTAUG_BASE_URL")


def test_a_missing_api_key_is_refused_before_any_work_naming_what_to_set(tmp_path, monkeypatch):
    import testaug.steps.measure

    perturbed = []
    monkeypatch.setattr(testaug.steps.measure, "perturb_suite", perturbed.append)
    write_cases(tmp_path)
    done = run_testaug(
        tmp_path,
        "evaluate", "models", "cases.jsonl", "--model", "llm:openai:gpt-4o-mini",
        without_env=KEY_VARIABLES,
        timeout=HANG_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 1
    assert perturbed == []  # refused before the perturbations
    line = " ".join(done.stderr.split())
    assert line.startswith("error: --model: 'llm:openai:gpt-4o-mini' needs an API key")
    assert "OPENAI_API_KEY" in line and "?base_url=" in line
    assert "--base-url" not in line and "Traceback" not in done.stderr
