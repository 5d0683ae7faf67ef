"""Several rounds of AdaTest's debugging loop with a stop rule.

A run goes round after round, each from the last round's kept checkpoint, and stops after
`StopRule.rounds` rounds or earlier, checked after each round on the kept checkpoint (where
the next round would start), in this order:

1. "iid-drop": its i.i.d. accuracy fell more than `iid_tolerance` points below the accuracy
   before the run's first round (the fix costs the task too much);
2. "nothing-fails": no topic (within the trained topics, when given) fails any more;
3. "no-fix": the round fixed no failing topic, nor lowered the rate of one that still fails
   by more than the re-test's threshold (5 points): more rounds would not help either;
4. "rounds": as many rounds as asked for.

A round that finds no failing test it can train on ("nothing-to-train") stops a run after
its first round; a run's first round raises it. The round the run stopped after records why
(`FixRound.stop`, rewritten into its fix_report.json); every round keeps its folder,
checkpoints and report, so a later run continues from the last one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from testaug.adaptive.tree import ROOT, TestTree
from testaug.fixing.debugging.examples import Progress
from testaug.fixing.debugging.records import (
    FIX_REPORT_FILE,
    FixLoop,
    FixRound,
    FixRoundConfig,
    LoopStop,
    StopRule,
    round_folder,
    write_fix_round,
)
from testaug.fixing.debugging.rounds import NothingToFix, fix_round
from testaug.fixing.debugging.topics import failing_topics, is_failing
from testaug.fixing.patching.protocol import IidExample


def _listed(topics: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(topics[:most])
    return shown + (f" and {len(topics) - most} more" if len(topics) > most else "")


def lowered(report: FixRound) -> list[str]:
    """The topics (not the root) that failed before the round and whose rate on the kept
    checkpoint fell by more than the re-test's threshold: progress short of a fix."""
    after = report.kept().after
    return [
        row.topic
        for row in report.topics
        if row.topic != ROOT
        and is_failing(row.before, report.fail_above)
        and row.before is not None
        and after.get(row.topic) is not None
        and row.before - after[row.topic] > report.threshold  # type: ignore[operator]
    ]


def stop_after(
    report: FixRound, rule: StopRule, *, done: int, start_iid: float | None
) -> LoopStop | None:
    """Why a run stops after `report`, its `done`-th round (None: go on), read on the kept
    checkpoint; `start_iid` is the i.i.d. accuracy before the run's first round."""
    kept = report.kept()
    if start_iid is not None and kept.iid_after is not None:
        drop = 100 * (start_iid - kept.iid_after)
        if drop > rule.iid_tolerance:
            return LoopStop(
                reason="iid-drop",
                message=f"i.i.d. accuracy of the kept checkpoint fell from {100 * start_iid:.1f}% "
                f"to {100 * kept.iid_after:.1f}%, more than {rule.iid_tolerance:g} points",
            )
    failing = failing_topics(kept.after, report.fail_above, report.topics_trained)
    scope = f" within {', '.join(report.topics_trained)}" if report.topics_trained else ""
    if not failing:
        return LoopStop(
            reason="nothing-fails",
            message=f"no topic{scope} fails above {report.fail_above:g}% on the kept checkpoint",
        )
    still = f"{len(failing)} topic(s){scope} still fail: {_listed(failing)}"
    if not kept.fixed and not lowered(report):
        return LoopStop(
            reason="no-fix",
            message=f"round {report.round} fixed no failing topic on the kept checkpoint and "
            f"lowered none by more than {report.threshold:g} points; {still}",
        )
    if done >= rule.rounds:
        return LoopStop(
            reason="rounds",
            message=f"{done} round{'s' if done > 1 else ''} run, as asked; {still}",
        )
    return None


def _with_stop(work: Path, report: FixRound, stop: LoopStop) -> FixRound:
    """The round with why the run stopped after it, rewritten into its fix_report.json."""
    stopped = report.model_copy(update={"stop": stop})
    write_fix_round(round_folder(work, report.round) / FIX_REPORT_FILE, stopped)
    return stopped


def fix_loop(
    tree: TestTree,
    start: Path,
    iid: Sequence[IidExample],
    work: Path,
    settings: FixRoundConfig | None = None,
    rule: StopRule | None = None,
    *,
    task_labels: Sequence[str],
    tree_file: Path | str,
    iid_eval: Sequence[IidExample] | None = None,
    number: int | None = None,
    on_progress: Progress | None = None,
    on_round: Callable[[FixRound], None] | None = None,
) -> FixLoop:
    """Rounds from checkpoint `start` (round `number`, default: the next in `work`) until the
    stop rule says so (see the module docstring); `on_round` hears each finished round."""
    rule = rule or StopRule()
    rounds: list[FixRound] = []
    start_iid: float | None = None
    while True:
        try:
            report = fix_round(
                tree,
                start,
                iid,
                work,
                settings,
                task_labels=task_labels,
                tree_file=tree_file,
                iid_eval=iid_eval,
                number=number,
                on_progress=on_progress,
            )
        except NothingToFix as error:
            if not rounds:
                raise
            stop = LoopStop(reason="nothing-to-train", message=str(error))
            rounds[-1] = _with_stop(work, rounds[-1], stop)
            break
        if not rounds:
            start_iid = report.iid_before
        stop = stop_after(report, rule, done=len(rounds) + 1, start_iid=start_iid)
        if stop is not None:
            report = _with_stop(work, report, stop)
        rounds.append(report)
        if on_round is not None:
            on_round(report)
        if stop is not None:
            break
        start, number = Path(report.checkpoint), report.round + 1
    assert rounds[-1].stop is not None
    return FixLoop(work=str(work), rounds=tuple(rounds), stop=rounds[-1].stop)
