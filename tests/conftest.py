"""Shared fixtures: paths to the tiny suites in tests/data and a suite-writing helper."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.ci_skips import (  # noqa: F401 (hooks: under CI a skip fails, see ci_skips)
    pytest_collectreport,
    pytest_configure,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)
from tests.cli_runner import HANG_TIMEOUT

DATA = Path(__file__).parent / "data"


@pytest.fixture
def tiny_suite_path() -> Path:
    return DATA / "tiny" / "suite.yaml"


@pytest.fixture
def write_suite(tmp_path: Path) -> Callable[..., Path]:
    """Write a suite (and lexicon files) into tmp_path; returns the suite path."""

    def write(suite: str, **lexicon_files: str) -> Path:
        for name, text in lexicon_files.items():
            (tmp_path / f"{name}.yaml").write_text(textwrap.dedent(text).lstrip("\n"))
        path = tmp_path / "suite.yaml"
        path.write_text(textwrap.dedent(suite).lstrip("\n"))
        return path

    return write


@pytest.fixture
def run_generation() -> Callable[..., object]:
    """Generate with the shipped prompt of a task: prompts and backend in, GenerationResult out.

    Keyword arguments other than task, cache, known_cases and settings are GenerationConfig.
    """
    from testaug.generation.cache import ResponseCache
    from testaug.generation.prompts import prompt_for
    from testaug.generation.sampling import GenerationConfig, generate

    def run(prompts, backend, *, task="sentiment", cache=None, known_cases=(), settings=None, **kw):
        return generate(
            prompts,
            prompt_for(task),
            backend,
            cache if cache is not None else ResponseCache(None),
            settings or GenerationConfig(**kw),
            known_cases=known_cases,
        )

    return run


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect API (and database) for every flow test of the session."""
    import os

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=HANG_TIMEOUT):
        yield


@pytest.fixture(scope="session")
def lexical_rankers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The flow tests' lexical ensemble, trained once per session; a test that runs the
    pipeline passes this folder as its rankers unless training is what it checks."""
    from tests.flow_helpers import trained_lexical_rankers

    return trained_lexical_rankers(tmp_path_factory.mktemp("lexical-rankers"))


@pytest.fixture(scope="session")
def calibrated_rankers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lexical ensemble trained with a random calibration sample of the scripted
    generator on the flow tests' capabilities: its rule at 90% precision accepts some of
    that generator's candidates, so the tests see an acceptance happen."""
    from tests.flow_helpers import calibrated_lexical_rankers

    folder = tmp_path_factory.mktemp("calibrated-rankers")
    return calibrated_lexical_rankers(folder, ("Negation", "Vocabulary"))


@pytest.fixture(scope="session")
def label_studio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One real Label Studio server on 127.0.0.1 for the whole session (tests that use it
    are marked `label_studio`); skipped, or failed in CI, when it is not installed."""
    from tests.label_studio_live import running_label_studio

    yield from running_label_studio(tmp_path_factory.mktemp("label-studio"))
