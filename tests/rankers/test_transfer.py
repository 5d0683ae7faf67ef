"""How the triage transfers (rankers/adaptation/transfer.py) and benchmarks/triage.py, on a tiny
labelled set with a TF-IDF ensemble: seconds, no encoder, no hub."""

from __future__ import annotations

import json

import pytest

from rankers.adaptation.groups import AdaptationConfig
from rankers.adaptation.transfer import (
    Trainings,
    acceptance_on_test,
    bootstrap_share,
    by_source,
    held_out,
    in_domain,
    people_annotations,
    prompt_subset,
    source_of,
    training_time,
)
from rankers.calibration import RULE
from rankers.ensemble import EnsembleConfig
from rankers.evaluation.labelling_order import ORDERS, labelling_loop
from rankers.members.lexical import LexicalConfig
from testaug.core.jsonl import write_jsonl
from testaug.core.records import Candidate, LabelledCandidate
from testaug.review.verdicts import decide
from tests.benchmark_scripts import load_benchmark

CONFIG = EnsembleConfig(
    name="tiny",
    members=(LexicalConfig(name="tfidf", min_count=1),),
    folds=3,
    min_group=10,
    adaptation=AdaptationConfig(enabled=False),  # no encoder: the loop's mechanics only
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

    trained = trainings.count
    for order in ORDERS:
        points, last = labelling_loop(
            items, "gen-a", rankings["gen-a"], trainings, order=order, sizes=[6, 12], seed=0,
            calibration_size=6,
        )  # fmt: skip
        assert [p.labels for p in points] == [6, 12] and {p.order for p in points} == {order}
        for point in points:
            assert point.ranked == 30 - point.labels  # the rest of gen-a's candidates
            assert point.oracle_effort <= point.effort <= 1.0
        assert last is not None and len(last.reranked) == 18
    assert trainings.count == trained + 2 * len(ORDERS)  # one retraining after each batch
    trained = trainings.count

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


def test_the_benchmark_script_prints_every_section_and_writes_its_numbers(tmp_path, capsys):
    data = tmp_path / "validity"
    data.mkdir()
    (data / "train").mkdir(parents=True, exist_ok=True)
    write_jsonl(data / "train" / "part-1.jsonl", [*labelled("gen-a", 8), *labelled(RULE, 14)])
    write_jsonl(
        data / "test.jsonl",
        [*labelled("gen-a", 3, split="t"), *labelled("gen-b", 6), *labelled(RULE, 6, split="t")],
    )
    config = tmp_path / "tiny.yaml"
    config.write_text(
        "name: tiny\nmin_group: 10\nadaptation: {enabled: false}\n"
        "members:\n  - {name: tfidf, kind: lexical, min_count: 1}\n"
    )
    out = tmp_path / "triage.json"
    benchmark = load_benchmark("triage")
    code = benchmark.main(
        ["--data", str(data), "--config", str(config), "--json", str(out), "--sizes", "6",
         "--seeds", "0", "--targets", "gen-b", "--resamples", "100"]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code in (0, 1)
    for title in ("held-out source", "labelling a held-out generator", "acceptance at precision",
                  "own random labels", "training time"):  # fmt: skip
        assert title in printed
    assert "targets met" in printed
    summary = json.loads(out.read_text())
    assert {row["source"] for row in summary["held_out"]} == {"gen-a", "gen-b", RULE}
    assert {(p["source"], p["order"]) for p in summary["labelling_loop"]} == {
        ("gen-b", order) for order in ("selected", "ranked", "random")
    }
    assert set(summary["plain_borda_gap_closed"]) == {"gen-b"}
    assert [r["source"] for r in summary["own_acceptance"]] == ["gen-b"]
    assert set(summary["in_domain_gap_closed"]) == {"gen-a", "gen-b", RULE}
    assert all(one["candidates"] == summary["n"] for one in summary["training_time"])
    assert summary["checks"] and all("measured" in check for check in summary["checks"])
    assert code == (0 if all(c["passed"] is True for c in summary["checks"]) else 1)
