"""`testaug generate` run as a user runs it, against our OpenAI-compatible server."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import CliResult, run_testaug

SECRET = "sk-never-print-this-key"


def stable_number(prompt: str) -> int:
    """A number for a prompt, the same in every process (unlike `hash`, which is salted)."""
    return int(hashlib.sha256(prompt.encode()).hexdigest()[:12], 16)


def reply(prompt: str, index: int) -> str:
    if index == 2:
        return " }"  # empty brackets
    return f" The flight was fine, said passenger {stable_number(prompt)} ({index}). }}\n- {{ x"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(reply) as running:
        yield running


def generate(tmp_path: Path, *args: str) -> CliResult:
    env = {"OPENAI_API_KEY": SECRET, "TESTAUG_CACHE_DIR": str(tmp_path / "cache")}
    return run_testaug(None, "generate", *args, env=env)


def against(server: ScriptedOpenAIServer, suite: Path, out: Path, options: str = "") -> list[str]:
    """Arguments of `testaug generate` from a suite to `out` with our server as the backend."""
    return [
        str(suite),
        "-o",
        str(out),
        "--backend",
        "openai",
        "--base-url",
        server.base_url,
        *options.split(),
    ]


def test_generate_writes_candidates_rejects_prompts_and_a_manifest(
    server, tmp_path, tiny_suite_path
):
    out = tmp_path / "run" / "candidates.jsonl"
    args = against(
        server, tiny_suite_path, out, "--llm scripted --prompts-per-description 2 --samples 3"
    )
    result = generate(tmp_path, *args)
    assert result.returncode == 0, result.stderr
    candidates = [json.loads(line) for line in out.read_text().splitlines()]
    rejects = [
        json.loads(line)
        for line in (out.parent / "candidates.rejects.jsonl").read_text().splitlines()
    ]
    prompts = (out.parent / "candidates.prompts.jsonl").read_text().splitlines()
    assert len(prompts) == 6 and len(candidates) == 12 and len(rejects) == 6
    assert {r["reason"] for r in rejects} == {"empty"}
    for column in ("capability", "candidates", "empty", "Negation"):
        assert column in result.stdout
    manifest = json.loads((out.parent / "candidates.manifest.json").read_text())
    assert manifest["token_usage"]["requests"] == 6
    assert manifest["token_usage"]["completion_tokens"] > 0
    for text in (result.stdout, result.stderr, *(p.read_text() for p in out.parent.iterdir())):
        assert SECRET not in text

    again = generate(tmp_path, *args)
    assert again.returncode == 0 and server.request_count == 6  # the cache answered everything
    assert [json.loads(line) for line in out.read_text().splitlines()] == candidates


def test_dry_run_prints_the_first_prompt_and_sends_nothing(server, tmp_path, tiny_suite_path):
    out = tmp_path / "c.jsonl"
    result = generate(tmp_path, *against(server, tiny_suite_path, out, "--dry-run"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("A negative sentence with a negated positive verb.\n- { ")
    assert result.stdout.rstrip().endswith("- {")
    assert "nothing sent" in result.stderr
    assert server.request_count == 0 and not out.exists()


def test_a_server_that_keeps_failing_exits_1_with_a_one_line_error(
    server, tmp_path, tiny_suite_path
):
    server.fail_next(100, 503)
    options = "--prompts-per-description 1 --max-attempts 2"
    result = generate(tmp_path, *against(server, tiny_suite_path, tmp_path / "c.jsonl", options))
    assert result.returncode == 1
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "HTTP 503" in error and "Traceback" not in result.stderr
    assert "retrying" in result.stderr  # each retry is reported as it happens


def test_openai_without_key_or_server_explains_what_to_set(tmp_path, tiny_suite_path):
    result = run_testaug(
        None,
        *("generate", str(tiny_suite_path), "-o", str(tmp_path / "c.jsonl"), "--backend", "openai"),
        env={"TESTAUG_CACHE_DIR": str(tmp_path)},
        without_env=("OPENAI_API_KEY", "OPENAI_BASE_URL"),
    )
    assert result.returncode == 1 and "OPENAI_API_KEY" in result.stderr


def test_the_manifest_records_the_options_and_the_server_without_credentials(
    server, tmp_path, tiny_suite_path
):
    out = tmp_path / "c.jsonl"
    args = against(server, tiny_suite_path, out, "--llm scripted --capability Negation")
    with_user = server.base_url.replace("http://", "http://user:pw@")
    args[args.index(server.base_url)] = with_user
    result = generate(tmp_path, *args, "--prompts-per-description", "1", "--samples", "2")
    assert result.returncode == 0, result.stderr
    arguments = json.loads((tmp_path / "c.manifest.json").read_text())["arguments"]
    assert arguments["base_url"] == server.base_url and "pw" not in json.dumps(arguments)
    assert (arguments["backend"], arguments["model"], arguments["endpoint"]) == (
        "openai", "scripted", "completions",
    )  # fmt: skip
    assert (arguments["source"], arguments["capability"]) == (str(tiny_suite_path), ["Negation"])
    assert (arguments["samples"], arguments["prompts_per_description"]) == (2, 1)
    assert {line and json.loads(line)["capability"] for line in out.read_text().splitlines()} == {
        "Negation"
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("--capability Nope", "no capability 'Nope'; the capabilities are 'Negation'"),
        ("--backend gpt", "--backend: expected one of local, openai"),
        ("--endpoint json", "--endpoint: expected one of chat, completions, got 'json'"),
    ],
)
def test_bad_options_are_one_line_errors_before_anything_is_sent(
    server, tmp_path, tiny_suite_path, options, message
):
    out = tmp_path / "c.jsonl"
    result = generate(tmp_path, *against(server, tiny_suite_path, out, options))
    assert result.returncode == 1 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert server.request_count == 0 and not out.exists()
