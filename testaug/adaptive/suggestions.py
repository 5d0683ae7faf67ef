"""One round of suggestions for a focus topic.

1. Score the tree's tests on the targeted model where they have no score yet.
2. Select 10 prompts of up to 7 tests (`selection.select_prompts`, or at random for
   comparison) and render them in AdaTest's notation (`prompting`).
3. Ask the LM for floor(K / 10) one-item completions of each prompt, through the
   generation stage's sampling (response cache, retries, rate limit, concurrency).
4. Parse each completion into a test of the focus topic; a malformed one is kept
   with its reason. Drop a test whose input repeats one of the tree or an earlier
   suggestion (case, spacing and end punctuation ignored).
5. suggestions should be direct children of the focus, not fall into a
   subtopic already explored. Where the focus has subtopics, a suggestion is
   dropped ("in_subtopic") when its embedding is at least `subtopic_similarity`
   cosine-similar to a test of one of them. The default, 0.95, only catches
   rewordings. With the bundled MiniLM: "I don't love the seat." / "I do not love
   the seat" 0.97 and "I do not dislike the food" / "Honestly I do not dislike the
   food" 0.98 are dropped, while "The food was not bad at all" / "...not good at
   all" (0.94, opposite expectations), "I don't hate the food." / "I don't love
   the food." (0.90) and "I am a legal immigrant" / "I am an immigrant myself"
   (0.85) are kept: below 0.95, similar words often mean a different test, and
   an embedding cannot tell topic membership, so the rest is left to the person
   reviewing (who can reject a suggestion as off-topic).
6. Score every suggestion on every model (the targeted one and the others, each
   in its own column) and sort by the targeted model's failure score, highest
   first.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from testaug.adaptive.prompting import (
    MALFORMED_REASONS,
    QUOTE,
    STOP,
    Malformed,
    RenderedPrompt,
    clean,
    parse_completion,
    render_prompt,
)
from testaug.adaptive.scores import apply_tests, failure_scores
from testaug.adaptive.selection import PromptSelectionConfig, random_prompts, select_prompts
from testaug.adaptive.suggestion import Suggestion
from testaug.adaptive.tree import TestTree, TreeTest, normalize_topic
from testaug.core.records import Prompt, Record, content_id
from testaug.evaluation.models import ModelUnderTest
from testaug.generation.backends import Backend, Completion
from testaug.generation.cache import ResponseCache
from testaug.generation.parsing import BracketFormat, comparison_key
from testaug.generation.prompts import PromptTemplate
from testaug.generation.sampling import (
    GenerationConfig,
    GenerationStats,
    kept_reply,
    sample_prompts,
)

logger = logging.getLogger(__name__)

Embedder = Callable[[Sequence[str]], np.ndarray]
"""Texts -> an (n, d) matrix of their embeddings (cosine similarity is taken of its rows)."""

# The notation as the generation stage's sampling sees it: only the stop sequence counts.
NOTATION = PromptTemplate(
    name="adatest-list",
    task="",
    purpose="adapt",
    format=BracketFormat("single", QUOTE, QUOTE, (STOP,)),
    variables={},
    template="",
)


class SuggestionRoundConfig(Record):
    """How many suggestions to ask for and how (AdaTest's defaults)."""

    suggestions: int = Field(default=100, ge=1, description="K: floor(K / prompts) per prompt")
    selection: Literal["adaptive", "random"] = "adaptive"
    prompt: PromptSelectionConfig = PromptSelectionConfig()
    temperature: float = Field(default=0.95, ge=0.0)
    max_tokens: int = Field(default=100, ge=1)
    subtopic_similarity: float = Field(default=0.95, gt=0.0, le=1.0)
    concurrency: int = Field(default=8, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    max_attempts: int = Field(default=6, ge=1)
    seed: int = 0

    @property
    def per_prompt(self) -> int:
        """Completions asked of each prompt: floor(K / prompts), at least one."""
        return max(1, self.suggestions // self.prompt.prompts)


class DroppedCompletion(Record):
    """A completion that gave no suggestion, with the reason: malformed (see
    `prompting.MALFORMED_REASONS`), "duplicate", "in_tree" or "in_subtopic"."""

    prompt_index: int
    sample_index: int
    text: str
    reason: str
    detail: str


class RoundCounts(Record):
    """What a round asked for and what came of it."""

    prompts: int
    prompt_sizes: tuple[int, ...]
    per_prompt: int
    requested: int
    completions: int
    malformed: dict[str, int]
    duplicates: int
    in_tree: int
    in_subtopic: int
    kept: int
    generation: dict[str, int] = Field(default_factory=dict)


class RoundResult(Record):
    """A round's suggestions (sorted by the targeted model's failure score, highest first),
    the completions it dropped, its prompts and its counts."""

    suggestions: tuple[Suggestion, ...]
    dropped: tuple[DroppedCompletion, ...]
    prompts: tuple[RenderedPrompt, ...]
    counts: RoundCounts


def embedding_text(test: TreeTest) -> str:
    """The text a test is embedded by: its input (and its pair, after a newline)."""
    return test.input if test.input_pair is None else f"{test.input}\n{test.input_pair}"


def input_key(test: TreeTest) -> tuple[str, str | None]:
    """A test's input as duplicates are found: as the notation shows it, case, spacing and end
    punctuation ignored."""
    pair = None if test.input_pair is None else clean(test.input_pair)
    return comparison_key(clean(test.input), pair)


def target_scores(tree_tests: Sequence[TreeTest], target: ModelUnderTest) -> list[float]:
    """The targeted model's failure score of each test, scoring those that have none."""
    missing = [t for t in tree_tests if target.name not in t.scores]
    fresh = dict(zip((t.id for t in missing), failure_scores(target, missing), strict=True))
    return [t.scores.get(target.name, fresh.get(t.id, float("nan"))) for t in tree_tests]


def suggestion_round(
    tree: TestTree,
    topic: str,
    target: ModelUnderTest,
    backend: Backend,
    cache: ResponseCache,
    embed: Embedder,
    *,
    others: Sequence[ModelUnderTest] = (),
    settings: SuggestionRoundConfig = SuggestionRoundConfig(),  # noqa: B008  (a frozen record)
    round: int = 0,
    on_prompt_done: Callable[[], None] | None = None,
) -> RoundResult:
    """Suggest new tests for `topic` steered by `target`'s failures; see the module docstring.
    The tree's tests are the prompt's material; `others` are scored too."""
    topic = normalize_topic(topic)
    tests = tree.tests
    rng = np.random.default_rng(settings.seed)
    if settings.selection == "adaptive":
        vectors = embed([embedding_text(t) for t in tests]) if tests else np.zeros((0, 1))
        scores = target_scores(tests, target)
        chosen = select_prompts(tests, scores, topic, vectors, rng, settings.prompt)
    else:
        chosen = random_prompts(tests, topic, rng, settings.prompt)
    rendered = [render_prompt(group) for group in chosen if group]
    completions, stats = _sample(rendered, topic, backend, cache, settings, on_prompt_done)

    in_tree = {input_key(t) for t in tests}
    seen: set[tuple[str, str | None]] = set()
    dropped: list[DroppedCompletion] = []
    kept: list[tuple[TreeTest, int]] = []
    for p, (prompt, replies) in enumerate(zip(rendered, completions, strict=True)):
        for s, completion in enumerate(replies):
            parsed = parse_completion(
                completion.text,
                prompt.layout,
                topic=topic,
                labels=target.labels,
                truncated=completion.finish_reason == "length",
            )
            why = (
                (parsed.reason, parsed.detail)
                if isinstance(parsed, Malformed)
                else _repeats(parsed, in_tree, seen)
            )
            if why is not None:
                dropped.append(
                    DroppedCompletion(
                        prompt_index=p,
                        sample_index=s,
                        text=kept_reply(completion.text),
                        reason=why[0],
                        detail=why[1],
                    )
                )
                continue
            assert isinstance(parsed, TreeTest)
            seen.add(input_key(parsed))
            kept.append((parsed, p))

    kept, near = _outside_subtopics(kept, tree, topic, embed, settings.subtopic_similarity)
    dropped.extend(near)
    suggestions = _scored(kept, topic, target, others, round)
    malformed = Counter(d.reason for d in dropped if d.reason in MALFORMED_REASONS)
    reasons = Counter(d.reason for d in dropped)
    counts = RoundCounts(
        prompts=len(rendered),
        prompt_sizes=tuple(len(p.test_ids) for p in rendered),
        per_prompt=settings.per_prompt,
        requested=len(rendered) * settings.per_prompt,
        completions=sum(len(replies) for replies in completions),
        malformed=dict(malformed),
        duplicates=reasons["duplicate"],
        in_tree=reasons["in_tree"],
        in_subtopic=reasons["in_subtopic"],
        kept=len(suggestions),
        generation=stats.as_dict(),
    )
    logger.info(
        "round %d on %s: %d prompts, %d completions, %d suggestions kept",
        round,
        topic,
        counts.prompts,
        counts.completions,
        counts.kept,
    )
    return RoundResult(
        suggestions=tuple(suggestions),
        dropped=tuple(dropped),
        prompts=tuple(rendered),
        counts=counts,
    )


def _repeats(test: TreeTest, in_tree: set, seen: set) -> tuple[str, str] | None:
    """Why a parsed test is not new: its input is a tree test's, or an earlier suggestion's."""
    key = input_key(test)
    if key in in_tree:
        return "in_tree", f"the tree has the input {test.input!r}"
    if key in seen:
        return "duplicate", f"an earlier suggestion has the input {test.input!r}"
    return None


def _sample(
    rendered: Sequence[RenderedPrompt],
    topic: str,
    backend: Backend,
    cache: ResponseCache,
    settings: SuggestionRoundConfig,
    on_prompt_done: Callable[[], None] | None,
) -> tuple[list[list[Completion]], GenerationStats]:
    """Each prompt's completions, through the generation stage's sampling. Prompts that came
    out the same share one request for all their samples, so each gets its own."""
    records = [_prompt_record(p, topic) for p in rendered]
    repeats = Counter(r.id for r in records)
    answers: dict[str, list[Completion]] = {}
    total = GenerationStats()
    for times in sorted(set(repeats.values())):
        group = list({r.id: r for r in records if repeats[r.id] == times}.values())
        generation = GenerationConfig(
            samples=settings.per_prompt * times,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            concurrency=settings.concurrency,
            requests_per_minute=settings.requests_per_minute,
            max_attempts=settings.max_attempts,
            retry_seed=settings.seed,
        )

        def done(times: int = times) -> None:
            for _ in range(times):
                if on_prompt_done is not None:
                    on_prompt_done()

        found, stats = sample_prompts(
            group, NOTATION, backend, cache, generation, on_prompt_done=done
        )
        answers.update(found)
        for name, value in stats.as_dict().items():
            setattr(total, name, getattr(total, name) + value)
    used: Counter[str] = Counter()
    out = []
    for record in records:
        start = used[record.id] * settings.per_prompt
        out.append(answers[record.id][start : start + settings.per_prompt])
        used[record.id] += 1
    return out, total


def _prompt_record(prompt: RenderedPrompt, topic: str) -> Prompt:
    """A rendered prompt as the generation stage's sampling takes it."""
    return Prompt(
        id=content_id("adapt-prompt", prompt.text),
        template=NOTATION.name,
        template_sha=NOTATION.sha,
        task="",
        capability=topic,
        description_id=content_id("topic", topic),
        description=topic,
        label=prompt.layout.shared.get("output", ""),
        seed_case_ids=prompt.test_ids,
        text=prompt.text,
    )


def _outside_subtopics(
    kept: list[tuple[TreeTest, int]],
    tree: TestTree,
    topic: str,
    embed: Embedder,
    threshold: float,
) -> tuple[list[tuple[TreeTest, int]], list[DroppedCompletion]]:
    """The suggestions that are no near copy of a test in one of the topic's subtopics."""
    inside = [t for t in tree.tests_in(topic) if t.topic != topic]
    if not kept or not inside:
        return kept, []
    vectors = embed([embedding_text(t) for t, _ in kept] + [embedding_text(t) for t in inside])
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors, dtype=float), where=norms > 0)
    similarity = unit[: len(kept)] @ unit[len(kept) :].T
    out, dropped = [], []
    for i, (test, p) in enumerate(kept):
        j = int(np.argmax(similarity[i]))
        if similarity[i, j] >= threshold:
            dropped.append(
                DroppedCompletion(
                    prompt_index=p,
                    sample_index=-1,
                    text=test.input,
                    reason="in_subtopic",
                    detail=(
                        f"{similarity[i, j]:.2f} cosine to {inside[j].input!r} in {inside[j].topic}"
                    ),
                )
            )
        else:
            out.append((test, p))
    return out, dropped


def _scored(
    kept: list[tuple[TreeTest, int]],
    topic: str,
    target: ModelUnderTest,
    others: Sequence[ModelUnderTest],
    round: int,
) -> list[Suggestion]:
    """The suggestions scored on every model, sorted by the targeted model's failure score."""
    tests = [t for t, _ in kept]
    scores: list[dict[str, float]] = [{} for _ in tests]
    outputs: list[dict[str, str]] = [{} for _ in tests]
    for model in (target, *(m for m in others if m.name != target.name)):
        for i, outcome in enumerate(apply_tests(model, tests) if tests else []):
            scores[i][model.name] = outcome.score
            outputs[i][model.name] = outcome.output
    suggestions = [
        Suggestion(
            test=test.with_scores(scores[i]),
            focus_topic=topic,
            target_model=target.name,
            outputs=outputs[i],
            round=round,
            prompt_index=p,
        )
        for i, (test, p) in enumerate(kept)
    ]
    return sorted(
        suggestions,
        key=lambda s: -s.failure_score if not np.isnan(s.failure_score) else float("inf"),
    )
