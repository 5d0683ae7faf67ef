"""Several rounds of the debugging loop (issue 19): which seed's checkpoint the next round
continues from, and the stop rule (i.i.d. accuracy lost, nothing failing, nothing fixed, the
rounds asked for), on constructed rounds and on the tiny model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from testaug.adaptive.tree import ROOT, TestTree, TreeTest
from testaug.fixing.debugging.loop import fix_loop, stop_after
from testaug.fixing.debugging.records import (
    FIX_REPORT_FILE,
    FixRound,
    FixRoundConfig,
    SeedFix,
    StopRule,
    TopicFix,
    read_fix_round,
)
from testaug.fixing.debugging.rounds import NothingToFix, choose_kept
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.patching.report import Stat
from tests.adaptive.fix_fixtures import FIX, LABELS, iid_examples, sentiment_tree, shared_base

ONE = Stat(mean=0.0, std=0.0, n=1)


def _seed(seed: int, iid: float | None, tree_rate: float = 10.0) -> SeedFix:
    return SeedFix(
        seed=seed,
        model=f"hf:seed-{seed}",
        checkpoint=f"seed-{seed}",
        iid_examples=4,
        iid_after=iid,
        after={ROOT: tree_rate},
        fixed=(),
        broken=(),
    )


def _round(
    after: dict[str, float | None],
    *,
    fixed: tuple[str, ...] = ("/A",),
    iid_after: float | None = 0.9,
    topics_trained: tuple[str, ...] = (),
    before: dict[str, float] | None = None,
) -> FixRound:
    run = SeedFix(
        seed=0,
        model="hf:seed-0",
        checkpoint="seed-0",
        iid_examples=4,
        iid_after=iid_after,
        after=after,
        fixed=fixed,
        broken=(),
    )
    return FixRound(
        round=2,
        created_at=datetime.now(UTC),
        tree_file="tree.jsonl",
        start_checkpoint="start",
        checkpoint="seed-0",
        seeds=(0,),
        chain_seed=0,
        model_before="hf:start",
        model_after="hf:seed-0",
        topics_trained=topics_trained,
        config=FineTuneConfig(),
        failing_tests=4,
        fixing_examples=4,
        untrainable={},
        iid_examples=4,
        iid_eval_examples=10,
        iid_before=0.9,
        iid_after=None,
        topics=tuple(
            TopicFix(
                topic=topic,
                tests=10,
                before=rate,
                after=None,
                change=None,
                fixing_tests=0,
                status="failing",
            )
            for topic, rate in (before or {}).items()
        ),
        fixed=fixed,
        broken=(),
        fixed_count=ONE,
        broken_count=ONE,
        per_seed=(run,),
    )


def test_the_next_round_continues_from_the_seed_with_the_best_iid_accuracy():
    runs = [_seed(0, 0.8), _seed(1, 0.95), _seed(2, 0.9)]
    kept, why = choose_kept(runs, "best-iid")
    assert kept.seed == 1 and why == "the best i.i.d. accuracy of 3 seeds (95.0%)"
    kept, why = choose_kept(runs, "first")
    assert kept.seed == 0 and "first seed" in why
    assert choose_kept(runs[:1], "best-iid") == (runs[0], "the only seed")


def test_tied_iid_accuracy_keeps_the_lowest_failure_rate_then_seed_order():
    kept, why = choose_kept([_seed(3, 0.9, 30.0), _seed(4, 0.9, 20.0), _seed(5, 0.5)], "best-iid")
    assert kept.seed == 4 and "tied, the lowest failure rate on the tree (20.0%)" in why
    kept, why = choose_kept([_seed(7, 0.9, 20.0), _seed(6, 0.9, 20.0)], "best-iid")
    assert kept.seed == 7 and why.endswith("tied again, the first in seed order")


def test_a_run_stops_when_iid_accuracy_falls_beyond_the_tolerance():
    rule = StopRule(rounds=5, iid_tolerance=5.0)
    lost = stop_after(_round({ROOT: 40.0, "/A": 40.0}, iid_after=0.8), rule, done=1, start_iid=0.9)
    assert lost is not None and lost.reason == "iid-drop"
    assert "from 90.0% to 80.0%, more than 5 points" in lost.message
    kept = stop_after(_round({ROOT: 40.0, "/A": 40.0}, iid_after=0.86), rule, done=1, start_iid=0.9)
    assert kept is None  # 4 points lost: within the tolerance, and /A fixed something


def test_a_run_stops_when_no_topic_in_its_scope_fails_any_more():
    rule = StopRule(rounds=5)
    done = stop_after(_round({ROOT: 5.0, "/A": 0.0, "/B": 10.0}), rule, done=1, start_iid=0.9)
    assert done is not None and done.reason == "nothing-fails"
    outside = _round({ROOT: 30.0, "/A": 0.0, "/B": 60.0}, topics_trained=("/A",))
    scoped = stop_after(outside, rule, done=1, start_iid=0.9)
    assert scoped is not None and scoped.reason == "nothing-fails" and "within /A" in scoped.message
    assert (
        stop_after(outside.model_copy(update={"topics_trained": ()}), rule, done=1, start_iid=0.9)
        is None
    )


def test_a_run_stops_when_a_round_neither_fixes_nor_lowers_a_failing_topic_or_the_rounds_are_done():
    failing = {ROOT: 30.0, "/A": 0.0, "/B": 60.0}
    stuck = stop_after(_round(failing, fixed=()), StopRule(rounds=5), done=1, start_iid=0.9)
    assert stuck is not None and stuck.reason == "no-fix"
    assert (
        "fixed no failing topic" in stuck.message and "1 topic(s) still fail: /B" in stuck.message
    )
    progress = _round(failing, fixed=(), before={ROOT: 40.0, "/A": 0.0, "/B": 70.0})
    assert stop_after(progress, StopRule(rounds=5), done=1, start_iid=0.9) is None  # /B: -10
    slight = _round(failing, fixed=(), before={ROOT: 31.0, "/A": 0.0, "/B": 64.0})
    assert stop_after(slight, StopRule(rounds=5), done=1, start_iid=0.9).reason == "no-fix"  # type: ignore[union-attr]
    done = stop_after(_round(failing), StopRule(rounds=2), done=2, start_iid=0.9)
    assert done is not None and done.reason == "rounds" and done.message.startswith("2 rounds run")
    assert stop_after(_round(failing), StopRule(rounds=3), done=2, start_iid=0.9) is None


pytest.importorskip("torch")


def test_a_run_stops_early_when_its_topics_are_fixed_and_says_so_in_the_round(tmp_path):
    loop = fix_loop(
        sentiment_tree(),
        shared_base(),
        iid_examples(),
        tmp_path,
        FixRoundConfig(topics=("/Negation",), config=FIX, trainer="hard"),
        StopRule(rounds=3, iid_tolerance=100.0),
        task_labels=LABELS,
        tree_file="tree.jsonl",
    )
    (only,) = loop.rounds
    assert loop.stop.reason == "nothing-fails" and only.stop == loop.stop
    assert read_fix_round(tmp_path / "round-001" / FIX_REPORT_FILE) == only
    assert not (tmp_path / "round-002").exists()


def contradicting_tree() -> TestTree:
    """The sentiment tree and a topic no model can pass: one input, two opposite labels."""
    same = "the food was fine ."
    rows = [
        TreeTest(topic="/Contradiction", input=same, output="positive"),
        TreeTest(topic="/Contradiction", input=same, output="negative"),
    ]
    return TestTree(rows=(*sentiment_tree().rows, *rows))


def test_a_run_goes_on_from_the_kept_checkpoint_until_a_round_fixes_nothing(tmp_path):
    loop = fix_loop(
        contradicting_tree(),
        shared_base(),
        iid_examples(),
        tmp_path,
        FixRoundConfig(config=FIX, trainer="hard"),
        StopRule(rounds=3, iid_tolerance=100.0),
        task_labels=LABELS,
        tree_file="tree.jsonl",
    )
    first, second, *_ = loop.rounds
    assert "/Negation" in first.fixed and first.stop is None
    assert second.start_checkpoint == first.checkpoint and second.model_before == first.model_after
    assert loop.stop.reason in ("no-fix", "rounds") and loop.rounds[-1].stop == loop.stop
    assert [r.stop is None for r in loop.rounds] == [True] * (len(loop.rounds) - 1) + [False]
    on_disk = [
        read_fix_round(tmp_path / f"round-{r.round:03d}" / FIX_REPORT_FILE) for r in loop.rounds
    ]
    assert on_disk == list(loop.rounds)
    contradiction = loop.rounds[-1].topic("/Contradiction")
    assert contradiction is not None and contradiction.after is not None
    assert contradiction.after.mean >= 50.0  # one of its two tests always fails


def test_a_run_whose_first_round_has_nothing_to_train_raises_and_writes_nothing(tmp_path):
    with pytest.raises(NothingToFix, match="no failing test to train on"):
        fix_loop(
            sentiment_tree(),
            shared_base(),
            iid_examples(),
            tmp_path,
            FixRoundConfig(topics=("/Fairness",), config=FIX),
            StopRule(rounds=2),
            task_labels=LABELS,
            tree_file="tree.jsonl",
        )
    assert not list(tmp_path.glob("round-*"))
