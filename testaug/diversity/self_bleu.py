"""Self-BLEU of a set of texts: exact, in time linear in the texts' total length.

Self-BLEU (Zhu et al., 2018) scores each text with sentence-level BLEU against all
the other texts as references and averages the scores; lower is more diverse.
Scores are fractions in [0, 1], the scale the TestAug paper reports (sacrebleu's
0-100 score divided by 100).

Two variants, each exactly equal (to float rounding) to a plain loop:

- ``sacrebleu``: ``sacrebleu.sentence_bleu(hyp, refs)`` with its defaults
  (tokenizer 13a, smoothing ``exp``, effective order, case kept).
- ``texygen``: NLTK's ``sentence_bleu(refs, hyp, weights=(1/4,)*4,
  smoothing_function=SmoothingFunction().method1)`` over NLTK word tokens, as the
  Texygen benchmark computes it (its ``get_bleu_parallel``: each text against all
  the others). Texygen tokenizes with ``nltk.word_tokenize``, which needs NLTK's
  ``punkt_tab`` data to split sentences; without that data the same Treebank word
  tokenizer runs on the whole text (``preserve_line=True``), which differs only in
  keeping a period inside a multi-sentence text attached to its word.

Why a plain loop is quadratic and this is not: against many references, BLEU
clips each hypothesis n-gram count by its largest count in any reference. Over
"every text but i", that maximum is the largest count over all texts unless text
i holds it, and then the second largest. One table of (top count, its holder,
second count) per n-gram, built in one pass, gives every clipped count, and the
closest reference length comes from the sorted distinct lengths with their
counts. A set with fewer than two texts has no references: its Self-BLEU is 0.
"""

from __future__ import annotations

import bisect
import logging
import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from testaug.core.errors import TestAugError

logger = logging.getLogger(__name__)

Variant = Literal["sacrebleu", "texygen"]
VARIANTS: tuple[Variant, ...] = ("sacrebleu", "texygen")
NGram = tuple[str, ...]
# Per n-gram: [largest count in any text, the text holding it, second largest count].
Table = dict[NGram, list[int]]


class SelfBleuEstimate(BaseModel):
    """Self-BLEU estimated from a seeded sample of hypotheses, with a 95% interval."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    ci_low: float
    ci_high: float
    n_sampled: int
    n_texts: int


def self_bleu(texts: Sequence[str], *, max_order: int = 4, variant: Variant = "sacrebleu") -> float:
    """Mean BLEU of each text against all the others, in [0, 1]; 0 for fewer than two texts."""
    scores = _scores(texts, range(len(texts)), max_order, variant)
    return math.fsum(scores) / len(scores) if scores else 0.0


def self_bleu_scores(
    texts: Sequence[str], *, max_order: int = 4, variant: Variant = "sacrebleu"
) -> list[float]:
    """Each text's BLEU against all the others, in [0, 1]; empty for fewer than two texts."""
    return _scores(texts, range(len(texts)), max_order, variant)


def sampled_self_bleu(
    texts: Sequence[str],
    *,
    sample: int,
    seed: int = 0,
    max_order: int = 4,
    variant: Variant = "sacrebleu",
) -> SelfBleuEstimate:
    """Self-BLEU of a seeded sample of hypotheses, each against all other texts.

    The interval is the normal approximation, mean +- 1.96 standard errors, with
    the finite-population correction (a sample of every text has zero width),
    clipped to [0, 1].
    """
    if sample < 2:
        raise TestAugError(f"a Self-BLEU sample needs at least 2 texts, not {sample}")
    n = len(texts)
    chosen = sorted(random.Random(seed).sample(range(n), min(sample, n)))
    scores = _scores(texts, chosen, max_order, variant)
    if not scores:
        return SelfBleuEstimate(mean=0.0, ci_low=0.0, ci_high=0.0, n_sampled=0, n_texts=n)
    k = len(scores)
    mean = math.fsum(scores) / k
    variance = math.fsum((s - mean) ** 2 for s in scores) / (k - 1)
    half = 1.96 * math.sqrt(variance / k * (n - k) / (n - 1))
    return SelfBleuEstimate(
        mean=mean,
        ci_low=max(0.0, mean - half),
        ci_high=min(1.0, mean + half),
        n_sampled=k,
        n_texts=n,
    )


def self_bleu_reference(
    texts: Sequence[str], *, max_order: int = 4, variant: Variant = "sacrebleu"
) -> float:
    """Self-BLEU by the plain quadratic loop over sacrebleu or NLTK (for tests and benchmarks)."""
    if len(texts) < 2:
        return 0.0
    score = _sacrebleu_loop_score if variant == "sacrebleu" else _texygen_loop_score
    scores = [score(text, [*texts[:i], *texts[i + 1 :]], max_order) for i, text in enumerate(texts)]
    return math.fsum(scores) / len(scores)


def _sacrebleu_loop_score(hypothesis: str, references: list[str], max_order: int) -> float:
    """sacrebleu's sentence BLEU of one hypothesis, as a fraction."""
    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU

    if max_order == 4:
        return sacrebleu.sentence_bleu(hypothesis, references).score / 100
    metric = BLEU(effective_order=True, max_ngram_order=max_order)
    return metric.sentence_score(hypothesis, references).score / 100


def _texygen_loop_score(hypothesis: str, references: list[str], max_order: int) -> float:
    """NLTK's sentence BLEU of one hypothesis with Texygen's weights and smoothing."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    tokenize = texygen_tokenizer()
    return sentence_bleu(
        [tokenize(reference) for reference in references],
        tokenize(hypothesis),
        weights=tuple(1.0 / max_order for _ in range(max_order)),
        smoothing_function=SmoothingFunction().method1,
    )


@cache
def sacrebleu_tokenizer() -> Callable[[str], list[str]]:
    """sacrebleu's default preprocessing: strip trailing space, tokenizer 13a, split."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tokenizer = Tokenizer13a()
    return lambda text: tokenizer(text.rstrip()).split()


@cache
def texygen_tokenizer() -> Callable[[str], list[str]]:
    """nltk.word_tokenize when punkt_tab is installed, else its word tokenizer on the whole line."""
    import nltk

    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError:
        logger.info("NLTK punkt_tab data not found: word tokens without sentence splitting")
        return lambda text: nltk.word_tokenize(text, preserve_line=True)
    return nltk.word_tokenize


def _ngram_counts(tokens: list[str], max_order: int) -> Counter[NGram]:
    """Counts of every n-gram of order 1 to max_order."""
    return Counter(
        tuple(tokens[start : start + n])
        for n in range(1, max_order + 1)
        for start in range(len(tokens) - n + 1)
    )


def _top_two_table(counts: Sequence[Counter[NGram]], wanted: set[NGram] | None) -> Table:
    """Per n-gram (all, or only the wanted ones): top count, its holder, second count."""
    table: Table = {}
    for index, text_counts in enumerate(counts):
        for ngram, count in text_counts.items():
            if wanted is not None and ngram not in wanted:
                continue
            entry = table.get(ngram)
            if entry is None:
                table[ngram] = [count, index, 0]
            elif count > entry[0]:
                entry[2] = entry[0]
                entry[0] = count
                entry[1] = index
            elif count > entry[2]:
                entry[2] = count
    return table


def _clipped_stats(
    index: int, counts: Counter[NGram], table: Table, max_order: int
) -> tuple[list[int], list[int]]:
    """Per order: n-gram matches clipped by the other texts' largest counts, and hyp totals."""
    correct = [0] * max_order
    total = [0] * max_order
    for ngram, count in counts.items():
        top, holder, second = table[ngram]
        others = second if holder == index else top
        order = len(ngram) - 1
        total[order] += count
        correct[order] += min(count, others)
    return correct, total


class _Lengths:
    """Token lengths of all texts, to find the closest length among all but one."""

    def __init__(self, lengths: Sequence[int]) -> None:
        self.counts = Counter(lengths)
        self.distinct = sorted(self.counts)

    def closest_other(self, length: int) -> int:
        """Closest length among the other texts to one of this length; ties go to the shorter."""
        if self.counts[length] > 1:
            return length
        at = bisect.bisect_left(self.distinct, length)
        below = self.distinct[at - 1] if at > 0 else None
        above = self.distinct[at + 1] if at + 1 < len(self.distinct) else None
        if below is None:
            return above  # type: ignore[return-value]  # two texts or more: one neighbour exists
        if above is None or length - below <= above - length:
            return below
        return above


def _scores(
    texts: Sequence[str], hypotheses: Sequence[int], max_order: int, variant: Variant
) -> list[float]:
    """BLEU of the chosen texts, each against all the other texts, as fractions."""
    if variant not in VARIANTS:
        raise TestAugError(f"unknown Self-BLEU variant {variant!r} (use one of {VARIANTS})")
    if max_order < 1:
        raise TestAugError(f"max_order must be at least 1, not {max_order}")
    if len(texts) < 2:
        return []
    tokenize = sacrebleu_tokenizer() if variant == "sacrebleu" else texygen_tokenizer()
    tokens = [tokenize(text) for text in texts]
    counts = [_ngram_counts(t, max_order) for t in tokens]
    wanted = None
    if len(hypotheses) < len(texts):
        wanted = {ngram for index in hypotheses for ngram in counts[index]}
    table = _top_two_table(counts, wanted)
    lengths = _Lengths([len(t) for t in tokens])
    score = _sacrebleu_score if variant == "sacrebleu" else _texygen_score
    scores = []
    for index in hypotheses:
        correct, total = _clipped_stats(index, counts[index], table, max_order)
        hyp_len = len(tokens[index])
        scores.append(score(correct, total, hyp_len, lengths.closest_other(hyp_len), max_order))
    return scores


def _sacrebleu_score(
    correct: list[int], total: list[int], hyp_len: int, ref_len: int, max_order: int
) -> float:
    """sacrebleu's own score from sentence statistics (exp smoothing, effective order)."""
    from sacrebleu.metrics.bleu import BLEU

    result = BLEU.compute_bleu(
        correct,
        total,
        hyp_len,
        ref_len,
        smooth_method="exp",
        effective_order=True,
        max_ngram_order=max_order,
    )
    return result.score / 100


def _texygen_score(
    correct: list[int], total: list[int], hyp_len: int, ref_len: int, max_order: int
) -> float:
    """NLTK's sentence BLEU from statistics: smoothing method 1 (epsilon 0.1), uniform weights."""
    if correct[0] == 0:
        return 0.0
    if hyp_len > ref_len:
        brevity = 1.0
    elif hyp_len == 0:
        brevity = 0.0
    else:
        brevity = math.exp(1 - ref_len / hyp_len)
    weight = 1.0 / max_order
    logs = []
    for matched, count in zip(correct, total, strict=True):
        denominator = max(1, count)
        precision = (matched + 0.1) / denominator if matched == 0 else matched / denominator
        logs.append(weight * math.log(precision))
    return brevity * math.exp(math.fsum(logs))
