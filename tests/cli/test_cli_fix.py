"""`testaug fix` end to end in process on the tiny model: the per-topic table, the fixed and
broken lines that agree with it, the i.i.d. accuracy, and the files of the round."""

from __future__ import annotations

import re

import pytest

from testaug.fixing.debugging.records import FIX_REPORT_FILE, SCORED_TREE_FILE, read_fix_round
from tests.adaptive.fix_fixtures import FIX, shared_base, write_inputs
from tests.cli_runner import run_testaug

pytest.importorskip("torch")

ROW = re.compile(r"^│\s*(/\S*(?: \S+)*)\s*│.*?│\s*([\d.]+)%\s*│\s*([\d.]+)%")


def fix_args(work, tree, iid, *extra):
    return [
        "fix",
        "--work", str(work),
        "--tree", str(tree),
        "--iid", str(iid),
        "--labels", "negative,positive",
        "--epochs", str(FIX.epochs),
        "--learning-rate", str(FIX.learning_rate),
        *extra,
    ]  # fmt: skip


def printed_rates(stdout: str) -> dict[str, tuple[float, float]]:
    """Each table row's topic with its before and after rates, as printed."""
    rows = {}
    for line in stdout.splitlines():
        match = ROW.match(line)
        if match:
            rows[match.group(1).strip()] = (float(match.group(2)), float(match.group(3)))
    return rows


def listed(stdout: str, word: str) -> list[str]:
    """The topics a "fixed N: a, b" or "broken N: ..." line names."""
    line = next(line for line in stdout.splitlines() if line.startswith(f"{word} "))
    count, _, names = line.partition(": ")
    topics = [] if names == "none" else names.split(", ")
    assert int(count.split()[1]) == len(topics)
    return topics


def test_fix_prints_fixed_and_broken_topics_that_agree_with_the_rates_it_prints(tmp_path):
    base = shared_base()
    tree, iid = write_inputs(tmp_path)
    work = tmp_path / "work"
    result = run_testaug(
        tmp_path,
        *fix_args(
            work, tree, iid, "--start-model", f"hf:{base}", "--topic", "/Negation", "--seeds", "2"
        ),
        env={"COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr
    rates = printed_rates(result.stdout)
    assert {"/", "/Negation", "/Negation/Negated positive", "/Vocabulary"} <= set(rates)
    fixed = [t for t, (b, a) in rates.items() if t != "/" and b > 20.0 >= a]
    broken = [t for t, (b, a) in rates.items() if t != "/" and a > 20.0 >= b]
    assert listed(result.stdout, "fixed") == fixed and listed(result.stdout, "broken") == broken
    assert rates["/Negation/Negated positive"][1] < rates["/Negation/Negated positive"][0]
    assert "trained (behaviour) on 15 of 15 failing tests + 15 i.i.d. examples" in result.stdout
    assert "i.i.d. accuracy (20 examples): 100.0% ->" in result.stdout
    assert "per seed: fixed" in result.stdout
    report = read_fix_round(work / "round-001" / FIX_REPORT_FILE)
    assert (list(report.fixed), list(report.broken)) == (fixed, broken)
    assert str(work / "round-001" / SCORED_TREE_FILE) in result.stdout.replace("\n", "")
    assert f"kept seed {report.chain_seed} (the best i.i.d. accuracy of 2 seeds" in result.stdout
    assert all(f"  seed {seed}: i.i.d. " in result.stdout for seed in (0, 1))
    assert report.stop is not None
    assert f"stopped after round 1 ({report.stop.reason}): " in result.stdout

    again = run_testaug(
        tmp_path, *fix_args(work, tree, iid, "--rounds", "2"), env={"COLUMNS": "200"}
    )
    assert again.returncode == 0 or "no failing test to train on" in again.stderr.replace(
        "\n", " "
    ), again.stderr
    if again.returncode == 0:
        second = read_fix_round(work / "round-002" / FIX_REPORT_FILE)
        assert second.start_checkpoint == report.checkpoint
        last = max(work.glob("round-*/fix_report.json"))
        stop = read_fix_round(last).stop
        assert stop is not None and stop.message.split()[0] in again.stdout


def test_fix_without_a_model_or_earlier_round_is_one_line_naming_the_option(tmp_path):
    tree, iid = write_inputs(tmp_path)
    result = run_testaug(tmp_path, *fix_args(tmp_path / "work", tree, iid))
    assert result.returncode == 1
    assert "--start-model" in result.stderr and "Traceback" not in result.stderr


def test_fix_with_an_unknown_checkpoint_choice_names_the_option(tmp_path):
    tree, iid = write_inputs(tmp_path)
    result = run_testaug(
        tmp_path, *fix_args(tmp_path / "work", tree, iid, "--continue-from", "last")
    )
    assert result.returncode == 1
    assert "--continue-from" in result.stderr and "Traceback" not in result.stderr
