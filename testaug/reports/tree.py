"""The report's section on a test tree re-tested on a model, from tree_report.json (as
`testaug tree retest` writes it: a `TreeReport`, rates in percent): topics with their
counts and failure rates, the topics that newly fail (or got worse) against the previous
report highlighted, and a bar plot of the failure rate per topic."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from testaug.adaptive.retest import TopicChange, TopicResult, TreeReport
from testaug.adaptive.tree import is_within
from testaug.reports.blocks import Block, Heading, Image, Table, Text
from testaug.reports.plots import _png, _pyplot

PLOTTED_TOPICS = 40
LABEL_WIDTH = 48
NEW_COLOUR, WORSE_COLOUR, COLOUR = "#c0392b", "#e67e22", "#4c72b0"


def tree_section(report: TreeReport) -> list[Block]:
    """Heading, summary, the per-topic table (changed topics marked), failing examples of
    the changed topics, and the failure-rate plot."""
    overall = report.overall
    changes = {change.topic: change for change in report.changes}
    topics = [result for result in report.topics if result.topic != "/"]
    summary = (
        f"{report.model} on the tree {report.tree_file} ({report.created_at:%Y-%m-%d %H:%M} UTC): "
        f"{overall.tests:,} tests in {len(topics):,} topics, {overall.failing:,} failing"
        f"{_rate_words(overall.failure_rate)}."
    )
    blocks: list[Block] = [Heading("Test tree"), Text(summary)]
    if report.previous_model is not None:
        newly = sum(change.kind == "newly failing" for change in report.changes)
        worse = len(report.changes) - newly
        when = report.previous_created_at
        since = f", {when:%Y-%m-%d %H:%M} UTC" if when is not None else ""
        blocks.append(
            Text(
                f"Against the previous report ({report.previous_model}{since}): {newly} "
                f"topic(s) newly failing, {worse} worse by more than {report.threshold:g} "
                "points.",
                notice=bool(report.changes),
            )
        )
    rows = [_row(result) for result in report.topics]
    marks = [_mark(changes.get(result.topic)) for result in report.topics]
    blocks.append(
        Table(
            ["topic", "tests", "failing", "failure rate", "directly at the topic"],
            rows,
            caption="counts include subtopics; failure rates in % of the tests that count",
            marks=marks,
        )
    )
    examples = [
        [topic, "; ".join(_examples(report, topic))]
        for topic in _deepest(list(changes))
        if _examples(report, topic)
    ]
    if examples:
        blocks.append(
            Table(["topic", "failing tests (worst first)"], examples, caption="what now fails")
        )
    rates = {result.topic: result.failure_rate for result in topics}
    if any(rate is not None for rate in rates.values()):
        shown = _plotted(topics, changes)
        png = topic_rates_png(
            {topic: rates[topic] or 0.0 for topic in shown},
            newly={t for t, c in changes.items() if c.kind == "newly failing"},
            worse={t for t, c in changes.items() if c.kind == "worse"},
            previous={t: c.before for t, c in changes.items()},
        )
        alt = "Failure rate per topic"
        if len(shown) < len(topics):
            alt += f" ({len(shown)} of {len(topics)} topics: changed ones, then the highest)"
        blocks.append(Image(png, "tree_failure_rates.png", alt))
    return blocks


def topic_rates_png(
    rates: Mapping[str, float],
    *,
    newly: Collection[str] = (),
    worse: Collection[str] = (),
    previous: Mapping[str, float] | None = None,
    title: str = "",
) -> bytes:
    """Horizontal bars: failure rate (%) per topic, in the given order; newly failing topics in
    red, worse ones in orange, the previous rate of a changed topic as a black tick."""
    plt = _pyplot()
    topics = list(rates)
    height = max(2.8, 1.4 + 0.3 * len(topics))
    figure, axes = plt.subplots(figsize=(8, height), dpi=120)
    colours = [NEW_COLOUR if t in newly else WORSE_COLOUR if t in worse else COLOUR for t in topics]
    axes.barh(range(len(topics)), [rates[t] for t in topics], color=colours)
    before = previous or {}
    marked = [(i, before[t]) for i, t in enumerate(topics) if t in before]
    if marked:
        axes.scatter(
            [value for _, value in marked],
            [i for i, _ in marked],
            marker="|",
            s=200,
            color="black",
            label="previous rate",
            zorder=3,
        )
    axes.set_yticks(range(len(topics)))
    axes.set_yticklabels([short_label(topic) for topic in topics], fontsize=8)
    axes.set_ylim(len(topics) - 0.4, -0.6)  # the first topic at the top, no empty rows
    axes.set_xlim(0, 100)
    axes.set_xlabel("failure rate (%)")
    axes.set_title(title or "Failure rate per topic")
    axes.grid(axis="x", alpha=0.3)
    from matplotlib.patches import Patch

    handles = [Patch(color=COLOUR, label="topic")]
    if newly:
        handles.append(Patch(color=NEW_COLOUR, label="newly failing"))
    if worse:
        handles.append(Patch(color=WORSE_COLOUR, label="worse"))
    extra, _ = axes.get_legend_handles_labels()
    axes.legend(
        handles=[*handles, *extra],
        fontsize=8,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.6 / (height - 1.0)),  # under the axis label
        ncol=4,
        frameon=False,
    )
    return _png(figure)


def short_label(topic: str, width: int = LABEL_WIDTH) -> str:
    """A topic path cut in the middle to at most `width` characters (its start and its end,
    where descriptions differ, stay)."""
    if len(topic) <= width:
        return topic
    head = (width - 1) // 2
    return topic[:head] + "…" + topic[len(topic) - (width - 1 - head) :]


def _row(result: TopicResult) -> list[str]:
    """A topic's cells: counts, rate, and its direct tests."""
    direct = (
        f"{result.direct_failing:,} of {result.direct_tests:,}"
        f"{_rate_words(result.direct_failure_rate)}"
        if result.direct_tests
        else ""
    )
    rate = "" if result.failure_rate is None else f"{result.failure_rate:.1f}"
    return [result.topic, f"{result.tests:,}", f"{result.failing:,}", rate, direct]


def _mark(change: TopicChange | None) -> str | None:
    """A changed topic's mark."""
    if change is None:
        return None
    if change.kind == "newly failing":
        return "newly failing"
    return f"worse: {change.before:.1f} -> {change.after:.1f}"


def _rate_words(rate: float | None) -> str:
    """ " (12.5%)" for a rate, nothing without one."""
    return "" if rate is None else f" ({rate:.1f}%)"


def _examples(report: TreeReport, topic: str) -> Sequence[str]:
    """The failing inputs the report kept for a topic."""
    result = report.topic(topic)
    return result.examples if result is not None else ()


def _deepest(topics: Sequence[str]) -> list[str]:
    """The topics with no other of them below (their failures are their ancestors' too)."""
    return [t for t in topics if not any(o != t and is_within(o, t) for o in topics)]


def _plotted(topics: Sequence[TopicResult], changes: Mapping[str, TopicChange]) -> list[str]:
    """Which topics the plot shows, in tree order: all of them, or (when there are many) the
    changed ones and then those failing most."""
    if len(topics) <= PLOTTED_TOPICS:
        return [result.topic for result in topics]
    ranked = sorted(
        topics, key=lambda r: (r.topic not in changes, -(r.failure_rate or 0.0), r.topic)
    )
    keep = {result.topic for result in ranked[:PLOTTED_TOPICS]}
    return [result.topic for result in topics if result.topic in keep]
