"""Fill-in suggestions without the embedded LM: masks, candidate pools, the masked-LM path."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from testaug.core.errors import TestAugError
from testaug.core.jsonl import read_jsonl
from testaug.editor.candidates import CandidatePool, continuation_prompt
from testaug.editor.masks import parse_masked
from testaug.editor.mlm import mlm_name, mlm_suggest
from testaug.editor.suggestion import WordSuggestion

WORDS = [
    "the",
    "flight",
    "was",
    "i",
    "really",
    "loved",
    "hated",
    "seat",
    "food",
    "good",
    "bad",
    ".",
]


def test_each_mask_is_its_own_slot_and_a_mask_gets_its_article_by_sound():
    masked = parse_masked("{mask} really {mask} {a:mask} flight.")
    assert masked.n_masks == 3
    assert masked.fill(["I", "loved", "excellent"]) == "I really loved an excellent flight."
    assert masked.fill(["We", "had", "good"]) == "We really had a good flight."
    assert masked.prefix(2, ["I", "loved"]) == "I really loved a "
    assert masked.after_prefix(2, "excellent") == "excellent"


def test_other_slots_take_their_lexicons_first_word_and_inflections_apply_to_masks():
    masked = parse_masked("The {air_thing} was {mask}; I {vbd:mask} it.", {"air_thing": ["seat"]})
    assert masked.fill(["fine", "like"]) == "The seat was fine; I liked it."


def test_a_sentence_without_a_mask_or_with_an_unknown_slot_is_an_error():
    with pytest.raises(TestAugError, match="no \\{mask\\}"):
        parse_masked("I really liked the flight.")
    with pytest.raises(TestAugError, match="unknown slot \\{pos_verb\\}"):
        parse_masked("I {pos_verb} the {mask}.")


def test_a_candidate_pool_keeps_first_order_and_every_source():
    pool = CandidatePool()
    assert pool.add(["loved", "liked"], "wordnet") == 2
    assert pool.add(["liked", "adored", " "], "lexicon:pos_verb") == 1
    assert pool.words() == ["loved", "liked", "adored"]
    assert pool.sources["liked"] == ["wordnet", "lexicon:pos_verb"]


def test_the_list_continuation_prompt_shows_the_blank_and_the_seed_words():
    prompt = continuation_prompt("I really {mask} the {a:mask} flight.", ["loved", "liked"])
    assert '"I really ___ the ___ flight."' in prompt
    assert prompt.endswith("- loved\n- liked\n-")


def build_tiny_mlm(path: Path, favourite: str) -> Path:
    """A one-layer BERT masked LM over WORDS whose output bias favours `favourite`."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    torch.manual_seed(0)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)})
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=64, pad_token_id=0,
    )  # fmt: skip
    model = BertForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.bias[vocab.index(favourite)] += 20.0
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def test_the_masked_lm_path_ranks_the_models_likeliest_word_first(tmp_path):
    from transformers import pipeline

    path = build_tiny_mlm(tmp_path / "mlm", favourite="loved")
    fill_mask = pipeline("fill-mask", model=str(path), tokenizer=str(path), device=-1)
    out = mlm_suggest(parse_masked("i really {mask} the flight ."), fill_mask, n=5, model="tiny")
    assert out[0].words == ["loved"] and out[0].filled == "i really loved the flight ."
    assert len(out) == 5 and all(s.sources == ["mlm:tiny"] for s in out)
    assert [s.score for s in out] == sorted((s.score for s in out), reverse=True)
    two = mlm_suggest(parse_masked("i {mask} the {mask} ."), fill_mask, n=3, model="tiny")
    assert two[0].words == ["loved", "loved"] and len({s.filled for s in two}) == 3


def test_suggest_with_a_masked_lm_prints_a_table_and_writes_suggestion_jsonl(tmp_path):
    from testaug.cli import ErrorsAsMessages
    from testaug.cli.editor import suggest_command

    path = build_tiny_mlm(tmp_path / "mlm", favourite="hated")
    app = typer.Typer(cls=ErrorsAsMessages)
    app.command("suggest")(suggest_command)
    app.command("unused")(lambda: None)  # a group, as the real `testaug` is
    out = tmp_path / "words.jsonl"
    args = [
        "suggest",
        "i really {mask} the flight .",
        "--mlm",
        f"hf:{path}",
        "-n",
        "4",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(app, args, env={"TESTAUG_CACHE_DIR": str(tmp_path / "cache")})
    assert result.exit_code == 0, result.output
    assert "hated" in result.stdout and "4 suggestions" in result.stdout
    written = list(read_jsonl(out, WordSuggestion))
    assert len(written) == 4 and written[0].word == "hated"
    bad = CliRunner().invoke(app, ["suggest", "a {mask}", "--mlm", "roberta-base"])
    assert bad.exit_code == 1 and "hf:NAME_OR_PATH" in bad.stderr


def test_an_mlm_spec_names_a_model_after_hf():
    assert mlm_name("hf:roberta-base") == "roberta-base"
    with pytest.raises(TestAugError):
        mlm_name("roberta-base")
