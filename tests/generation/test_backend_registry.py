"""Backend kinds come from a registry: a kind registered outside the library is built by
`create_backend`, listed in `BACKENDS`, and drives generation like a built-in one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from testaug.generation import backends
from testaug.generation.backends import (
    BACKEND_KINDS,
    BackendError,
    BackendOptions,
    Completion,
    CompletionRequest,
    CompletionResult,
    create_backend,
)
from testaug.generation.prompts import prompt_for
from testaug.generation.seeding import build_prompts
from testaug.suites.cases import expand_suite
from testaug.suites.load import load_suite


class EchoBackend:
    """Replies with the same bracketed item to every sample, naming its options."""

    name = "echo"
    continues_prompt = False

    def __init__(self, options: BackendOptions) -> None:
        self.options = options
        self.model = options.model or "echo-1"

    def complete(self, request: CompletionRequest) -> CompletionResult:
        text = "{I love this airline.}"
        return CompletionResult(completions=(Completion(text=text),) * request.n)


@pytest.fixture
def echo_kind() -> Iterator[None]:
    with BACKEND_KINDS.registered("echo", EchoBackend):
        yield


def test_a_registered_kind_is_built_by_create_backend_with_the_options(echo_kind, tmp_path):
    backend = create_backend(
        "echo", model="m", base_url="http://x", api_key="k", endpoint="chat", cache_dir=tmp_path
    )
    assert isinstance(backend, EchoBackend) and isinstance(backend, backends.Backend)
    assert backend.options == BackendOptions(
        model="m", base_url="http://x", api_key="k", endpoint="chat", cache_dir=tmp_path
    )
    result = backend.complete(CompletionRequest(prompt="p", n=2))
    assert [c.text for c in result.completions] == ["{I love this airline.}"] * 2


def test_backends_lists_a_registered_kind_only_while_it_is_registered(tmp_path):
    assert backends.BACKENDS[:2] == ("local", "openai")
    with BACKEND_KINDS.registered("echo", EchoBackend):
        assert backends.BACKENDS[-1] == "echo"
    assert "echo" not in backends.BACKENDS
    with pytest.raises(BackendError, match="unknown backend 'echo'"):
        create_backend("echo", cache_dir=tmp_path)


def test_an_unknown_backend_names_the_known_kinds(tmp_path):
    with pytest.raises(
        BackendError, match=r"unknown backend 'bogus' \(expected one of local, openai"
    ):
        create_backend("bogus", cache_dir=tmp_path)


def test_the_api_key_stays_out_of_the_options_repr(tmp_path):
    options = BackendOptions(api_key="sk-secret", cache_dir=tmp_path)
    assert "sk-secret" not in repr(options)


def test_a_registered_backend_drives_generation(
    echo_kind, tmp_path, tiny_suite_path, run_generation
):
    cases = list(expand_suite(load_suite(tiny_suite_path), per_template=5, seed=0))
    prompts = build_prompts(cases, prompt_for("sentiment"), per_description=2, seed=0)
    result = run_generation(prompts[:1], create_backend("echo", cache_dir=tmp_path), samples=2)
    assert [(c.text, c.backend, c.model) for c in result.candidates] == [
        ("I love this airline.", "echo", "echo-1")
    ]


def test_the_builtin_kinds_are_registered_without_loading_their_libraries():
    code = (
        "import sys, testaug.generation.backends as b; "
        "assert b.BACKEND_KINDS.names()[:2] == ('local', 'openai'); "
        "print(sorted(m for m in ('torch', 'transformers', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_backend_options_need_a_cache_dir():
    with pytest.raises(ValueError, match="cache_dir"):
        BackendOptions()  # type: ignore[call-arg]
    assert BackendOptions(cache_dir=Path("c")).endpoint == "completions"
