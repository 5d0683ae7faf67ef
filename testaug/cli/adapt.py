"""`testaug tree adapt`: one round of AdaTest suggestions for a topic of a test tree, steered by
where the model under test fails."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from testaug.cli.console import console, progress, styled
from testaug.cli.generate import BASE_URL, CACHE, ENDPOINT, LLM, backend_spec
from testaug.cli.options import build_config, output_option, renamed_option
from testaug.cli.tree import LABELS_HELP, MODEL_HELP, TASK_HELP
from testaug.core.settings import Settings
from testaug.generation.backend_config import backend_from_options
from testaug.generation.backends import BACKENDS


def adapt_command(
    tree: Path = typer.Argument(
        ..., metavar="TREE", help="The test tree (JSONL, as `testaug tree` writes it)."
    ),
    topic: str = typer.Option(
        ...,
        "--topic",
        help="The focus topic, e.g. /Negation: one the tree has, unless --new-topic.",
    ),
    new_topic: bool = typer.Option(
        False, "--new-topic", help="Allow a topic the tree does not have yet (a new topic)."
    ),
    model: list[str] = typer.Option(
        ..., "--model", help=MODEL_HELP + " Repeat for several; the first is targeted."
    ),
    suggestions: int = typer.Option(
        100,
        "--suggestions",
        min=1,
        help="How many suggestions to ask for: 10 prompts, each asked for a tenth of them.",
    ),
    output: Path = output_option(..., "-o", "--output", help="Where to write suggestions (JSONL)."),
    task: str | None = typer.Option(None, "--task", help=TASK_HELP),
    labels: str | None = typer.Option(None, "--labels", help=LABELS_HELP),
    rankers: str | None = typer.Option(
        None,
        help="Rankers that judge each suggestion's chance of being valid, P(valid): a trained "
        "ensemble folder, or a config (offline, paper, a YAML file) trained on data/validity "
        "at first use.",
    ),
    seed: int = typer.Option(0, help="Seed of the prompt selection."),
    selection: str = typer.Option(
        "adaptive",
        help="How prompts pick their example tests: adaptive (the tests the model fails most, "
        "as AdaTest does) or random (for comparison).",
    ),
    round_number: int = typer.Option(0, "--round", min=0, help="The round's number, recorded."),
    allow_empty: bool = typer.Option(
        False,
        "--allow-empty",
        help="Write the suggestions file even when no suggestion was kept (by default such a "
        "round fails and leaves an earlier file as it was).",
    ),
    show: int = typer.Option(20, min=0, help="Rows of the table printed."),
    backend: str = typer.Option("local", help=f"LLM backend: {' or '.join(BACKENDS)}."),
    base_url: str | None = BASE_URL,
    llm: str | None = LLM,
    endpoint: str = ENDPOINT,
    temperature: float = typer.Option(0.95, min=0.0),
    max_tokens: int = typer.Option(100, min=1),
    concurrency: int = typer.Option(8, min=1, help="Requests in flight at once."),
    rpm: float | None = typer.Option(None, min=0.001, help="At most this many requests a minute."),
    timeout: float = typer.Option(60.0, min=0.1, help="Seconds before a request times out."),
    max_attempts: int = typer.Option(6, min=1, help="Tries per request on timeouts, 429, 5xx."),
    cache: Path | None = CACHE,
    old_generator_model: str | None = typer.Option(None, "--generator-model", hidden=True),
    old_k: int | None = typer.Option(None, "-k", min=1, hidden=True),
) -> None:
    """Suggest new tests for a topic: prompts from the tests the first model fails most,
    completions scored on every model and sorted by the first one's failure score."""
    from testaug.adaptive.suggestions import SuggestionRoundConfig
    from testaug.steps.adapt import AdaptConfig, adapt_round, check_round

    command = "tree adapt"
    llm = renamed_option(
        llm, old_generator_model, old="--generator-model", new="--llm", default=None,
        command=command,
    )  # fmt: skip
    suggestions = renamed_option(
        suggestions, old_k, old="-k", new="--suggestions", default=100, command=command
    )
    # A mistyped topic or model is refused before rankers train or the LM starts.
    check_round(
        tree,
        topic,
        model,
        new_topic=new_topic,
        topic_field="--topic",
        new_topic_flag="--new-topic",
    )
    settings = Settings()
    round_settings = build_config(
        SuggestionRoundConfig,
        flags={"requests_per_minute": "--rpm"},
        suggestions=suggestions,
        selection=selection,
        temperature=temperature,
        max_tokens=max_tokens,
        concurrency=concurrency,
        requests_per_minute=rpm,
        max_attempts=max_attempts,
        seed=seed,
    )
    ensemble = _ensemble(rankers, settings) if rankers else None
    config = build_config(
        AdaptConfig,
        flags={
            "models": "--model",
            "number": "--round",
            "out": "--output",
            "cache_path": "--cache",
        },
        tree=tree,
        topic=topic,
        models=tuple(model),
        round=round_settings,
        task=task,
        labels=labels,
        rankers=str(ensemble) if ensemble is not None else None,
        new_topic=new_topic,
        number=round_number,
        out=output,
        cache_path=cache or settings.response_cache_path,
        allow_empty=allow_empty,
    )
    _, client = backend_from_options(
        backend, llm, base_url, endpoint, timeout, settings, build=backend_spec
    )
    with progress() as bar:
        ticks = bar.add_task(
            f"suggesting ({client.name}: {client.model})", total=round_settings.prompt.prompts
        )
        done = adapt_round(config, backend=client, on_prompt_done=lambda: bar.advance(ticks))
    _print_round(done, show)


def _ensemble(rankers: str, settings: Settings) -> Path:
    """The trained ensemble folder: as given, or trained from a config at first use."""
    from testaug.steps.rankers import PrepareRankersConfig, prepare_rankers

    config = PrepareRankersConfig.in_cache(rankers, settings)
    trained = prepare_rankers(config)
    return trained.path.parent


def _print_round(done, show: int) -> None:
    """The suggestions as a table, most failing first, and what the round dropped."""
    summary = done.summary
    table = Table(
        title=f"{summary.topic}: suggestions by {summary.target}'s failure score",
        title_justify="left",
    )
    table.add_column("input")
    table.add_column("expectation")
    for name in summary.models:
        table.add_column(name, justify="right")
    triaged = summary.ensemble is not None
    if triaged:
        table.add_column("P(valid)", justify="right")
    from testaug.adaptive.verdicts import read_suggestions

    for item in read_suggestions(done.path)[:show]:
        test = item.test
        text = test.input if test.input_pair is None else f"{test.input} / {test.input_pair}"
        cells = []
        for name in summary.models:
            score = test.scores.get(name, float("nan"))
            colour = "red" if score > 0 else "green"
            cells.append(styled("[" + colour + "]{:+.2f}[/] {}", score, item.outputs.get(name, "")))
        p_valid = ["" if item.p_valid is None else f"{item.p_valid:.2f}"] if triaged else []
        table.add_row(text, f"{test.comparator} {test.output}", *cells, *p_valid)
    console.print(table)
    counts = summary.counts
    malformed = ", ".join(
        f"{n} {reason.replace('_', ' ')}" for reason, n in counts.malformed.items()
    )
    console.print(
        styled(
            "[green]wrote[/] {:,} suggestions ({:,} failing on {}) to {}",
            counts.kept,
            summary.failing,
            summary.target,
            done.path,
        )
    )
    console.print(
        f"{counts.prompts} prompts x {counts.per_prompt} completions: "
        f"{sum(counts.malformed.values()):,} malformed{f' ({malformed})' if malformed else ''}, "
        f"{counts.in_tree:,} already in the tree, {counts.duplicates:,} repeated, "
        f"{counts.in_subtopic:,} in a subtopic; {counts.generation.get('requests', 0):,} "
        f"requests, {counts.generation.get('cached_samples', 0):,} samples from the cache",
        highlight=False,
    )
