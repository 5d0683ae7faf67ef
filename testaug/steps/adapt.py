"""A round of AdaTest suggestions as a step, from a tree file to a suggestions file, for
`testaug tree adapt` and the adapt flow.

It first checks the model specs and that the tree has the topic (unless `new_topic`), so
a typo is refused before any model loads or any generation starts (`check_round`). It
loads the models by spec (the first one targeted), embeds tests with the bundled
MiniLM, runs `adaptive.suggestions.suggestion_round`, and, given a ranker ensemble,
sets each suggestion's P(valid) from it (the tree topic plays the test-case
description). It writes the suggestions (one `Suggestion` a line, sorted by the
targeted model's failure score), the completions it dropped with their reasons
(`<out>.dropped.jsonl`), the prompts (`<out>.prompts.jsonl`) and a summary
(`<out>.summary.json`). A round that kept no suggestion is an error that leaves earlier
suggestions and summary as they were (the dropped completions are still written, with
their reasons), unless `allow_empty`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.suggestions import (
    Embedder,
    RoundCounts,
    SuggestionRoundConfig,
    suggestion_round,
)
from testaug.adaptive.tree import INPUT_COMPARATORS, TestTree, normalize_topic
from testaug.adaptive.tree_jobs import check_topic, load_models, read_tree_with_tests
from testaug.core.errors import TestAugError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Candidate, Record, content_id, description_id
from testaug.core.runs import remove_stale_temporaries, sibling, write_text_atomic
from testaug.evaluation.models import check_model_specs
from testaug.generation.backend_config import BackendConfig
from testaug.generation.backends import Backend
from testaug.generation.cache import ResponseCache
from testaug.steps.contract import StepOutput, StepSummary, step_output

logger = logging.getLogger(__name__)

EMBEDDING_MODEL = "minilm"  # the bundled all-MiniLM-L6-v2

# The public functions that are not steps (see tests/steps/test_step_contract.py).
HELPERS = frozenset({"as_candidate", "check_round", "minilm_embedder", "suite_topics", "triage"})


class EmptyRoundError(TestAugError):
    """A round kept no suggestion; earlier suggestions were left as they were."""


class AdaptSummary(StepSummary):
    """What a round asked for and kept, on which models and LM, and the triage."""

    kind: Literal["adapt"] = "adapt"
    topic: str
    target: str
    models: list[str]
    backend: str
    model: str
    round: int
    settings: SuggestionRoundConfig
    counts: RoundCounts
    ensemble: str | None = None  # the ranker ensemble's version, when triaged
    failing: int  # suggestions the targeted model fails (score > 0)


class AdaptConfig(Record):
    """One testing loop (the adapt flow): the tree and focus topic, the models (the first is
    targeted), how each round suggests (the flow offsets its seed by the round's number),
    the LLM, how people review (Label Studio or files), and where the rounds go.

    A round (`adapt_round`, as `testaug tree adapt` and the flow run it) also takes the
    round's `number`, the file its suggestions go to (`out`; the flow names one in the
    round's folder), the LLM response cache (`cache_path`; none when unset, the flow and
    the CLI use the settings' one) and whether a round that keeps no suggestion is written
    (`allow_empty`); it suggests as `round` says, and its `rankers` is a trained ensemble
    folder (the flow and the CLI train one from a config first)."""

    tree: Path
    topic: str
    models: tuple[str, ...] = Field(min_length=1)
    work_dir: Path | None = None  # default: <tree name>.adapt/ beside the tree
    round: SuggestionRoundConfig = SuggestionRoundConfig()
    generator: BackendConfig = BackendConfig()
    review: Literal["label-studio", "file"] = "label-studio"
    project: str | None = None  # default: testaug adapt <work folder name>
    verdicts: Path | None = None  # file mode: a verdicts file to take in as well
    task: str | None = "sentiment"
    labels: str | None = None
    rankers: str | None = None  # an ensemble folder or config, for P(valid)
    wait_for_verdicts: bool = True
    new_topic: bool = False  # allow a focus topic the tree does not have yet
    number: int = Field(default=0, ge=0)  # the round's number, recorded
    out: Path | None = None  # a round's suggestions file
    cache_path: Path | None = None  # a round's LLM response cache (none when unset)
    allow_empty: bool = False  # write a round that kept no suggestion

    def folder(self) -> Path:
        """The work folder of the rounds."""
        return self.work_dir or self.tree.with_name(f"{self.tree.stem}.adapt")

    def project_name(self) -> str:
        """The Label Studio project of the rounds."""
        return self.project or f"testaug adapt {self.folder().resolve().name}"

    def round_config(self, number: int) -> SuggestionRoundConfig:
        """How round `number` suggests: `round` with its seed offset by the number."""
        return self.round.model_copy(update={"seed": self.round.seed + number})


def minilm_embedder(texts: Sequence[str]) -> np.ndarray:
    """The bundled MiniLM's unit embeddings of `texts`, one row each."""
    from rankers.members.embedding import embeddings

    if not texts:
        return np.zeros((0, 384))
    vectors = embeddings(EMBEDDING_MODEL, list(texts))
    return np.stack([vectors[text] for text in texts])


def check_round(
    tree_path: Path,
    topic: str,
    model_specs: Sequence[str],
    *,
    new_topic: bool = False,
    topic_field: str = "topic",
    new_topic_flag: str = "new_topic",
) -> TestTree:
    """The tree of a round, once the model specs are known kinds (InputError naming
    --model) and the tree has the topic, or `new_topic` allows a new one (InputError naming
    `topic_field` and the tree file, with the nearest topics and `new_topic_flag`)."""
    if not model_specs:
        raise ValueError("a round needs at least one model spec")
    check_model_specs(model_specs)
    tree = read_tree_with_tests(tree_path)
    if not new_topic:
        check_topic(tree, topic, tree_file=tree_path, field=topic_field, new_topic=new_topic_flag)
    return tree


def adapt_round(
    config: AdaptConfig,
    *,
    backend: Backend,
    embed: Embedder | None = None,
    on_prompt_done: Callable[[], None] | None = None,
) -> StepOutput:
    """Round `config.number` of suggestions for the focus topic of the tree file, steered by
    the first model's failures and scored on all of them, as `config.round` says, written
    to `config.out`; see the module docstring. `config.rankers` is a trained ensemble
    folder; without it P(valid) stays unset. A topic the tree does not have is an error
    unless `config.new_topic`; a round that keeps no suggestion is an error
    (EmptyRoundError) unless `config.allow_empty`."""
    if config.out is None:
        raise ValueError("adapt_round needs config.out, the file the suggestions go to")
    out, topic, settings, round = config.out, config.topic, config.round, config.number
    task = config.task
    rankers = Path(config.rankers) if config.rankers else None
    tree = check_round(config.tree, topic, config.models, new_topic=config.new_topic)
    target, *others = load_models(config.models, task=task, labels=config.labels)
    cache = ResponseCache(config.cache_path)
    try:
        result = suggestion_round(
            tree,
            topic,
            target,
            backend,
            cache,
            embed or minilm_embedder,
            others=others,
            settings=settings,
            round=round,
            on_prompt_done=on_prompt_done,
        )
    finally:
        cache.close()
    suggestions = list(result.suggestions)
    version = None
    if rankers is not None and suggestions:
        suggestions, version = triage(
            suggestions,
            rankers,
            task=task,
            labels=target.labels,
            backend=backend,
            temperature=settings.temperature,
        )
    summary = AdaptSummary(
        topic=normalize_topic(topic),
        target=target.name,
        models=[target.name, *(m.name for m in others)],
        backend=backend.name,
        model=backend.model,
        round=round,
        settings=settings,
        counts=result.counts,
        ensemble=version,
        failing=sum(s.failure_score > 0 for s in suggestions),
    )
    files = {
        "dropped": sibling(out, "dropped"),
        "prompts": sibling(out, "prompts"),
        "summary": sibling(out, "summary", ".json"),
    }
    remove_stale_temporaries(out.parent)  # what killed rounds left there
    write_jsonl(files["dropped"], result.dropped)
    write_jsonl(files["prompts"], result.prompts)
    if not suggestions and not config.allow_empty:
        raise EmptyRoundError(_empty_round_message(result.counts, out, files["dropped"]))
    write_jsonl(out, suggestions)
    write_text_atomic(files["summary"], summary.model_dump_json(indent=1) + "\n")
    logger.info(
        "round %d on %s: %d suggestions (%d failing) written to %s",
        round,
        summary.topic,
        len(suggestions),
        summary.failing,
        out,
    )
    return step_output("adapt", out, len(suggestions), files=files, summary=summary)


def _empty_round_message(counts: RoundCounts, out: Path, dropped: Path) -> str:
    """Why a round kept no suggestion: its completions and what dropped them."""
    reasons = dict(counts.malformed)
    for name in ("duplicates", "in_tree", "in_subtopic"):
        if value := getattr(counts, name):
            reasons[name] = value
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) or "none dropped"
    return (
        f"no suggestion kept from {counts.completions} completions ({why}); the dropped "
        f"completions and their reasons are in {dropped}; {out} left as it was "
        "(allow an empty round, --allow-empty, to write it empty)"
    )


def as_candidate(
    suggestion: Suggestion,
    *,
    task: str,
    labels: Sequence[str],
    backend: Backend,
    temperature: float | None,
    descriptions: Mapping[str, tuple[str, str]] | None = None,
) -> Candidate:
    """A suggestion as the ranker ensemble judges it: the suite description its topic came
    from (`descriptions`: `/capability/description` topic -> capability and description, as
    `tree from-suite` names topics), else the test's own description, else the topic path,
    plays the test-case description; "should not be Y" expects any other label; a
    comparison expects any label."""
    test = suggestion.test
    parts = [part for part in test.topic.split("/") if part]
    capability = parts[0] if parts else "root"
    description = test.description or (" / ".join(parts) if parts else "any test")
    origin = (descriptions or {}).get("/" + "/".join(parts[:2]))
    if origin is not None:
        capability, description = origin
    if test.comparator == "should be":
        label: str | tuple[str, ...] = test.expected_labels
    elif test.comparator == "should not be":
        label = tuple(name for name in labels if name not in test.expected_labels)
    else:
        label = tuple(labels)
    test_type = "MFT"
    if test.comparator in INPUT_COMPARATORS:
        test_type = "INV" if test.comparator == "should be the same as for" else "DIR"
    return Candidate(
        task=task,
        capability=capability,
        description_id=description_id(task, capability, description),
        description=description,
        text=test.input,
        text_pair=test.input_pair,
        label=list(label) or list(labels),
        test_type=test_type,
        prompt_id=content_id("adapt-prompt", suggestion.round, suggestion.prompt_index),
        seed_case_ids=(),
        backend=backend.name,
        model=backend.model,
        temperature=temperature,
    )


def suite_topics(task: str | None) -> dict[str, tuple[str, str]]:
    """The `/capability/description` topics of the task's shipped suite, with the capability
    and description each came from (empty for a task without a shipped suite)."""
    from testaug.adaptive.from_suite import case_topic
    from testaug.core.bundled import bundled_suites, resolve_suite
    from testaug.suites.load import load_suite

    if task is None or task not in bundled_suites():
        return {}
    suite = load_suite(resolve_suite(task))
    return {case_topic(d.capability, d.text): (d.capability, d.text) for d in suite.descriptions()}


def triage(
    suggestions: Sequence[Suggestion],
    rankers: Path,
    *,
    task: str | None,
    labels: Sequence[str],
    backend: Backend,
    temperature: float | None,
) -> tuple[list[Suggestion], str]:
    """The suggestions (order kept) with P(valid) from the trained ensemble in `rankers`,
    and the ensemble's version."""
    from rankers.ensemble import Ensemble

    ensemble = Ensemble.load(rankers)
    descriptions = suite_topics(task)
    candidates = [
        as_candidate(
            s,
            task=task or "tree",
            labels=labels,
            backend=backend,
            temperature=temperature,
            descriptions=descriptions,
        )
        for s in suggestions
    ]
    ranked = ensemble.rank(candidates)
    p_valid = {item.candidate.id: item.p_valid for item in ranked}
    return [
        s.model_copy(update={"p_valid": p_valid.get(c.id)})
        for s, c in zip(suggestions, candidates, strict=True)
    ], ensemble.version
