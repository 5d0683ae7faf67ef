"""How the triage transfers (rankers/transfer.py) and benchmarks/triage.py, on a tiny
labelled set with a TF-IDF ensemble: seconds, no encoder, no hub."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from rankers.calibration import RULE
from rankers.ensemble import EnsembleConfig
from rankers.lexical import LexicalConfig
from rankers.transfer import (
    Trainings,
    acceptance_on_test,
    bootstrap_share,
    by_source,
    held_out,
    in_domain,
    learning_curve,
    people_annotations,
    prompt_samples,
    prompt_subset,
    source_of,
    training_time,
)
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Candidate, LabelledCandidate
from testaug.review.verdicts import decide

CONFIG = EnsembleConfig(
    name="tiny", members=(LexicalConfig(name="tfidf", min_count=1),), folds=3, min_group=10
)
NOUNS = ["view", "staff", "room", "pilot", "food", "seat", "crew", "flight"]


def labelled(model: str, prompts: int, per_prompt: int = 3, split: str = "") -> list:
    """Candidates of one source: valid ones say 'great', invalid ones 'awful'; a third of
    each prompt's candidates is invalid, and more so for the generators."""
    backend = "rule" if model == RULE else "local"
    name = "hard-cases:label" if model == RULE else model
    items = []
    for p in range(prompts):
        for i in range(per_prompt):
            valid = (i + p) % 3 != 0 if model == RULE else (i + p) % 3 == 0
            word = "great" if valid else "awful"
            text = f"The {NOUNS[(p + i) % len(NOUNS)]} {split}{model} {p}-{i} was {word}."
            candidate = Candidate(
                task="sentiment",
                capability="Vocabulary",
                description_id="d",
                description="A positive sentence.",
                text=text,
                label="positive",
                prompt_id=f"{split}{model}-{p}",
                seed_case_ids=(),
                backend=backend,
                model=name,
            )
            reason = None if valid else "label"
            items.append(LabelledCandidate(candidate=candidate, valid=valid, reason=reason))
    return items


@pytest.fixture(scope="module")
def items():
    return [*labelled("gen-a", 10), *labelled("gen-b", 8), *labelled(RULE, 8)]


def test_sources_are_the_generator_models_and_rule(items):
    assert list(by_source(items)) == ["gen-a", "gen-b", RULE]
    assert source_of(items[-1]) == RULE


def test_prompt_samples_take_whole_prompts_nested_and_seeded(items):
    held = by_source(items)["gen-a"]
    samples = prompt_samples(held, [0, 5, 10, 100], seed=3)
    assert samples[0] == []
    assert len(samples[5]) == 6 and len(samples[10]) == 9  # closest whole prompts of 3
    assert len(samples[100]) == len(held)
    prompts = [{i.candidate.prompt_id for i in samples[n]} for n in (5, 10, 100)]
    assert prompts[0] <= prompts[1] <= prompts[2]
    for n in (5, 10):
        chosen = {i.candidate.prompt_id for i in samples[n]}
        whole = [i for i in held if i.candidate.prompt_id in chosen]
        assert len(whole) == len(samples[n])
    assert prompt_samples(held, [10], seed=3) == {10: samples[10]}
    assert prompt_samples(held, [10], seed=4) != {10: samples[10]}


def test_people_annotations_become_peoples_verdicts(items):
    sample = by_source(items)["gen-a"][:6]
    candidates = {i.candidate.id: i.candidate for i in sample}
    verdicts = decide(people_annotations(sample), candidates)
    for item in sample:
        verdict = verdicts[item.candidate.id]
        assert verdict.decided_by == "people"
        assert (verdict.status == "accepted") == item.valid


def test_held_out_curve_and_acceptance_measure_what_they_say(items, tmp_path):
    lines: list[str] = []
    trainings = Trainings(CONFIG, tmp_path, lines.append)
    timed = training_time(items, trainings)
    assert timed.candidates == len(items) and timed.seconds > 0

    rows, rankings = held_out(items, trainings)
    assert [row.source for row in rows] == ["gen-a", "gen-b", RULE]
    for row in rows:
        assert row.n + row.trained_on == len(items)
        assert row.oracle_effort <= row.effort <= 1.0
        assert {r.candidate.model for r in rankings[row.source]} <= {row.source, "hard-cases:label"}
    assert rows[0].gap_closed > 0.5  # 'awful' means invalid in every source

    points = learning_curve(
        items, "gen-a", rankings["gen-a"], trainings, sizes=[0, 6, 30], seeds=[0, 1]
    )
    # n = 0 reuses the held-out ranking; n = 30 would leave nothing to rank
    assert [(p.seed, p.asked) for p in points] == [(0, 0), (0, 6), (1, 0), (1, 6)]
    for point in points:
        assert point.ranked == 30 - point.labelled
        if point.asked == 0:
            assert point.gap_closed == point.gap_closed_without_labels == rows[0].gap_closed
    trained = trainings.count
    assert trained == 1 + 3 + 2  # timed, held out, one per seed with labels

    train, test = items[::2], items[1::2]
    domain = in_domain(train, test, trainings)
    assert set(domain) == {"gen-a", "gen-b", RULE}
    result = acceptance_on_test(train, test, trainings, resamples=200, seed=0)
    assert trainings.count == trained + 1  # the train split's ensemble serves both
    assert result.tested_on == len(test) and 0.0 <= result.ece <= 1.0
    for group in result.groups:
        if group.accepted:
            assert group.precision == group.valid / group.accepted
            assert 0.0 <= group.share_at_precision <= 1.0
        else:
            assert group.precision is None and group.share_at_precision is None
    assert sum(g.candidates for g in result.groups) == len(test)
    assert any(line.startswith("training ") for line in lines)


def test_acceptance_counts_what_the_rule_accepts_on_the_test_split(tmp_path):
    trainings = Trainings(CONFIG, tmp_path, lambda line: None)
    train, test = labelled(RULE, 40), labelled(RULE, 10, split="t")
    result = acceptance_on_test(train, test, trainings, resamples=100, seed=0)
    (group,) = result.groups
    assert group.group == RULE and group.threshold is not None
    assert group.oof_lower_bound is not None and group.oof_lower_bound >= 0.9
    assert 0 < group.accepted <= sum(item.valid for item in test)
    assert group.valid == group.accepted and group.precision == 1.0  # 'awful' is invalid
    assert group.share_at_precision == 1.0


def test_the_same_training_set_is_trained_once(items, tmp_path):
    trainings = Trainings(CONFIG, tmp_path, lambda line: None)
    first = trainings.ensemble(items, "once")
    again = trainings.ensemble(list(items), "again")
    assert trainings.count == 1 and again.version == first.version


def test_bootstrap_share_counts_resamples_at_the_precision():
    assert bootstrap_share([True] * 20, 0.9, 100, seed=0) == 1.0
    assert bootstrap_share([False] * 20, 0.9, 100, seed=0) == 0.0
    mixed = [True] * 9 + [False]
    share = bootstrap_share(mixed, 0.9, 1000, seed=1)
    assert 0.4 < share < 0.9 and share == bootstrap_share(mixed, 0.9, 1000, seed=1)
    with pytest.raises(ValueError):
        bootstrap_share([], 0.9, 10, seed=0)


def test_prompt_subset_keeps_whole_prompts_of_every_source(items):
    subset = prompt_subset(items, 0.3, seed=0)
    assert set(by_source(subset)) == set(by_source(items))
    kept = {i.candidate.prompt_id for i in subset}
    assert subset == [i for i in items if i.candidate.prompt_id in kept]


def load_benchmark():
    path = Path(__file__).parents[2] / "benchmarks" / "triage.py"
    spec = importlib.util.spec_from_file_location("triage_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path_before = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path_before
    return module


def test_the_benchmark_script_prints_every_section_and_writes_its_numbers(tmp_path, capsys):
    data = tmp_path / "validity"
    data.mkdir()
    write_jsonl(data / "train.jsonl", [*labelled("gen-a", 8), *labelled(RULE, 14)])
    write_jsonl(
        data / "test.jsonl",
        [*labelled("gen-a", 3, split="t"), *labelled("gen-b", 6), *labelled(RULE, 6, split="t")],
    )
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "name: tiny\nmin_group: 10\nmembers:\n  - {name: tfidf, kind: lexical, min_count: 1}\n"
    )
    out = tmp_path / "triage.json"
    benchmark = load_benchmark()
    code = benchmark.main(
        ["--data", str(data), "--config", str(config), "--json", str(out), "--sizes", "0", "6",
         "--seeds", "0", "--people-weight", "5", "--resamples", "100"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 1)
    for title in ("held-out source", "active loop", "acceptance at precision", "training time"):
        assert title in printed
    assert "targets met" in printed
    summary = json.loads(out.read_text())
    assert {row["source"] for row in summary["held_out"]} == {"gen-a", "gen-b", RULE}
    assert {p["people_weight"] for p in summary["learning_curve"]} == {1.0, 5.0}
    assert set(summary["in_domain_gap_closed"]) == {"gen-a", "gen-b", RULE}
    assert summary["training_time"]["candidates"] == summary["n"]
    assert summary["checks"] and all("measured" in check for check in summary["checks"])
    assert code == (0 if all(c["passed"] is True for c in summary["checks"]) else 1)
