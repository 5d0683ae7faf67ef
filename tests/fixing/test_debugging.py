"""AdaTest's debugging loop (AT-10): a round fine-tunes the tiny model on the negation tests
it fails mixed 1:1 with i.i.d. sentences, the negation topic's failure rate drops, every
topic is re-tested, and the next round starts from the round's checkpoint."""

from __future__ import annotations

import numpy as np
import pytest

from testaug.adaptive.retest import read_tree_report
from testaug.adaptive.tree import ROOT, TreeTest
from testaug.adaptive.tree_files import read_tree
from testaug.core.errors import InputError
from testaug.fixing.debugging.examples import fixing_examples, sample_iid, split_iid
from testaug.fixing.debugging.records import (
    AFTER_REPORT_FILE,
    BEFORE_REPORT_FILE,
    FIX_REPORT_FILE,
    SCORED_TREE_FILE,
    FixRoundConfig,
    read_fix_round,
)
from testaug.fixing.debugging.rounds import choose_kept, fix_round, round_start
from testaug.fixing.debugging.topics import is_failing, labelled, topic_status
from testaug.fixing.patching.protocol import IidExample
from testaug.steps.fix import FixConfig, fix_files
from tests.adaptive.fix_fixtures import (
    FIX,
    LABELS,
    iid_examples,
    sentiment_tree,
    shared_base,
    write_inputs,
)

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def base():
    return shared_base()


@pytest.fixture(scope="module")
def first(base, tmp_path_factory):
    """Round 1 on /Negation, two seeds (1, then 0), each keeping its checkpoint; the chain
    follows the first seed, 1, whose fine-tuning broke /Vocabulary/Positive (a shortcut the
    re-test catches), so round 2 has work to do."""
    work = tmp_path_factory.mktemp("fix-work")
    report = fix_round(
        sentiment_tree(),
        base,
        iid_examples(),
        work,
        FixRoundConfig(topics=("/Negation",), seeds=(1, 0), config=FIX, continue_from="first"),
        task_labels=LABELS,
        tree_file="tree.jsonl",
    )
    return work, report


def test_a_round_on_the_failing_topic_lowers_its_failure_rate(first):
    _, report = first
    negation = report.topic("/Negation/Negated positive")
    assert negation is not None and negation.after is not None
    assert negation.before == 100.0 and negation.fixing_tests == 15
    assert negation.after.mean <= 50.0 and negation.after.n == 2
    assert report.trainer == "behaviour"
    assert report.fixing_examples == report.failing_tests == 15
    assert report.iid_examples == 15  # 1:1 with the fixing examples
    assert report.seeds == (1, 0) and [run.seed for run in report.per_seed] == [1, 0]
    assert report.iid_before is not None and report.iid_after is not None
    assert report.iid_eval_examples == len(iid_examples()) // 2


def test_hard_labels_fix_the_topic_too(base, tmp_path):
    report = fix_round(
        sentiment_tree(),
        base,
        iid_examples(),
        tmp_path,
        FixRoundConfig(topics=("/Negation",), config=FIX, trainer="hard"),
        task_labels=LABELS,
        tree_file="tree.jsonl",
    )
    negation = report.topic("/Negation/Negated positive")
    assert negation is not None and negation.after is not None
    assert (negation.before, negation.after.mean) == (100.0, 0.0)
    assert report.fixed == ("/Negation", "/Negation/Negated positive")


def test_the_fixed_and_broken_counts_agree_with_the_per_topic_rates(first):
    _, report = first
    shown = {
        row.topic: (row.before, row.after.mean if row.after else None) for row in report.topics
    }
    fixed = [
        t
        for t, (b, a) in shown.items()
        if t != ROOT and b is not None and a is not None and b > 20.0 >= a
    ]
    broken = [
        t
        for t, (b, a) in shown.items()
        if t != ROOT and b is not None and a is not None and a > 20.0 >= b
    ]
    assert list(report.fixed) == fixed and list(report.broken) == broken
    assert [r.topic for r in report.topics if r.status == "fixed"] == fixed
    assert [r.topic for r in report.topics if r.status == "broken"] == broken
    for row in report.topics:
        if row.after is not None and row.before is not None:
            assert row.change == pytest.approx(row.after.mean - row.before)
    for run in report.per_seed:  # each seed's labels agree with that seed's rates
        before = {row.topic: row.before for row in report.topics}
        assert (run.fixed, run.broken) == labelled(before, run.after, report.fail_above)
    assert report.fixed_count.mean == np.mean([len(run.fixed) for run in report.per_seed])
    assert report.broken_count.mean == np.mean([len(run.broken) for run in report.per_seed])


def test_a_round_writes_its_checkpoints_reports_and_the_rescored_tree(first):
    work, report = first
    folder = work / "round-001"
    kept = folder / f"seed-{report.chain_seed}"
    assert report.round == 1 and report.checkpoint == str(kept)
    assert (kept / "config.json").is_file()
    assert read_fix_round(folder / FIX_REPORT_FILE) == report
    after = read_tree_report(folder / AFTER_REPORT_FILE)
    assert report.rose == after.changes  # newly failing / worse, on the kept checkpoint
    assert after.model == report.model_after == f"hf:{kept}"
    assert after.previous_model == report.model_before
    assert read_tree_report(folder / BEFORE_REPORT_FILE).model == report.model_before
    scored = read_tree(folder / SCORED_TREE_FILE)
    assert all(set(t.scores) == {report.model_before, report.model_after} for t in scored.tests)
    failing_after = [t for t in scored.tests if t.scores[report.model_after] > 0]
    assert len(failing_after) == after.overall.failing  # the next adapt round sees these


def test_every_seed_keeps_its_checkpoint_and_the_round_says_which_one_continues(first):
    work, report = first
    folder = work / "round-001"
    assert [run.checkpoint for run in report.per_seed] == [
        str(folder / "seed-1"),
        str(folder / "seed-0"),
    ]
    assert all((folder / f"seed-{seed}" / "config.json").is_file() for seed in (1, 0))
    assert (report.continue_from, report.chain_seed) == ("first", 1)
    assert report.chain_reason == "the first seed (--continue-from first)"
    assert report.kept().checkpoint == report.checkpoint
    kept, why = choose_kept(report.per_seed, "best-iid")
    assert kept.iid_after == max(run.iid_after or 0.0 for run in report.per_seed)
    assert why.startswith("the best i.i.d. accuracy of 2 seeds")


def test_the_next_round_starts_from_the_last_rounds_checkpoint(first, tmp_path):
    work, report = first
    tree, iid = write_inputs(tmp_path)
    start, number = round_start(work, model=None)
    assert (start, number) == (work / "round-001" / f"seed-{report.chain_seed}", 2)
    options = FixConfig(
        work=work, iid=iid, tree=tree, labels=",".join(LABELS), round=FixRoundConfig(config=FIX)
    )
    done = fix_files(options)
    (second,) = done.summary.loop.rounds
    assert done.path == work / "round-002" / "fix_report.json" and done.records == 1
    assert second.round == 2 and second.start_checkpoint == report.checkpoint
    assert second.model_before == report.model_after
    assert (work / "round-002" / "seed-0" / "config.json").is_file()
    before = {row.topic: row.before for row in second.topics}
    assert before == report.kept().after  # the chain follows the kept seed
    assert second.failing_tests > 0 and second.topics_trained == ()


def test_a_first_round_without_a_model_names_the_option(tmp_path):
    with pytest.raises(InputError, match="no round yet"):
        round_start(tmp_path / "empty", model=None)
    with pytest.raises(InputError, match="not a local Hugging Face model folder"):
        round_start(tmp_path / "empty", model="hf:nowhere/at/all")


def test_topic_labels_follow_adatest_twenty_percent_rule():
    assert not is_failing(20.0, 20.0) and is_failing(20.1, 20.0)
    assert topic_status(60.0, 20.0, 20.0) == "fixed"
    assert topic_status(10.0, 25.0, 20.0) == "broken"
    assert topic_status(30.0, 25.0, 20.0) == "failing"
    assert topic_status(0.0, 20.0, 20.0) == "passing"
    assert topic_status(None, 50.0, 20.0) == "untested"
    before = {ROOT: 50.0, "/A": 50.0, "/B": 0.0}
    assert labelled(before, {ROOT: 0.0, "/A": 0.0, "/B": 40.0}, 20.0) == (("/A",), ("/B",))


TESTS = [
    TreeTest(topic="/N", input="the food was not good .", output="negative"),
    TreeTest(
        topic="/N", input="the food was never good .", comparator="should not be", output="positive"
    ),
    TreeTest(
        topic="/I",
        input="the food was good .",
        comparator="should be the same as for",
        output="the food was awful .",
    ),
    TreeTest(
        topic="/D",
        input="the food was good .",
        comparator="should be no less than",
        output="the food was bad .",
        watched="positive",
    ),
]


def test_hard_fixing_examples_train_one_label_and_leave_dir_tests_out(base):
    from testaug.evaluation.models import load_model

    model = load_model(f"hf:{base}", task_labels=LABELS)
    examples, skipped = fixing_examples(TESTS, model, LABELS, trainer="hard")
    assert [(e.text, e.label) for e in examples] == [
        ("the food was not good .", "negative"),
        ("the food was never good .", "negative"),
        ("the food was good .", "negative"),  # the original's prediction
    ]
    assert skipped == {"DIR test (needs the behaviour losses)": 1}


def test_behaviour_fixing_examples_keep_soft_targets_inv_and_dir_tests(base):
    from testaug.fixing.behaviour.losses import mft_target
    from testaug.fixing.debugging.examples import behaviour_material

    model = load_model_for(base)
    examples, skipped = fixing_examples(TESTS, model, LABELS)
    assert skipped == {}
    assert [e.kind for e in examples] == ["mft", "mft", "inv", "dir"]
    not_positive = examples[1].label  # "should not be positive": negative or neutral
    assert mft_target(LABELS, not_positive) == pytest.approx([2 / 3, 1 / 3])
    inv, dir_ = examples[2], examples[3]
    assert (inv.original, inv.original_label) == ("the food was awful .", "negative")
    assert (dir_.watched, dir_.direction) == ("positive", "up")
    material = behaviour_material(examples, iid_examples()[:2])
    assert len(material.cases) == 2 and len(material.iid) == 2
    assert [p.test_type for p in material.perturbed] == ["INV", "DIR"]
    assert material.perturbed[0].original.text == "the food was awful ."


def load_model_for(base):
    from testaug.evaluation.models import load_model

    return load_model(f"hf:{base}", task_labels=LABELS)


def test_iid_samples_match_the_fixing_count_and_are_seeded():
    pool, held = split_iid(iid_examples())
    assert len(pool) + len(held) == len(iid_examples()) and not set(map(str, pool)) & set(
        map(str, held)
    )
    assert sample_iid(pool, 7, 3) == sample_iid(pool, 7, 3) != sample_iid(pool, 7, 4)
    assert len(sample_iid(pool, 7, 3)) == 7
    assert len(sample_iid([IidExample(text="a", label="positive")], 3, 0)) == 3


def test_a_suite_runs_failing_cases_become_a_tree_with_a_topic_per_description(tmp_path):
    from testaug.core.jsonl import write_jsonl
    from testaug.core.records import TestCase
    from testaug.steps.fix import read_tests

    cases = [
        TestCase(
            task="sentiment",
            capability="Negation",
            description_id="neg",
            description="A negated positive sentence.",
            text=f"the {noun} was not good .",
            label="negative",
        )
        for noun in ("food", "seat")
    ]
    write_jsonl(tmp_path / "failing.jsonl", cases)
    tree, source = read_tests(None, tmp_path / "failing.jsonl")
    assert source == tmp_path / "failing.jsonl" and len(tree.tests) == 2
    assert {t.comparator for t in tree.tests} == {"should be"}
    assert all(t.topic.startswith("/Negation/") for t in tree.tests)
    with pytest.raises(InputError, match="either a tree or test cases"):
        read_tests(None, None)
