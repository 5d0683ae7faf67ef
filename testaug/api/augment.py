"""Growing a suite from Python: generate candidates with an LLM backend, rank them with
the ranker ensemble, review them (the ranker's rule alone, the terminal, or Label
Studio), and turn accepted cases into templates and new cases. Each function runs the
step the CLI runs and returns its in-memory result or its `StepOutput`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testaug.api.arguments import (
    api_function,
    case_records,
    check_count,
    check_path,
    kind_of,
    step_config,
)
from testaug.api.suites import read_cases
from testaug.core.errors import InputError, Problem

if TYPE_CHECKING:
    from rich.console import Console

    from testaug.core.records import RankedCandidate, TestCase
    from testaug.core.settings import Settings
    from testaug.generation.backend_config import BackendConfig
    from testaug.generation.backends import Backend
    from testaug.review.label_studio import LabelStudio
    from testaug.review.run_files import ReviewConfig
    from testaug.review.terminal import KeyReader
    from testaug.steps.augment import Generation
    from testaug.steps.contract import StepOutput
    from testaug.steps.grow import ExpandInducedConfig, InduceConfig
    from testaug.steps.rank import RankConfig


@api_function(paths=("out", "prompt_file", "cache"), fields={"kind": "backend", "model": "llm"})
def generate(
    seeds: str | Path | Iterable[TestCase],
    out: str | Path,
    *,
    backend: str | BackendConfig | Backend = "local",
    llm: str | None = None,
    base_url: str | None = None,
    endpoint: str = "completions",
    timeout: float = 60.0,
    prompts_per_description: int = 10,
    seeds_per_prompt: int = 3,
    samples: int = 5,
    temperature: float = 1.0,
    max_tokens: int = 48,
    concurrency: int = 8,
    capabilities: str | Sequence[str] = (),
    per_template: int = 20,
    seed: int = 0,
    prompt_file: str | Path | None = None,
    cache: str | Path | None = None,
    settings: Settings | None = None,
) -> Generation:
    """Candidates from seed cases (a suite name or file, a JSONL file, or the cases), as
    `testaug generate` makes them: prompts of `seeds_per_prompt` seeds per description,
    `samples` completions each, parsed by brackets and filtered; written to `out`
    (rejects beside it). `backend` is a kind (`local`, `openai`), a `BackendConfig`, or a
    backend object (anything with `complete`, such as the scripted fake of
    `testaug.testing`); unset values come from `settings` (the TESTAUG_/OPENAI_
    environment). The result's `.result.candidates` are the candidates."""
    from testaug.core.settings import Settings
    from testaug.generation.sampling import GenerationConfig
    from testaug.steps.augment import PromptPlan, build_prompt_set, generate_prompt_set
    from testaug.suites.cases import capability_names

    settings = settings or Settings()
    capabilities = capability_names(capabilities)  # a string is one capability
    plan = PromptPlan(
        prompts_per_description=prompts_per_description,
        seeds_per_prompt=seeds_per_prompt,
        seed=seed,
    )
    generation = GenerationConfig(
        samples=samples, temperature=temperature, max_tokens=max_tokens, concurrency=concurrency
    )
    check_count(per_template, "per_template")
    capabilities = (capabilities,) if isinstance(capabilities, str) else tuple(capabilities)
    source, cases = _seed_cases(seeds, per_template=per_template, seed=seed)
    prompt_set = build_prompt_set(
        cases,
        source,
        plan=plan,
        capabilities=capabilities,
        prompt_file=Path(prompt_file) if prompt_file else None,
    )
    spec, client = _backend(backend, llm, base_url, endpoint, timeout, settings)
    return generate_prompt_set(
        prompt_set,
        Path(out),
        backend=client,
        generation=generation,
        plan=plan,
        cache_path=Path(cache) if cache else settings.response_cache_path,
        capabilities=capabilities,
        generator=spec,
        arguments={"source": str(source), "per_template": per_template},
    )


def _seed_cases(
    seeds: str | Path | Iterable[TestCase], *, per_template: int, seed: int
) -> tuple[str | Path, list[TestCase]]:
    from testaug.steps.augment import read_seed_cases

    if isinstance(seeds, str | Path):
        check_path(seeds, "seeds")
        return seeds, read_seed_cases(seeds, per_template=per_template, seed=seed)
    return "cases given in Python", case_records(seeds, "seeds")


def _backend(
    backend: Any,
    llm: str | None,
    base_url: str | None,
    endpoint: str,
    timeout: float,
    settings: Settings,
) -> tuple[BackendConfig | None, Backend]:
    """The backend and its record (None for a backend object given as it is), made as the
    CLI makes them: a base URL's user info goes to the backend, never into the record. An
    InputError naming `backend` for anything that is no backend, or an openai backend
    with neither an API key nor a server URL."""
    from testaug.generation.backend_config import BackendConfig, backend_from_options

    if isinstance(backend, BackendConfig):
        fields = backend.model_dump(include={"kind", "model", "base_url", "endpoint", "timeout"})
        _check_key(fields["kind"], fields["base_url"], settings)
        return backend_from_options(**fields, settings=settings)
    if isinstance(backend, str):
        _check_key(backend, base_url, settings)
        return backend_from_options(backend, llm, base_url, endpoint, timeout, settings)
    if not callable(getattr(backend, "complete", None)):
        message = (
            "expected a backend kind (local, openai, ...), a BackendConfig, or an object with "
            f"complete(request), got {kind_of(backend)}"
        )
        raise InputError(Problem(message, field="backend"))
    return None, backend


def _check_key(kind: str, base_url: str | None, settings: Settings) -> None:
    """The openai backend needs an API key, or the URL of a server that may take none."""
    if kind == "openai" and not settings.openai_api_key and not (base_url or settings.base_url):
        message = (
            "the openai backend needs an API key: set OPENAI_API_KEY, or give base_url= "
            "for a local OpenAI-compatible server"
        )
        raise InputError(Problem(message, field="backend"))


@api_function(paths=("rankers",))
def ensemble_folder(rankers: str | Path, settings: Settings | None = None) -> Path:
    """A trained ranker ensemble's folder: as given, or a config (`offline`, a YAML file)
    trained on the shipped labelled candidates at first use (kept in the cache)."""
    from testaug.core.settings import Settings
    from testaug.steps.rankers import PrepareRankersConfig, prepare_rankers

    settings = settings or Settings()
    config = PrepareRankersConfig.in_cache(rankers, settings)
    trained = prepare_rankers(config)
    return trained.path.parent


@api_function(paths=("candidates", "out", "rankers"))
def rank(
    candidates: str | Path | None = None,
    out: str | Path | None = None,
    *,
    config: RankConfig | None = None,
    rankers: str | Path | None = None,
    settings: Settings | None = None,
    **fields: Any,
) -> list[RankedCandidate]:
    """The candidates file ranked most-likely-invalid first by the ensemble (a trained
    folder or a config, see `ensemble_folder`; default: `offline`, or `config`'s folder),
    each with its P(valid); written to `out` with the calibration beside it. Give a
    `RankConfig`, or its fields as keyword arguments (`cases`: the seed cases neighbour
    members compare with; `batch_size`). Needs the `rank` extra (torch)."""
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import RankedCandidate
    from testaug.steps.rank import RankConfig, rank_candidates

    given = {"candidates": candidates, "out": out}
    given = {name: value for name, value in given.items() if value is not None}
    if rankers is not None or config is None:
        given["rankers"] = ensemble_folder(rankers or "offline", settings)
    done = rank_candidates(step_config(RankConfig, config, {**given, **fields}))
    return list(read_jsonl(done.path, RankedCandidate))


# The old spelling of a review's fields, still taken as keyword arguments.
OLD_REVIEW_FIELDS = {"target": "accept_precision"}


@api_function()
def review_config(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    **fields: Any,
) -> ReviewConfig:
    """A `ReviewConfig`: `config` (or a config given as `ranked`) with the fields given
    over it (see its fields: `ranked`, the annotations file, `top`, `budget`,
    `accept_precision`, `suite`, `project`, ...)."""
    from testaug.review.run_files import ReviewConfig

    if isinstance(ranked, ReviewConfig) and config is None:
        ranked, config = None, ranked
    if ranked is not None:
        check_path(ranked, "ranked")
        fields["ranked"] = ranked
    for old, new in OLD_REVIEW_FIELDS.items():
        if old in fields and new not in fields:
            fields[new] = fields.pop(old)
    return step_config(ReviewConfig, config, fields)


@api_function()
def review_automatically(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    **fields: Any,
) -> StepOutput:
    """The ranker's rule alone accepts what it vouches for at the stated precision
    (`accept_precision`); everything else stays pending for people."""
    from testaug.steps.review import review_automatically as step

    return step(review_config(ranked, config=config, **fields))


@api_function()
def review_in_terminal(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    read_key: KeyReader | None = None,
    console: Console | None = None,
    **fields: Any,
) -> StepOutput:
    """People review the top of the ranking at this terminal (keys from stdin unless
    `read_key` is given; `annotator` defaults to the login); each verdict is saved at once."""
    import sys

    from rich.console import Console

    from testaug.review.terminal import key_reader
    from testaug.steps.review import review_in_terminal as step

    return step(
        review_config(ranked, config=config, **fields),
        read_key=read_key or key_reader(sys.stdin),
        console=console or Console(),
    )


@api_function()
def push_to_label_studio(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    url: str | None = None,
    api_key: str | None = None,
    studio: LabelStudio | None = None,
    **fields: Any,
) -> StepOutput:
    """Send the top of the ranking to a Label Studio project (made when missing), through
    `studio` (a `LabelStudio` connection) or one to `url` with `api_key` (default:
    LABEL_STUDIO_URL and LABEL_STUDIO_API_KEY)."""
    from testaug.steps.review import connect_label_studio
    from testaug.steps.review import push_to_label_studio as step

    studio = studio or connect_label_studio(url, api_key)
    return step(review_config(ranked, config=config, **fields), studio=studio)


@api_function()
def pull_from_label_studio(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    url: str | None = None,
    api_key: str | None = None,
    studio: LabelStudio | None = None,
    merge: bool = True,
    **fields: Any,
) -> StepOutput:
    """Bring people's verdicts from Label Studio (`studio`, or as `push_to_label_studio`
    connects) into the annotations file and, with `merge`, decide every candidate as
    `merge_reviewed` does."""
    from testaug.steps.review import connect_label_studio, pull_and_merge
    from testaug.steps.review import pull_from_label_studio as pull

    config = review_config(ranked, config=config, **fields)
    studio = studio or connect_label_studio(url, api_key)
    return pull_and_merge(config, studio=studio) if merge else pull(config, studio=studio)


@api_function(paths=("out_dir",))
def merge_reviewed(
    ranked: str | Path | ReviewConfig | None = None,
    *,
    config: ReviewConfig | None = None,
    out_dir: str | Path | None = None,
    **fields: Any,
) -> list[TestCase]:
    """Decide every ranked candidate from the verdicts so far; the accepted ones as suite
    cases (source `llm`), also written to accepted.jsonl (verdicts.jsonl beside it)."""
    from testaug.steps.review import merge_reviewed as step

    if out_dir is not None:
        fields["out"] = Path(out_dir)
    done = step(review_config(ranked, config=config, **fields))
    return read_cases(done.path)


@api_function(paths=("accepted", "cases", "out"))
def induce_templates(
    accepted: str | Path | None = None,
    cases: str | Path | None = None,
    out: str | Path | None = None,
    *,
    config: InduceConfig | None = None,
    **fields: Any,
) -> StepOutput:
    """New templates (a suite file at `out`, lexicons and provenance beside it) from the
    slot words that accepted cases reuse from their seed `cases`. Give an `InduceConfig`,
    or its fields as keyword arguments (`suite`, `allow_empty`)."""
    from testaug.steps.grow import InduceConfig, induce_templates_file

    given = {"accepted": accepted, "cases": cases, "out": out}
    given = {name: value for name, value in given.items() if value is not None}
    return induce_templates_file(step_config(InduceConfig, config, {**given, **fields}))


@api_function(paths=("out",))
def expand_templates(
    templates: StepOutput | None = None,
    out: str | Path | None = None,
    *,
    config: ExpandInducedConfig | None = None,
    **fields: Any,
) -> list[TestCase]:
    """The cases the induced templates (what `induce_templates` returned) fill (source
    `expansion`), leaving out those in the `known` case files; also written to `out`.
    Give an `ExpandInducedConfig`, or its fields as keyword arguments (`known`,
    `per_template`: None for every fill, `seed`)."""
    from testaug.steps.contract import StepOutput
    from testaug.steps.grow import ExpandInducedConfig, expand_induced

    given = dict(fields)
    if templates is not None or config is None:
        if not isinstance(templates, StepOutput):
            message = f"expected what induce_templates returned, got {kind_of(templates)}"
            raise InputError(Problem(message, field="templates"))
        given["templates"] = templates
    if out is not None:
        given["out"] = out
    if "per_template" in given:
        check_count(given["per_template"], "per_template", none="every fill")
    if "known" in given:
        known = given["known"]
        known_files = [known] if isinstance(known, str | Path) else list(known)
        for index, path in enumerate(known_files):
            check_path(path, f"known[{index}]")
        given["known"] = tuple(known_files)
    defaults = {"per_template": None, "seed": 0}
    done = expand_induced(step_config(ExpandInducedConfig, config, given, defaults=defaults))
    return read_cases(done.path)
