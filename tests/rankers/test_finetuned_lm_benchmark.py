"""benchmarks/finetuned_lm.py: the packed model's 4-bit weights, and pack, train and report
on a few real candidates of data/validity with a tiny causal LM built in the test."""

from __future__ import annotations

import json

import numpy as np
import pytest

from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts, write_jsonl
from testaug.core.records import LabelledCandidate
from tests.benchmark_scripts import load_benchmark
from tests.tiny_models import build_tiny_causal_lm


def test_packed_weights_come_back_within_half_a_quantization_step():
    benchmark = load_benchmark("finetuned_lm")
    weight = np.random.default_rng(0).normal(size=(6, 64)).astype(np.float32)
    packed = benchmark.quantize(weight)
    assert packed["codes"].shape == (6, 32)  # two 4-bit codes a byte
    back = benchmark.dequantize(**packed)
    step = packed["scale"].astype(np.float32).repeat(32, axis=1).reshape(6, 64)
    assert np.all(np.abs(back - weight) <= step / 2 + 1e-2)
    narrow = np.arange(16, dtype=np.float32).reshape(1, 16)  # narrower than a group
    assert np.allclose(benchmark.dequantize(**benchmark.quantize(narrow)), narrow, atol=1e-2)


@pytest.mark.slow
def test_pack_train_and_report_score_every_split_by_both_learners(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    items = list(read_jsonl_parts(bundled_dir("data") / "validity" / "train", LabelledCandidate))
    gemma = [item for item in items if item.candidate.model == "gemma-3-270m"][:48]
    data = tmp_path / "validity"
    (data / "train").mkdir(parents=True)
    write_jsonl(data / "train" / "part-1.jsonl", gemma[:36])
    write_jsonl(data / "test.jsonl", gemma[36:])
    benchmark = load_benchmark("finetuned_lm")
    pack, scores = tmp_path / "pack", tmp_path / "scores"
    model = build_tiny_causal_lm(tmp_path / "tiny-lm")
    assert benchmark.main(
        ["pack", "--data", str(data), "--model", str(model), "--sources", "gemma-3-270m",
         "--sizes", "20", "--seeds", "2", "--out", str(pack)]
    ) == 0  # fmt: skip
    runs = json.loads((pack / "runs.json").read_text())
    assert runs["config"]["num_hidden_layers"] == 1  # half the tiny model's two layers
    assert [(r["row"], len(r["drawn"]), len(r["left"])) for r in runs["runs"]] == [
        ("20", 20, 28), ("20", 20, 28), ("in domain", 36, 12)
    ]  # fmt: skip
    assert benchmark.main(
        ["train", "--pack", str(pack), "--out", str(scores), "--passes", "40"]
    ) == 0  # fmt: skip
    written = json.loads((scores / "scores.json").read_text())
    assert [len(w[benchmark.FINE_TUNED]) for w in written] == [28, 28, 12]
    assert all(np.isfinite(w[benchmark.FROZEN]).all() for w in written)
    capsys.readouterr()
    benchmark.main(["report", "--pack", str(pack), "--scores", str(scores / "scores.json")])
    printed = capsys.readouterr().out
    assert "20 (20)" in printed and "in domain (36)" in printed
    assert benchmark.FINE_TUNED in printed
