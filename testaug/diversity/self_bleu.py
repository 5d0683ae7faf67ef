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
i holds it, and then the second largest. `ngram_stats` finds those with numpy
sorts over integer n-gram ids, and the closest reference length comes from the
sorted distinct lengths with their counts. sacrebleu's tokenizer 13a runs once on
all texts joined (its rules never cross a line), and sacrebleu's score from the
statistics is computed for all texts at once. A set with fewer than two texts has
no references: its Self-BLEU is 0.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Sequence
from functools import cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from testaug.core.errors import TestAugError
from testaug.diversity.ngram_stats import closest_other_lengths, ngram_stats

logger = logging.getLogger(__name__)

Variant = Literal["sacrebleu", "texygen"]
VARIANTS: tuple[Variant, ...] = ("sacrebleu", "texygen")
# sacrebleu's tokenizer 13a: characters it pads with spaces wherever they are (its first rule).
_PADDED = "".join(chr(c) for c in range(0x7B, 0x7F)) + "[\\]^_`" + ' !"#$%&' + "()*+" + ":;<=>?@/"
_PAD = str.maketrans({c: f" {c} " for c in _PADDED})


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


def sacrebleu_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Each text's tokens as `sacrebleu_tokenizer` gives them, with its rules run once on all
    texts joined by newlines: each text is padded with spaces and has no newline left, and
    no rule matches a newline or a match across one, so each line comes out as alone."""
    import re

    if not texts:
        return []
    lines = "\n".join(
        " " + text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ") + " "
        for text in texts
    )
    for entity, character in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
        lines = lines.replace(entity, character)
    lines = lines.translate(_PAD)
    # sacrebleu's other three rules; a function as the replacement is the quicker call.
    lines = re.sub(r"([^0-9])([\.,])", lambda m: f"{m[1]} {m[2]} ", lines)
    lines = re.sub(r"([\.,])([^0-9])", lambda m: f" {m[1]} {m[2]}", lines)
    lines = re.sub(r"([0-9])(-)", lambda m: f"{m[1]} {m[2]} ", lines)
    return [line.split() for line in lines.split("\n")]


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
    if variant == "sacrebleu":
        tokens = sacrebleu_tokens(texts)
    else:
        tokenize = texygen_tokenizer()
        tokens = [tokenize(text) for text in texts]
    stats = ngram_stats(tokens, max_order)
    chosen = np.asarray(hypotheses, dtype=np.int64)
    correct, total = stats.correct[chosen], stats.total[chosen]
    hyp_len = stats.lengths[chosen]
    ref_len = closest_other_lengths(stats.lengths)[chosen]
    if variant == "sacrebleu":
        return _sacrebleu_scores(correct, total, hyp_len, ref_len).tolist()
    return [
        _texygen_score(c.tolist(), t.tolist(), int(h), int(r), max_order)
        for c, t, h, r in zip(correct, total, hyp_len, ref_len, strict=True)
    ]


def _sacrebleu_scores(
    correct: np.ndarray, total: np.ndarray, hyp_len: np.ndarray, ref_len: np.ndarray
) -> np.ndarray:
    """sacrebleu's `BLEU.compute_bleu` (exp smoothing, effective order) for many texts at
    once, step for step: orders up to the first with no hypothesis n-gram count, each
    order without a match halving the smoothed precision 100 / total again."""
    texts, max_order = correct.shape
    short = hyp_len < ref_len
    with np.errstate(divide="ignore", invalid="ignore"):
        penalty = np.exp(1 - ref_len / np.where(hyp_len > 0, hyp_len, 1))
    brevity = np.where(short, np.where(hyp_len > 0, penalty, 0.0), 1.0)
    logs = np.zeros(texts)
    smooth = np.ones(texts)
    live = np.ones(texts, dtype=bool)  # no order so far without hypothesis n-grams
    order = np.zeros(texts)
    for n in range(max_order):
        live &= total[:, n] > 0
        order = np.where(live, n + 1, order)
        missed = live & (correct[:, n] == 0)
        smooth = np.where(missed, smooth * 2, smooth)
        denominator = np.where(live, total[:, n], 1)
        precision = np.where(
            missed, 100.0 / (smooth * denominator), 100.0 * correct[:, n] / denominator
        )
        logs = np.where(live, logs + np.log(np.where(live, precision, 1.0)), logs)
    order = np.where(order > 0, order, max_order)
    score = brevity * np.exp(logs / order)
    return np.where(correct.sum(axis=1) > 0, score, 0.0) / 100


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
