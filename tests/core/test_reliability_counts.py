"""The fixed table of bad-input trials: every reader of tests/core/reliability_trials.py
with every damage of DAMAGES (tests/core/trial_damages.py), run through the command. Every
trial must hold, and the reliability page of the documentation (docs/how-to/reliability.md)
states the counts these tests compute, and how many secret scenarios the secrets tests
check; a changed count fails here saying what the page should say."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import HANG_TIMEOUT
from tests.core.reliability_trials import (
    READERS,
    Outcome,
    build_workspace,
    check_success,
    prepare,
    run_reader,
    snapshot,
    trial_outcome,
)
from tests.core.trial_damages import DAMAGES

ROOT = Path(__file__).parent.parent.parent
SECRET_TESTS = {
    "end to end": "tests/flows/test_flow_secrets.py",
    "redaction": "tests/core/test_secrets.py",
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("reliability"))


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
def test_each_reader_succeeds_on_its_valid_input(workspace, tmp_path, reader):
    copy = prepare(workspace, tmp_path / "copy", reader, lambda data, suffix: data)
    result = run_reader(copy, reader)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert check_success(result, reader, snapshot(copy)) == []


@pytest.fixture(scope="module")
def outcomes(workspace, tmp_path_factory) -> dict[str, Outcome]:
    """How each trial ("reader / damage") ended, and what broke where the property failed."""
    scratch = tmp_path_factory.mktemp("trials")
    found = {}
    for number, (reader, (name, damage)) in enumerate(
        (reader, item) for reader in READERS for item in DAMAGES.items()
    ):
        folder = scratch / f"t{number}"
        found[f"{reader.name} / {name}"] = trial_outcome(workspace, folder, reader, damage)
        shutil.rmtree(folder, ignore_errors=True)
    return found


RELIABILITY_PAGE = ROOT / "docs" / "how-to" / "reliability.md"


def reliability_section() -> str:
    """The documentation's reliability page."""
    return RELIABILITY_PAGE.read_text(encoding="utf-8")


def sentence(text: str) -> str:
    """`text` without Markdown backticks, its line breaks and runs of spaces as single
    spaces."""
    return re.sub(r"\s+", " ", text.replace("`", ""))


def test_every_bad_input_trial_succeeds_or_fails_cleanly(outcomes):
    failed = {trial: outcome.broken for trial, outcome in outcomes.items() if outcome.broken}
    assert not failed, "\n".join(f"{t}: {'; '.join(b)}" for t, b in failed.items())


def test_the_reliability_page_states_the_bad_input_trial_counts(outcomes):
    held = [outcome for outcome in outcomes.values() if not outcome.broken]
    rejected = sum(outcome.kind == "rejected" for outcome in held)
    succeeded = sum(outcome.kind == "succeeded" for outcome in held)
    expected = (
        f"Bad-input trials: {len(outcomes):,} tried, {len(held):,} passed: {rejected:,} "
        f"rejected with one error line naming the file, {succeeded:,} succeeded and wrote "
        f"what they said ({len(READERS)} readers x {len(DAMAGES)} damages, "
        "tests/core/test_reliability_counts.py)"
    )
    assert expected in sentence(reliability_section()), (
        f"docs/how-to/reliability.md should say: {expected}"
    )


def collected(paths: list[str]) -> dict[str, int]:
    """How many tests (parametrized cases counted one by one) pytest collects from each
    of `paths`."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *paths],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    return {path: sum(line.startswith(f"{path}::") for line in lines) for path in paths}


def test_the_reliability_page_states_how_many_secret_scenarios_the_tests_check():
    counts = collected(list(SECRET_TESTS.values()))
    end_to_end, redaction = SECRET_TESTS["end to end"], SECRET_TESTS["redaction"]
    expected = (
        f"Secret scenarios: {counts[end_to_end]} end to end ({end_to_end}) and "
        f"{counts[redaction]} redaction cases ({redaction})"
    )
    assert expected in sentence(reliability_section()), (
        f"docs/how-to/reliability.md should say: {expected}"
    )
