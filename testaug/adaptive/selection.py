"""Which tests go into a suggestion prompt: AdaTest's greedy selection.

For each of `prompts` prompts, tests are picked one at a time by the highest

    rank = score * topic weight * diversity * (1 - avoidance)

- score: the targeted model's failure score shifted to be positive
  (`score - min + 1e-8`; an unscored test ranks below every scored one), plus
  `score_randomization` x the topic-weighted standard deviation x U[0, 1);
- topic weight: 1 for tests directly in the focus topic, 0.01 in its subtopics
  and 0 outside it. When the topic (subtopics included) holds fewer than
  `min_topic_tests` tests, outside tests get a very small weight that grows with
  the topic path they share with the focus, so the prompt is filled "as close as
  possible to the topic" and outside tests are used only then;
- diversity: 1 - the largest cosine similarity to a test already picked (or
  skipped), from the caller's embedding matrix;
- avoidance: a pick is never picked again; with probability `skip_randomization`
  a pick is skipped instead of added, and nearly never comes back (1 - 1e-4).
  Skips only happen when the topic (subtopics included) has more tests than a
  prompt holds: a small topic's tests all belong in its prompts;
- after a pick, its subtopic's tests (a direct test: only itself) are scaled by
  1e-4, so a prompt visits several subtopics; a borrowed outside test's topic by
  0.5, enough to prefer another topic equally close but not a farther one;
- about `slot_randomization` of the slots (Binomial) are filled last with random
  scores 1 + 0.1 U[0, 1) instead of failure scores: random tests of the topic.

A prompt holds tests of one shape (single input or pair; label or input
comparators), that of the best-ranked test, so its lines share one notation. The
picks are returned reversed: the highest priority last, nearest the completion.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from testaug.adaptive.tree import LABEL_COMPARATORS, ROOT, TreeTest, is_within, normalize_topic
from testaug.core.records import Record

DIRECT_WEIGHT = 1.0
SUBTOPIC_WEIGHT = 0.01
OUTSIDE_WEIGHT = 1e-8  # x100 per topic level shared with the focus, at most OUTSIDE_CAP
OUTSIDE_CAP = 1e-3
VISITED = 1e-4  # the scaling of a picked test's subtopic
OUTSIDE_REUSE = 0.5  # the scaling of a picked outside test's topic (0.5**6 > 1/100)
SKIPPED = 1.0 - 1e-4  # the avoidance of a skipped pick
UNSCORED = 0.5e-8  # below every scored test (those are >= 1e-8)


class PromptSelectionConfig(Record):
    """AdaTest's prompt-selection parameters, with its defaults."""

    prompt_size: int = Field(default=7, ge=1)
    prompts: int = Field(default=10, ge=1)
    score_randomization: float = Field(default=1.0, ge=0.0)
    skip_randomization: float = Field(default=0.25, ge=0.0, lt=0.99)
    slot_randomization: float = Field(default=0.25, ge=0.0, le=1.0)
    subtopic_diversity: bool = True
    prompt_diversity: bool = True
    min_topic_tests: int = Field(default=3, ge=0, description="fewer: borrow outside tests")


Shape = tuple[bool, bool]


def shape(test: TreeTest) -> Shape:
    """A test's notation: (a pair?, a label comparator?)."""
    return (test.input_pair is not None, test.comparator in LABEL_COMPARATORS)


def _parts(topic: str) -> list[str]:
    return [part for part in normalize_topic(topic).split("/") if part]


def subtopic_of(topic: str, focus: str) -> str | None:
    """The child of `focus` that `topic` lies in (None: `topic` is the focus or outside it)."""
    topic, focus = normalize_topic(topic), normalize_topic(focus)
    if topic == focus or not is_within(topic, focus):
        return None
    child = _parts(topic)[len(_parts(focus))]
    return (focus if focus != ROOT else "") + "/" + child


def topic_weights(tests: Sequence[TreeTest], focus: str, *, min_topic_tests: int = 3) -> np.ndarray:
    """Each test's topic weight for prompts about `focus` (see the module docstring)."""
    focus = normalize_topic(focus)
    focus_parts = _parts(focus)
    weights = np.zeros(len(tests))
    within = 0
    for i, test in enumerate(tests):
        if test.topic == focus:
            weights[i] = DIRECT_WEIGHT
        elif is_within(test.topic, focus):
            weights[i] = SUBTOPIC_WEIGHT
        within += weights[i] > 0
    if within < min_topic_tests:
        for i, test in enumerate(tests):
            if weights[i] == 0:
                shared = 0
                for a, b in zip(_parts(test.topic), focus_parts, strict=False):
                    if a != b:
                        break
                    shared += 1
                weights[i] = min(OUTSIDE_WEIGHT * 100**shared, OUTSIDE_CAP)
    return weights


def positive_scores(scores: Sequence[float]) -> np.ndarray:
    """Failure scores shifted to be positive (min -> 1e-8); NaN (unscored) below them all."""
    values = np.asarray(scores, dtype=np.float64)
    out = np.full(len(values), UNSCORED)
    known = ~np.isnan(values)
    if known.any():
        out[known] = values[known] - values[known].min() + 1e-8
    return out


def cosine_matrix(embeddings: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarities of the rows (a zero row is similar to nothing)."""
    vectors = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
    return unit @ unit.T


def _groups(tests: Sequence[TreeTest], focus: str) -> list[tuple[np.ndarray, float]]:
    """For each test, the tests whose weight a pick of it lowers, and by what factor: its
    subtopic of the focus, only itself when directly in the focus, its own topic when
    outside."""
    n = len(tests)
    keys: list[str | None] = []
    for test in tests:
        if test.topic == normalize_topic(focus):
            keys.append(None)
        elif is_within(test.topic, focus):
            keys.append("in:" + (subtopic_of(test.topic, focus) or ""))
        else:
            keys.append("out:" + test.topic)
    out = []
    for i in range(n):
        key = keys[i]
        if key is None:
            out.append((np.array([i]), VISITED))
        else:
            factor = OUTSIDE_REUSE if key.startswith("out:") else VISITED
            out.append((np.array([j for j in range(n) if keys[j] == key]), factor))
    return out


def select_prompts(
    tests: Sequence[TreeTest],
    scores: Sequence[float],
    focus: str,
    embeddings: np.ndarray,
    rng: np.random.Generator,
    settings: PromptSelectionConfig = PromptSelectionConfig(),  # noqa: B008  (a frozen record)
) -> list[list[TreeTest]]:
    """`settings.prompts` lists of tests for prompts about `focus`, each reversed so its
    highest-priority test comes last. `scores` are the targeted model's failure scores and
    `embeddings` an (n, d) matrix, both aligned with `tests`; a list may be short (or empty)
    when the topic has few tests."""
    n = len(tests)
    if len(scores) != n or len(embeddings) != n:
        raise ValueError(f"{n} tests, {len(scores)} scores and {len(embeddings)} embeddings")
    if n == 0:
        return [[] for _ in range(settings.prompts)]
    weights = topic_weights(tests, focus, min_topic_tests=settings.min_topic_tests)
    base = positive_scores(scores)
    best = int(np.argmax(base * weights))
    weights = weights * np.array([shape(t) == shape(tests[best]) for t in tests])
    similarity = cosine_matrix(embeddings) if settings.prompt_diversity else None
    groups = _groups(tests, focus) if settings.subtopic_diversity else None
    return [
        [tests[i] for i in reversed(_one_prompt(base, weights, similarity, groups, rng, settings))]
        for _ in range(settings.prompts)
    ]


def _one_prompt(
    base: np.ndarray,
    weights: np.ndarray,
    similarity: np.ndarray | None,
    groups: list[tuple[np.ndarray, float]] | None,
    rng: np.random.Generator,
    settings: PromptSelectionConfig,
) -> list[int]:
    """The indices of one prompt's tests, in the order picked (highest priority first)."""
    n = len(base)
    usable = int((weights > 0).sum())
    scores = base.copy()
    if usable > 1 and settings.score_randomization > 0:
        std = float(np.sqrt(np.cov(scores, aweights=weights)))
        scores = scores + settings.score_randomization * std * rng.random(n)
    scaling = weights.copy()
    avoidance = np.zeros(n)
    random_slots = int(rng.binomial(settings.prompt_size, settings.slot_randomization))
    random_slots = min(random_slots, max(0, usable - settings.prompt_size))
    greedy_slots = min(settings.prompt_size - random_slots, usable)
    may_skip = int((weights >= SUBTOPIC_WEIGHT).sum()) > settings.prompt_size
    picked: list[int] = []
    randomised = False
    for _ in range(50 * settings.prompt_size + n):  # ends long before: each pick is avoided
        if len(picked) >= greedy_slots + random_slots:
            break
        if len(picked) == greedy_slots and not randomised:
            scores = 1.0 + 0.1 * rng.random(n)
            randomised = True
        diversity = np.ones(n)
        if similarity is not None:
            diversity = 1.0 - (similarity * avoidance[None, :]).max(axis=1)
        rank = scores * scaling * np.clip(diversity, 0.0, None) * (1.0 - avoidance)
        if rank.max() <= 0:
            break
        choice = int(np.argmax(rank))
        if not may_skip or rng.random() >= settings.skip_randomization:
            picked.append(choice)
            avoidance[choice] = 1.0
        else:
            avoidance[choice] = max(avoidance[choice], SKIPPED)
        if groups is not None:
            members, factor = groups[choice]
            scaling[members] *= factor
    return picked


def random_prompts(
    tests: Sequence[TreeTest],
    focus: str,
    rng: np.random.Generator,
    settings: PromptSelectionConfig = PromptSelectionConfig(),  # noqa: B008  (a frozen record)
) -> list[list[TreeTest]]:
    """TestAug's way, for comparison: each prompt holds `prompt_size` tests drawn uniformly at
    random from the topic (subtopics included; outside tests only as `topic_weights` allows
    them), of one shape, in random order."""
    weights = topic_weights(tests, focus, min_topic_tests=settings.min_topic_tests)
    within = [i for i in range(len(tests)) if weights[i] >= SUBTOPIC_WEIGHT]
    usable = within
    if len(within) < settings.min_topic_tests:  # the closest outside tests, ties at random
        outside = [i for i in range(len(tests)) if 0 < weights[i] < SUBTOPIC_WEIGHT]
        ties = rng.random(len(outside))
        order = sorted(range(len(outside)), key=lambda k: (-weights[outside[k]], ties[k]))
        usable = within + [outside[k] for k in order][: settings.prompt_size - len(within)]
    out: list[list[TreeTest]] = []
    for _ in range(settings.prompts):
        if not usable:
            out.append([])
            continue
        first = usable[int(rng.integers(len(usable)))]
        pool = [i for i in usable if shape(tests[i]) == shape(tests[first])]
        size = min(settings.prompt_size, len(pool))
        chosen = rng.choice(len(pool), size=size, replace=False)
        out.append([tests[pool[int(j)]] for j in chosen])
    return out
