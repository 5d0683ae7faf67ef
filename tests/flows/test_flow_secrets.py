"""No credential reaches a file a run writes or a line it prints: `testaug generate` and
`testaug run` with key-like values in every place a user can put one (the base URL's user
info, OPENAI_API_KEY, LABEL_STUDIO_API_KEY), and a server that echoes a key in its error or
in its completions. The OpenAI key and the password have no key shape: only knowing them as
the credentials given keeps them out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from testaug.core.jsonl import read_jsonl
from testaug.core.records import TestCase
from testaug.testing.openai_server import ScriptedOpenAIServer
from tests.cli_runner import HANG_TIMEOUT, spawn_testaug
from tests.flow_helpers import PREFECT_ENV, echo_seed_reply
from tests.tiny_models import VOUCHED_CURVE, make_calibration, write_ranked_run

PASSWORD = "pw-Hunter2-q7Zr"
USER = "alice-u9"
OPENAI_KEY = "openai-Xq81secret4LkP"
STUDIO_KEY = "ls-Studio0secret7Wv3"
ECHOED = "sk-echoed-Mm55secret0Tt"
SECRETS = (PASSWORD, f"{USER}:", OPENAI_KEY, STUDIO_KEY, ECHOED)


def secret_url(server: ScriptedOpenAIServer) -> str:
    return server.base_url.replace("://", f"://{USER}:{PASSWORD}@", 1)


def environment(tmp_path: Path) -> dict[str, str]:
    return {
        **PREFECT_ENV,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "TESTAUG_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_API_KEY": OPENAI_KEY,
        "LABEL_STUDIO_API_KEY": STUDIO_KEY,
    }


def leaks(folders: Iterable[Path], *texts: str) -> list[str]:
    """Where a secret appears: each file's raw bytes under `folders`, and each text."""
    found = []
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            data = path.read_bytes()
            found += [f"{path}: {s}" for s in SECRETS if s.encode() in data]
    for index, text in enumerate(texts):
        found += [f"output {index}: {s}" for s in SECRETS if s in text]
    return found


def echo_key_reply(prompt: str, index: int) -> str:
    """The scripted generator's reply with the key it was sent echoed: in a case for even
    samples, in a reply that is no case (a dropped one) for odd ones."""
    if index % 2:
        return f" Sorry, I cannot continue the list (key {OPENAI_KEY}) }}\n- {{"
    return echo_seed_reply(prompt, index).replace(" I mean it", f" I mean it {OPENAI_KEY}", 1)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(echo_seed_reply) as running:
        yield running


@pytest.fixture
def echoing_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(echo_key_reply) as running:
        yield running


def generate(tmp_path: Path, server: ScriptedOpenAIServer, suite: Path, out: str):
    return spawn_testaug(
        tmp_path,
        "generate",
        str(suite),
        "-o",
        out,
        "--backend",
        "openai",
        "--base-url",
        secret_url(server),
        "--model",
        "scripted",
        "--prompts-per-description",
        "1",
        "--samples",
        "2",
        "--max-attempts",
        "2",
        env=environment(tmp_path),
    )


def test_generate_writes_and_prints_no_credential(tmp_path, server, tiny_suite_path):
    done = generate(tmp_path, server, tiny_suite_path, "gen/candidates.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "gen" / "candidates.manifest.json").exists()
    assert leaks([tmp_path], done.stdout, done.stderr) == []


def test_an_error_body_that_echoes_a_key_is_printed_redacted(tmp_path, server, tiny_suite_path):
    server.fail_next(
        100, 401, message=f"Incorrect API key provided: Bearer {ECHOED} at {secret_url(server)}"
    )
    done = generate(tmp_path, server, tiny_suite_path, "gen/candidates.jsonl")
    assert done.returncode == 1
    assert "401" in done.stderr and "Incorrect API key provided" in done.stderr
    assert leaks([tmp_path], done.stdout, done.stderr) == []


def test_a_401_body_that_quotes_the_decoded_password_is_printed_masked(
    tmp_path, server, tiny_suite_path
):
    server.fail_next(100, 401, message=f"user {USER} with password {PASSWORD} is unknown")
    done = generate(tmp_path, server, tiny_suite_path, "gen/candidates.jsonl")
    assert done.returncode == 1
    assert "401" in done.stderr and "with password *** is unknown" in done.stderr
    assert leaks([tmp_path], done.stdout, done.stderr) == []


def test_a_key_the_server_echoes_in_its_completions_is_stored_and_printed_masked(
    tmp_path, echoing_server, tiny_suite_path
):
    done = generate(tmp_path, echoing_server, tiny_suite_path, "gen/candidates.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    written = [p for p in (tmp_path / "gen").iterdir() if p.suffix == ".jsonl"]
    kept = {p.name for p in written if b"I mean it ***" in p.read_bytes()}
    dropped = {p.name for p in written if b"(key ***)" in p.read_bytes()}
    assert "candidates.jsonl" in kept and dropped, sorted(p.name for p in written)
    assert any(b"***" in p.read_bytes() for p in (tmp_path / "cache").rglob("*"))
    assert leaks([tmp_path], done.stdout, done.stderr) == []


def test_a_retried_error_that_echoes_a_key_is_warned_about_redacted(
    tmp_path, server, tiny_suite_path
):
    server.fail_next(1, 500, message=f"upstream refused Bearer {ECHOED} for {secret_url(server)}")
    done = generate(tmp_path, server, tiny_suite_path, "gen/candidates.jsonl")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "500" in done.stderr  # the retry is reported
    assert leaks([tmp_path], done.stdout, done.stderr) == []


@pytest.mark.slow
def test_a_pipeline_run_stores_no_credential_prefect_database_included(
    tmp_path, echoing_server, calibrated_rankers
):
    done = spawn_testaug(
        tmp_path,
        "run",
        "--size",
        "small",
        "--backend",
        "openai",
        "--base-url",
        secret_url(echoing_server),
        "--generator-model",
        "scripted",
        "--rankers",
        str(calibrated_rankers),
        "--model",
        "vader",
        "--capability",
        "Negation",
        "--run-dir",
        "runs/small",
        env=environment(tmp_path),
        without_env=["PREFECT_API_URL"],
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert echoing_server.requests, "the generator was asked nothing"
    database = list((tmp_path / "prefect").rglob("*.db"))
    assert database, "no Prefect database to search"
    # The ranker accepted cases that held the echoed key, so the scan reads them too.
    accepted = [
        case
        for case in read_jsonl(tmp_path / "runs" / "small" / "accepted.jsonl", TestCase)
        if case.source == "llm"
    ]
    assert accepted, "the ranker accepted nothing: the scan would not see an accepted case"
    assert any("I mean it ***" in case.text for case in accepted)
    assert leaks([tmp_path], done.stdout, done.stderr) == []


def test_annotate_push_to_a_server_that_echoes_the_key_prints_no_credential(tmp_path, server):
    run_dir = write_ranked_run(
        tmp_path,
        [f"Case {i} is nice." for i in range(4)],
        p_valid=[0.1, 0.2, 0.3, 0.4],
        calibration=make_calibration(m=VOUCHED_CURVE),
    )
    server.fail_next(100, 401, message=f"Invalid token: Token {STUDIO_KEY} ({ECHOED})")
    studio = server.base_url.removesuffix("/v1").replace("://", f"://{USER}:{PASSWORD}@", 1)
    done = spawn_testaug(
        run_dir, "annotate", "push", "ranked.jsonl", "--url", studio, env=environment(tmp_path)
    )
    assert done.returncode == 1
    assert server.requests, "Label Studio was asked nothing"
    assert leaks([tmp_path], done.stdout, done.stderr) == []
