"""The records of AdaTest's debugging loop: a fixing example, a topic before and
after a round, one seed's fine-tuning, a round as written to `round-NNN/fix_report.json`,
the settings a round runs with, and why a run of several rounds stopped; and the round
folders of a work folder."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field

from testaug.adaptive.retest import DEFAULT_THRESHOLD, TREE_REPORT_FILE, TopicChange
from testaug.core.jsonl import read_json
from testaug.core.records import Label, Record
from testaug.core.runs import write_json
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.patching.report import Stat
from testaug.fixing.significance import ALPHA, BOOTSTRAP_SAMPLES

FAIL_ABOVE = 20.0  # percent: AdaTest's "a topic fails" (AT-E3)
IID_TOLERANCE = 5.0  # points of i.i.d. accuracy a run of rounds may lose before it stops
FIX_REPORT_FILE = "fix_report.json"
BEFORE_REPORT_FILE = "tree_report.before.json"
AFTER_REPORT_FILE = TREE_REPORT_FILE  # "tree_report.json": `testaug report` picks it up
SCORED_TREE_FILE = "tree.scored.jsonl"
CHECKPOINT_DIR = "checkpoint"  # rounds written before every seed's checkpoint was kept
_ROUND = re.compile(r"^round-(\d{3,})$")

Trainer = Literal["behaviour", "hard"]
TopicStatus = Literal["fixed", "broken", "failing", "passing", "untested"]
ContinueFrom = Literal["best-iid", "first"]
StopReason = Literal["iid-drop", "nothing-fails", "no-fix", "nothing-to-train", "rounds"]


class FixExample(Record):
    """A fixing example made from a failing test: an input with the label to train (MFT), or
    an input with the original it must agree with (INV) or move against (DIR)."""

    kind: Literal["mft", "inv", "dir"] = "mft"
    text: str
    text_pair: str | None = None
    label: Label = ""  # mft: the target (several labels: BeLUGA's soft target)
    original: str = ""  # inv, dir: the other input of the test
    original_pair: str | None = None
    original_label: str = ""  # inv, dir: the start model's prediction for the original
    watched: str | None = None  # dir: the label whose probability may not move against
    direction: Literal["up", "down"] | None = None
    tolerance: float = 0.1
    test_id: str
    topic: str

    @property
    def description_id(self) -> str:
        """The example's environment for Group-DRO and the like: its topic."""
        return self.topic


class FixRoundConfig(Record):
    """How a round runs: the topics trained on (() = every failing test), the seeds, the
    fine-tuning, AdaTest's failing threshold, the re-test's threshold, the trainer, the
    scoring batch size, and which seed's checkpoint the next round continues from."""

    topics: tuple[str, ...] = ()
    seeds: tuple[int, ...] = Field(default=(0,), min_length=1)
    config: FineTuneConfig = FineTuneConfig()
    fail_above: float = Field(default=FAIL_ABOVE, ge=0, le=100)
    threshold: float = DEFAULT_THRESHOLD
    trainer: Trainer = "behaviour"
    batch_size: int = Field(default=32, ge=1)
    continue_from: ContinueFrom = "best-iid"


class StopRule(Record):
    """When a run of rounds stops: after `rounds` rounds, or earlier when the kept checkpoint
    fixed no failing topic, no topic fails any more, or its i.i.d. accuracy fell more than
    `iid_tolerance` points below the accuracy before the run's first round."""

    rounds: int = Field(default=1, ge=1)
    iid_tolerance: float = Field(default=IID_TOLERANCE, ge=0)


class LoopStop(Record):
    """Why a run of rounds stopped after this round (a code and the sentence shown)."""

    reason: StopReason
    message: str


class TopicFix(Record):
    """One topic before and after a round: failure rates in percent (after: over seeds)."""

    topic: str
    tests: int
    before: float | None
    after: Stat | None
    change: float | None  # after.mean - before, in points
    fixing_tests: int  # fixing examples trained from this topic and its subtopics
    status: TopicStatus
    p_value: float | None = None  # bootstrap of the change over the topic's tests (AT-E3)
    significant: bool | None = None  # Benjamini-Hochberg over the topics (not the root)


class SeedFix(Record):
    """One seed's fine-tuning: its checkpoint, i.i.d. accuracy, per-topic rates and labels."""

    seed: int
    model: str
    checkpoint: str | None = None  # None in rounds that kept only the first seed's model
    iid_examples: int
    iid_after: float | None
    after: dict[str, float | None]
    fixed: tuple[str, ...]
    broken: tuple[str, ...]


class FixRound(Record):
    """One round of the debugging loop, as written to `round-NNN/fix_report.json`."""

    round: int
    created_at: datetime
    tree_file: str
    start_checkpoint: str
    checkpoint: str  # the kept seed's fine-tuned model: the next round starts here
    seeds: tuple[int, ...]
    chain_seed: int  # the kept seed
    continue_from: ContinueFrom = "first"  # how the kept seed was chosen
    chain_reason: str = "the first seed"  # why, in words
    model_before: str
    model_after: str
    topics_trained: tuple[str, ...] = ()  # () means every failing test of the tree
    fail_above: float = FAIL_ABOVE
    config: FineTuneConfig
    trainer: Trainer = "behaviour"
    failing_tests: int  # tests failing the start model within the trained topics
    fixing_examples: int
    untrainable: dict[str, int]  # failing tests left out, by reason
    iid_examples: int  # sampled per seed, as many as fixing examples (1:1)
    iid_eval_examples: int
    iid_before: float | None
    iid_after: Stat | None
    topics: tuple[TopicFix, ...]  # the root "/" first
    fixed: tuple[str, ...]  # read from the mean rates, as printed
    broken: tuple[str, ...]
    fixed_count: Stat  # per seed
    broken_count: Stat
    per_seed: tuple[SeedFix, ...]
    rose: tuple[TopicChange, ...] = ()  # the re-test's changes on the kept checkpoint: topics
    # newly failing (from 0%) or worse by more than `threshold` points, whatever `fail_above`
    threshold: float = DEFAULT_THRESHOLD
    fdr: float = ALPHA  # Benjamini-Hochberg's level for `significant`
    bootstrap_samples: int = BOOTSTRAP_SAMPLES
    stop: LoopStop | None = None  # set when a run of rounds stopped after this one

    def topic(self, topic: str) -> TopicFix | None:
        """One topic's row (None when the tree has no such topic)."""
        return next((row for row in self.topics if row.topic == topic), None)

    def kept(self) -> SeedFix:
        """The run of the seed whose checkpoint the next round continues from."""
        return next(run for run in self.per_seed if run.seed == self.chain_seed)


class FixLoop(Record):
    """A run of one or more rounds in a work folder, and why it stopped."""

    work: str
    rounds: tuple[FixRound, ...]
    stop: LoopStop


def round_folder(work: Path, number: int) -> Path:
    """The folder of round `number`: `<work>/round-NNN`."""
    return Path(work) / f"round-{number:03d}"


def seed_folder(folder: Path, seed: int) -> Path:
    """Where a round keeps seed `seed`'s fine-tuned model: `round-NNN/seed-S`."""
    return Path(folder) / f"seed-{seed}"


def completed_rounds(work: Path) -> list[tuple[int, Path]]:
    """The rounds with a report in the work folder, by number."""
    found = []
    work = Path(work)
    if work.is_dir():
        for folder in work.iterdir():
            match = _ROUND.match(folder.name)
            if match and (folder / FIX_REPORT_FILE).is_file():
                found.append((int(match.group(1)), folder))
    return sorted(found)


def read_fix_round(path: Path | str) -> FixRound:
    """A round's report; InputError naming file and field."""
    return read_json(path, FixRound)


def write_fix_round(path: Path | str, report: FixRound) -> None:
    """Write a round's report as JSON, atomically."""
    write_json(Path(path), report.model_dump(mode="json"))


def last_round(work: Path) -> FixRound | None:
    """The latest round in the work folder (None before the first)."""
    rounds = completed_rounds(work)
    return read_fix_round(rounds[-1][1] / FIX_REPORT_FILE) if rounds else None
