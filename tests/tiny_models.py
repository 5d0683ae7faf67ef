"""Tiny random BERT, ELECTRA and RoBERTa sequence classifiers and a tiny causal LM, built in
place (no download)."""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "the",
    "a",
    "an",
    "is",
    "was",
    "not",
    "no",
    "one",
    "never",
    "good",
    "bad",
    "great",
    "awful",
    "flight",
    "crew",
    "seat",
    "food",
    "service",
    "label",
    "negative",
    "positive",
    "neutral",
    "sentence",
    "with",
    "word",
    ".",
    ",",
    "?",
    "!",
    "||",
    "i",
    "we",
    "you",
    "it",
    "they",
    "like",
    "love",
    "hate",
    "enjoy",
    "duplicate",
    "not_duplicate",
    "entailment",
    "contradiction",
    "question",
    "who",
    "what",
    "how",
]


def word_tokenizer(*extra: str):
    """A word-level BERT tokenizer over the special tokens, WORDS and `extra`."""
    from transformers import BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *extra]
    return BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)})


def build_tiny_cross_encoder(kind: str, path: Path) -> Path:
    """Save a one-layer, hidden-size-16 `kind` (bert, electra, roberta) classifier to `path`."""
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        ElectraConfig,
        ElectraForSequenceClassification,
        RobertaConfig,
        RobertaForSequenceClassification,
    )

    path.mkdir(parents=True, exist_ok=True)
    tokenizer = word_tokenizer()
    sizes = {
        "vocab_size": len(tokenizer),
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "max_position_embeddings": 160,
        "num_labels": 1,
        "pad_token_id": 0,
    }
    if kind == "bert":
        model = BertForSequenceClassification(BertConfig(**sizes))
    elif kind == "electra":
        model = ElectraForSequenceClassification(ElectraConfig(embedding_size=16, **sizes))
    elif kind == "roberta":
        model = RobertaForSequenceClassification(RobertaConfig(type_vocab_size=2, **sizes))
        tokenizer.model_input_names = ["input_ids", "attention_mask"]
    else:
        raise ValueError(kind)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_causal_lm(path: Path) -> Path:
    """Save a two-layer, hidden-size-16 Llama causal LM (seeded weights) with a word-level
    tokenizer to `path`."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    path.mkdir(parents=True, exist_ok=True)
    tokenizer = word_tokenizer(":", "/")
    tokenizer.model_input_names = ["input_ids", "attention_mask"]
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
        bos_token_id=2,
        eos_token_id=3,
    )
    with torch.random.fork_rng():  # the same weights in every run, whatever ran before
        torch.manual_seed(0)
        LlamaForCausalLM(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def make_candidate(text: str, pair: str | None = None, description: str = "A positive sentence."):
    """A generated sentiment candidate for ranker tests."""
    from testaug.core.records import Candidate

    return Candidate(
        task="sentiment",
        capability="Vocabulary",
        description_id=description[:12],
        description=description,
        text=text,
        text_pair=pair,
        label="positive",
        prompt_id="p",
        seed_case_ids=("s",),
        backend="fake",
        model="m",
    )


def make_labelled(good: list[str], bad: list[str]):
    """Valid candidates from `good`, then invalid ones (wrong label) from `bad`."""
    from testaug.core.records import LabelledCandidate

    return [LabelledCandidate(candidate=make_candidate(t), valid=True) for t in good] + [
        LabelledCandidate(candidate=make_candidate(t), valid=False, reason="label") for t in bad
    ]


def write_ranked_run(
    folder: Path,
    texts: list[str],
    *,
    version: str = "v1",
    p_valid: list[float] | None = None,
    calibration: object | None = None,
) -> Path:
    """A run folder for annotation tests: ranked.jsonl (texts[i] ranked i + 1, each prompted
    by the seed "The seat was great." and a seed id that is gone) and cases.jsonl with the
    seed and one negative case. With `p_valid`, texts[i] has P(valid) p_valid[i] in group
    "m"; with `calibration` (a Calibration record), ranked.calibration.json is written."""
    import numpy as np

    from rankers.ensemble import ranked_candidates
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import TestCase

    seed = TestCase(
        task="sentiment",
        capability="Vocabulary",
        description_id="A positive se",
        description="A positive sentence.",
        text="The seat was great.",
        label="positive",
    )
    other = TestCase(
        **{**seed.model_dump(exclude={"id"}), "text": "The food was awful.", "label": "negative"}
    )
    candidates = [
        make_candidate(text).model_copy(update={"seed_case_ids": (seed.id, "gone")})
        for text in texts
    ]
    n = len(texts)
    scores = {"first": np.linspace(1.0, 0.0, n), "second": np.linspace(0.9, 0.1, n)}
    calibrated = [(p, "m") for p in p_valid] if p_valid is not None else None
    ranked = ranked_candidates(candidates, scores, version=version, p_valid=calibrated)
    write_jsonl(folder / "ranked.jsonl", ranked)
    write_jsonl(folder / "cases.jsonl", [seed, other])
    if calibration is not None:
        text = calibration.model_dump_json(indent=1)  # type: ignore[attr-defined]
        (folder / "ranked.calibration.json").write_text(text + "\n", encoding="utf-8")
    return folder


def make_calibration(version: str = "v1", **curves: tuple[list[float], list[bool]]):
    """A Calibration record with a precision curve per group from (P(valid), valid) lists,
    each group's own, and the pooled fallback (`any generator`) with the first group's."""
    from testaug.core.records import Calibration
    from testaug.review.acceptance import precision_curve

    pooled = {"any generator": next(iter(curves.values())), **curves}
    return Calibration(
        ensemble_version=version,
        method="isotonic",
        folds=3,
        fallback="any generator",
        curves={group: precision_curve(group, p, valid) for group, (p, valid) in pooled.items()},
    )


# Out-of-fold evidence on which P(valid) >= 0.9 is the rule at precision 0.9 (96 of 100
# valid, lower bound 0.91), and nothing qualifies at 0.97.
VOUCHED_CURVE = (
    [0.99] * 60 + [0.9] * 40 + [0.3] * 100,
    [True] * 60 + [True] * 36 + [False] * 4 + [True] * 20 + [False] * 80,
)
