"""AdaTest-style test trees from Python: a tree from a suite, reading and writing tree
files, retesting a model (a spec string or a Python object) on a tree, and one round of
adaptive suggestions for a topic (`adapt`)."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from testaug.api.arguments import (
    api_function,
    check_count,
    check_suite,
    kind_of,
    model_spec,
    model_specs,
)
from testaug.core.errors import InputError, Problem
from testaug.core.records import Suite
from testaug.core.run_sizes import TREE_PER_TEMPLATE

if TYPE_CHECKING:
    from testaug.adaptive.retest import TreeReport
    from testaug.adaptive.suggestions import SuggestionRoundConfig
    from testaug.adaptive.tree import TestTree, TreeTest
    from testaug.core.settings import Settings
    from testaug.generation.backend_config import BackendConfig
    from testaug.generation.backends import Backend
    from testaug.steps.contract import StepOutput


@api_function()
def tree_from_suite(
    suite: Suite | str | Path,
    *,
    per_template: int | None = TREE_PER_TEMPLATE,
    per_test: int = 0,
    seed: int = 0,
) -> TestTree:
    """The test tree of a suite's cases (a seeded sample of `per_template` per template, 10
    as `testaug tree from-suite` takes, or every fill with None), one topic per
    description, with `per_test` perturbed cases per INV/DIR test when > 0."""
    from testaug.adaptive.from_suite import tree_from_suite as build
    from testaug.api.suites import load_suite

    check_suite(suite)
    check_count(per_template, "per_template", none="every fill")
    check_count(per_test, "per_test", least=0)
    loaded = suite if isinstance(suite, Suite) else load_suite(suite)
    return build(loaded, per_template=per_template, per_test=per_test, seed=seed)


@api_function(paths=("path",))
def read_tree(path: str | Path) -> TestTree:
    """A tree file (testaug's CSV or JSONL)."""
    from testaug.adaptive.tree_files import read_tree as read

    return read(path)


@api_function(paths=("path",))
def write_tree(path: str | Path, tree: TestTree | Iterable[TreeTest]) -> int:
    """Write a tree file (atomically); how many tests were written."""
    from testaug.adaptive.tree import TestTree, TreeTest
    from testaug.adaptive.tree_files import write_tree as write

    if not isinstance(tree, TestTree):
        if isinstance(tree, str | bytes) or not isinstance(tree, Iterable):
            message = f"expected a TestTree or TreeTest records, got {kind_of(tree)}"
            raise InputError(Problem(message, field="tree"))
        tree = list(tree)
        problems = [
            Problem(f"expected a TreeTest, got {kind_of(test)}", field=f"tree[{index}]")
            for index, test in enumerate(tree)
            if not isinstance(test, TreeTest)
        ]
        if problems:
            raise InputError(problems)
    return write(path, tree)


@api_function(paths=("tree", "out", "previous"))
def retest(
    tree: str | Path,
    model: Any,
    out: str | Path,
    *,
    previous: str | Path | None = None,
    threshold: float | None = None,
    task: str | None = "sentiment",
    labels: str | None = None,
) -> TreeReport:
    """The tree file applied to a model (a spec string or a Python object, as `evaluate`
    takes it): failure rates per topic, compared with the `previous` report if given;
    written as JSON to `out`."""
    from testaug.adaptive.retest import TreeReport
    from testaug.core.jsonl import read_json
    from testaug.steps.retest import RetestConfig, retest_tree

    with ExitStack() as stack:
        spec = model_spec(model, stack)
        fields: dict[str, Any] = {
            "tree": Path(tree),
            "model": spec,
            "task": task,
            "labels": labels,
            "out": Path(out),
            "previous": Path(previous) if previous else None,
        }
        if threshold is not None:
            fields["threshold"] = threshold
        done = retest_tree(RetestConfig(**fields))
        return read_json(done.path, TreeReport)


@api_function(
    paths=("tree", "out", "rankers", "cache"),
    fields={"round": "round_settings", "cache_path": "cache", "kind": "backend", "model": "llm"},
)
def adapt(
    tree: str | Path,
    topic: str,
    models: Any,
    out: str | Path,
    *,
    backend: str | BackendConfig | Backend = "local",
    llm: str | None = None,
    base_url: str | None = None,
    endpoint: str = "completions",
    timeout: float = 60.0,
    round_settings: SuggestionRoundConfig | None = None,
    task: str | None = "sentiment",
    labels: str | None = None,
    rankers: str | Path | None = None,
    new_topic: bool = False,
    allow_empty: bool = False,
    cache: str | Path | None = None,
    settings: Settings | None = None,
) -> StepOutput:
    """One round of suggestions for `topic` of the tree: prompts from the tests the first
    model fails most, completions from the LLM `backend` (as `generate` takes it) scored
    on every model (spec strings or objects, as `evaluate` takes them) and written to
    `out` sorted by the first one's failure score. An unknown topic or model is refused
    before any work (unless `new_topic`)."""
    from testaug.adaptive.suggestions import SuggestionRoundConfig
    from testaug.api.augment import _backend, ensemble_folder
    from testaug.core.settings import Settings
    from testaug.steps.adapt import AdaptConfig, adapt_round, check_round

    with ExitStack() as stack:
        specs = model_specs(models, stack)
        check_round(Path(tree), topic, specs, new_topic=new_topic)
        settings = settings or Settings()
        ensemble = ensemble_folder(rankers, settings) if rankers else None
        _, client = _backend(backend, llm, base_url, endpoint, timeout, settings)
        config = AdaptConfig(
            tree=Path(tree),
            topic=topic,
            models=specs,
            out=Path(out),
            cache_path=Path(cache) if cache else settings.response_cache_path,
            round=round_settings or SuggestionRoundConfig(),
            task=task,
            labels=labels,
            rankers=str(ensemble) if ensemble is not None else None,
            new_topic=new_topic,
            allow_empty=allow_empty,
        )
        return adapt_round(config, backend=client)
