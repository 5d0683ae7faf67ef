"""The report's section on one round of the debugging loop, from fix_report.json (as
`testaug tree fix` writes it into round-NNN/: a `FixRound`, rates in percent): per topic the
tests, the fixing examples trained from it and the failure rate before and after (mean ±
standard deviation over seeds), fixed topics in green and broken ones in red as the CLI
marks them; the fixed and broken lists, the i.i.d. accuracy before -> after, and a plot of
each topic's rate before and after; every seed's checkpoint with the one the next round
continues from and why, and why a run of rounds stopped after this one."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from testaug.adaptive.tree import ROOT
from testaug.fixing.debugging.records import FixRound, TopicFix
from testaug.fixing.debugging.topics import has_p_values, p_cell
from testaug.fixing.patching.report import Stat
from testaug.reports.blocks import Block, Heading, Image, Table, Text
from testaug.reports.plots import _png, _pyplot
from testaug.reports.tree import PLOTTED_TOPICS, short_label

FIXED_COLOUR, BROKEN_COLOUR, COLOUR, BEFORE_COLOUR = "#1e8449", "#c0392b", "#4c72b0", "#b0b0b0"
TONES = {"fixed": FIXED_COLOUR, "broken": BROKEN_COLOUR}


def fix_section(report: FixRound) -> list[Block]:
    """Heading, what was trained, the per-topic table, the fixed and broken topics, the
    i.i.d. accuracy, and the before/after plot."""
    seeds = len(report.seeds)
    left_out = ", ".join(f"{n:,} {reason}" for reason, n in report.untrainable.items())
    blocks: list[Block] = [
        Heading("Debugging round"),
        Text(
            f"Round {report.round} ({report.created_at:%Y-%m-%d %H:%M} UTC): "
            f"{report.model_before} fine-tuned ({report.trainer} losses, {seeds} "
            f"seed{'s' if seeds > 1 else ''}) into {report.checkpoint}, on "
            f"{report.fixing_examples:,} fixing examples from {report.failing_tests:,} failing "
            f"tests of {report.tree_file} and {report.iid_examples:,} i.i.d. examples"
            + (f" (left out: {left_out})" if left_out else "")
            + f"; a topic fails above {report.fail_above:g}%."
        ),
    ]
    tested = has_p_values(report)
    header = ["topic", "tests", "trained on", "before", "after", "change", "status"]
    caption = (
        "failure rates in %; after: mean ± standard deviation over seeds; change "
        "in points; fixed: failing before, not after; broken: the reverse"
    )
    if tested:
        header.insert(6, "p")
        caption += (
            f"; p: the change's bootstrap p-value over the topic's tests "
            f"({report.bootstrap_samples:,} samples), * significant at Benjamini–Hochberg "
            f"FDR {report.fdr:g}"
        )
    blocks.append(
        Table(
            header,
            [_row(row, tested) for row in report.topics],
            caption=caption,
            tones=[TONES.get(row.status) for row in report.topics],
        )
    )
    blocks.append(Text(f"Fixed {len(report.fixed)}: {', '.join(report.fixed) or 'none'}."))
    blocks.append(
        Text(
            f"Broken {len(report.broken)}: {', '.join(report.broken) or 'none'}.",
            notice=bool(report.broken),
        )
    )
    if seeds > 1:
        blocks.append(
            Text(
                f"Per seed: fixed {_stat(report.fixed_count, '')}, "
                f"broken {_stat(report.broken_count, '')} topics."
            )
        )
    blocks.extend(_seed_blocks(report))
    if report.rose:
        rose = ", ".join(
            f"{c.topic} ({c.kind}, {c.before:.1f}% -> {c.after:.1f}%)" for c in report.rose
        )
        blocks.append(
            Text(
                f"Rate rose on the kept checkpoint (from 0%, or by more than "
                f"{report.threshold:g} points): {rose}.",
                notice=True,
            )
        )
    before = "-" if report.iid_before is None else f"{100 * report.iid_before:.1f}%"
    blocks.append(
        Text(
            f"i.i.d. accuracy ({report.iid_eval_examples:,} examples): {before} -> "
            f"{_stat(report.iid_after, '%', 100.0)}"
        )
    )
    if report.stop is not None:
        blocks.append(
            Text(
                f"The run stopped after this round ({report.stop.reason}): {report.stop.message}.",
                notice=report.stop.reason == "iid-drop",
            )
        )
    topics = [row for row in report.topics if row.topic != ROOT]
    plotted = _plotted(topics)
    if plotted:
        png = before_after_png(
            {row.topic: row.before or 0.0 for row in plotted},
            {row.topic: row.after or Stat(mean=0.0, std=0.0, n=1) for row in plotted},
            fixed=report.fixed,
            broken=report.broken,
            fail_above=report.fail_above,
        )
        alt = "Failure rate per topic before and after the round"
        if len(plotted) < len(topics):
            alt += (
                f" ({len(plotted)} of {len(topics)} topics: fixed and broken ones, then the "
                "largest changes)"
            )
        blocks.append(Image(png, "fix_failure_rates.png", alt))
    return blocks


def _seed_blocks(report: FixRound) -> list[Block]:
    """Every seed's i.i.d. accuracy, fixed and broken counts and checkpoint (with several
    seeds), and the seed the next round continues from, with why."""
    blocks: list[Block] = []
    if len(report.seeds) > 1:
        rows = [
            [
                str(run.seed),
                "-" if run.iid_after is None else f"{100 * run.iid_after:.1f}",
                str(len(run.fixed)),
                str(len(run.broken)),
                run.checkpoint or "-",
                "kept" if run.seed == report.chain_seed else "",
            ]
            for run in report.per_seed
        ]
        blocks.append(
            Table(
                ["seed", "i.i.d. accuracy", "fixed", "broken", "checkpoint", ""],
                rows,
                caption="each seed's fine-tuning: i.i.d. accuracy in %, topics fixed and "
                "broken by its own rates",
            )
        )
    blocks.append(
        Text(
            f"The next round continues from seed {report.chain_seed} ({report.chain_reason}): "
            f"{report.checkpoint}."
        )
    )
    return blocks


def before_after_png(
    before: Mapping[str, float],
    after: Mapping[str, Stat],
    *,
    fixed: Collection[str] = (),
    broken: Collection[str] = (),
    fail_above: float | None = None,
    title: str = "",
) -> bytes:
    """Paired horizontal bars per topic, in the given order: the rate before (grey) and after
    (mean with the standard deviation as an error bar; fixed green, broken red), with the
    failing threshold as a dashed line."""
    plt = _pyplot()
    topics = list(before)
    height = max(2.8, 1.4 + 0.45 * len(topics))
    figure, axes = plt.subplots(figsize=(8, height), dpi=120)
    ys = range(len(topics))
    colours = [
        FIXED_COLOUR if t in fixed else BROKEN_COLOUR if t in broken else COLOUR for t in topics
    ]
    axes.barh([y - 0.2 for y in ys], [before[t] for t in topics], 0.4, color=BEFORE_COLOUR)
    axes.barh(
        [y + 0.2 for y in ys],
        [after[t].mean for t in topics],
        0.4,
        color=colours,
        xerr=[after[t].std for t in topics],
        error_kw={"elinewidth": 0.8, "capsize": 2},
    )
    if fail_above is not None:
        axes.axvline(fail_above, color="black", linestyle="--", linewidth=0.8)
    axes.set_yticks(list(ys))
    axes.set_yticklabels([short_label(topic) for topic in topics], fontsize=8)
    axes.set_ylim(len(topics) - 0.4, -0.6)
    axes.set_xlim(0, 100)
    axes.set_xlabel("failure rate (%)")
    axes.set_title(title or "Failure rate per topic, before and after")
    axes.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=BEFORE_COLOUR, label="before"), Patch(color=COLOUR, label="after")]
    if fixed:
        handles.append(Patch(color=FIXED_COLOUR, label="after: fixed"))
    if broken:
        handles.append(Patch(color=BROKEN_COLOUR, label="after: broken"))
    if fail_above is not None:
        handles.append(
            Line2D([], [], color="black", linestyle="--", label=f"fails above {fail_above:g}%")
        )
    axes.legend(
        handles=handles,
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.6 / (height - 1.0)),
        ncol=5,
        frameon=False,
    )
    return _png(figure)


def _row(row: TopicFix, tested: bool = False) -> list[str]:
    """A topic's cells: counts, rates before and after, change, p-value (when `tested`) and
    status."""
    return [
        row.topic,
        f"{row.tests:,}",
        f"{row.fixing_tests:,}",
        "-" if row.before is None else f"{row.before:.1f}",
        _stat(row.after, ""),
        "-" if row.change is None else f"{row.change:+.1f}",
        *([p_cell(row)] if tested else []),
        row.status,
    ]


def _stat(value: Stat | None, unit: str = "%", scale: float = 1.0) -> str:
    """ "12.5% ± 1.2" (the deviation only over several seeds), "-" without a value."""
    if value is None:
        return "-"
    text = f"{value.mean * scale:.1f}{unit}"
    return text + (f" ± {value.std * scale:.1f}" if value.n > 1 else "")


def _plotted(topics: Sequence[TopicFix]) -> list[TopicFix]:
    """The tested topics the plot shows, in tree order: all of them, or (when there are many)
    the fixed and broken ones and then those that changed most."""
    tested = [row for row in topics if row.before is not None and row.after is not None]
    if len(tested) <= PLOTTED_TOPICS:
        return tested
    ranked = sorted(
        tested,
        key=lambda r: (r.status not in TONES, -abs(r.change or 0.0), r.topic),
    )
    keep = {row.topic for row in ranked[:PLOTTED_TOPICS]}
    return [row for row in tested if row.topic in keep]
