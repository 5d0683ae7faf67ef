"""The report's section on BeLUGA's cross-functional analysis, from crossfunctional.json
(`testaug evaluate generalization`): the G table, the suite scores, and per scenario a table and a heat
map of functionality pass rates by configuration-method pair (BeLUGA's figure)."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from testaug.fixing.crossfunctional.analysis import (
    PAIR_SCENARIOS,
    CrossFunctionalReport,
    Functionality,
    ScenarioSummary,
)
from testaug.fixing.patching.report import Stat
from testaug.reports.blocks import Block, Heading, Image, Table, Text
from testaug.reports.plots import _png, _pyplot

TYPE_COLOURS = {"MFT": "tab:blue", "INV": "tab:red", "DIR": "tab:green"}
SCENARIO_NAMES = {
    "standard": "standard (IID model)",
    "seen": "seen",
    "func": "functionality out",
    "class": "class out",
    "type": "test type out",
}
BASELINE = "IID (standard)"
MARKS = {"above": " ▲", "below": " ▼", "": ""}
TONES = {"above": "#1a7f37", "below": "#c62828", "": None}  # BeLUGA's Table 3: green, red
LABEL_LINE = 40  # characters per line of a heat map's functionality names


def _stat(value: Stat | None) -> str:
    return "" if value is None else f"{100 * value.mean:.1f} ± {100 * value.std:.1f}"


def _mark(summary: ScenarioSummary | None, attribute: str) -> str:
    """ "above", "below" or "" for a pair's G (or i.i.d. score) against the baseline."""
    versus = None if summary is None else summary.versus_baseline
    return "" if versus is None else getattr(versus, f"{attribute}_mark")


def _marked(summary: ScenarioSummary | None, attribute: str) -> str:
    """A pair's G (or i.i.d. score) with ▲ / ▼ where significantly above / below the baseline."""
    if summary is None:
        return ""
    versus = summary.versus_baseline
    mark = "" if versus is None else getattr(versus, f"{attribute}_mark")
    return _stat(summary.iid_score if attribute == "iid" else summary.g) + MARKS[mark]


def _ordered(report: CrossFunctionalReport) -> list[Functionality]:
    """Functionalities grouped by class (in order of first appearance), suite order within."""
    classes = list(dict.fromkeys(f.capability for f in report.functionalities))
    return sorted(report.functionalities, key=lambda f: classes.index(f.capability))


def _rows(report: CrossFunctionalReport, scenario: str) -> list[tuple[str, ScenarioSummary]]:
    """The baseline row (the IID model) and each pair's summary of the scenario."""
    rows = [(BASELINE, report.standard)] if report.standard is not None else []
    rows += [(p.name, p.scenarios[scenario]) for p in report.pairs if scenario in p.scenarios]
    return rows


def crossfunctional_section(report: CrossFunctionalReport) -> list[Block]:
    """The G table (mean ± standard deviation over seeds, in percent), the suite scores,
    and per scenario the functionality pass rates as a table and a heat map."""
    seeds = list(report.seeds)
    blocks: list[Block] = [
        Heading("Cross-functional generalization"),
        Text(
            f"{report.base_model or 'the model'} trained per configuration and method on "
            f"{report.n_cases:,} suite cases (split seed {report.split_seed}, "
            f"{report.test_fraction:.0%} to test) and {report.n_iid_train:,} i.i.d. examples; "
            f"i.i.d. score on {report.n_iid_test:,} examples; seeds {seeds}. Seen: trained on "
            "every functionality; functionality, class and test type out: each functionality "
            "scored by a model that never saw it (its description, its class, its test type)."
        ),
    ]
    g_columns = ["", "i.i.d. score", "G standard", *(f"G {s}" for s in PAIR_SCENARIOS), "Avg"]
    g_rows = []
    g_tones: list[list[str | None]] = []
    if report.standard is not None:
        g_tones.append([])
        g_rows.append(
            [BASELINE, _stat(report.standard.iid_score), _stat(report.standard.g)]
            + [""] * (len(PAIR_SCENARIOS) + 1)
        )
    for pair in report.pairs:
        g_rows.append(
            [
                pair.name,
                _marked(pair.scenarios.get("seen"), "iid"),
                "",
                *(_marked(pair.scenarios.get(s), "g") for s in PAIR_SCENARIOS),
                _stat(pair.g_average),
            ]
        )
        g_tones.append(
            [
                None,
                TONES[_mark(pair.scenarios.get("seen"), "iid")],
                None,
                *(TONES[_mark(pair.scenarios.get(s), "g")] for s in PAIR_SCENARIOS),
            ]
        )
    blocks.append(
        Table(
            g_columns,
            g_rows,
            cell_tones=g_tones,
            caption="BeLUGA's G (Eq. 8): harmonic mean of the suite score and the i.i.d. "
            "score, in percent, mean ± standard deviation over seeds; Avg: the mean G of "
            "the pair's scenarios; ▲ / ▼ significantly above / below the IID baseline "
            "(p < 0.05, see the next table)",
        )
    )
    blocks += significance_blocks(report) + selection_blocks(report)
    score_rows = []
    if report.standard is not None:
        score_rows.append(
            [BASELINE, _stat(report.standard.suite_score)] + [""] * len(PAIR_SCENARIOS)
        )
    for pair in report.pairs:
        score_rows.append(
            [
                pair.name,
                "",
                *(
                    _stat(getattr(pair.scenarios.get(s), "suite_score", None))
                    for s in PAIR_SCENARIOS
                ),
            ]
        )
    blocks.append(
        Table(
            ["", "s_T standard", *(f"s_T {s}" for s in PAIR_SCENARIOS)],
            score_rows,
            caption="suite scores: the mean of the functionality pass rates, in percent",
        )
    )
    functionalities = _ordered(report)
    for scenario in PAIR_SCENARIOS:
        rows = _rows(report, scenario)
        if len(rows) <= (report.standard is not None):
            continue
        blocks.append(Heading(f"Pass rates: {SCENARIO_NAMES[scenario]}", level=3))
        blocks.append(
            Table(
                ["functionality", "class", "type", *(name for name, _ in rows)],
                [
                    [
                        f.description,
                        f.capability,
                        f.test_type,
                        *(_stat(s.pass_rates.get(f.id)) for _, s in rows),
                    ]
                    for f in functionalities
                ]
                + [["average (s_T)", "", "", *(_stat(s.suite_score) for _, s in rows)]],
                caption="functionality pass rates (Eq. 7) in percent, mean ± standard "
                "deviation over seeds",
            )
        )
        blocks.append(
            Image(
                pass_rate_heatmap_png(functionalities, rows, title=SCENARIO_NAMES[scenario]),
                f"crossfunctional_{scenario}.png",
                f"pass rates ({SCENARIO_NAMES[scenario]}): configuration-method pairs by "
                "functionality; x ticks blue MFT, red INV, green DIR",
            )
        )
    return blocks


def significance_blocks(report: CrossFunctionalReport) -> list[Block]:
    """every pair's scores against the IID baseline, from the per-example hits
    averaged over seeds; rows green where significantly above, red where below."""
    rows: list[list[str]] = []
    tones: list[str | None] = []
    for pair in report.pairs:
        for name, summary in pair.scenarios.items():
            versus = summary.versus_baseline
            if versus is None:
                continue
            for what, difference, p, mark in (
                (f"G {name}", versus.g_difference, versus.g_p, versus.g_mark),
                (f"s_iid ({name})", versus.iid_difference, versus.iid_p, versus.iid_mark),
            ):
                if what.startswith("s_iid") and name != "seen":
                    continue  # one i.i.d. row per pair, as the G table's i.i.d. column
                verdict = {"above": "above", "below": "below", "": "not significant"}[mark]
                rows.append([pair.name, what, f"{100 * difference:+.1f}", f"{p:.4f}", verdict])
                tones.append(TONES[mark])
    if not rows:
        return []
    trials = report.significance_trials
    trials_used = "trials not recorded" if trials is None else f"{trials:,} trials"
    return [
        Table(
            ["pair", "score", "Δ vs IID (points)", "p", "vs the IID baseline"],
            rows,
            caption="significance against the IID baseline (α = 0.05): G by paired "
            f"randomization over the test cases and i.i.d. examples ({trials_used}), the "
            "i.i.d. score by a two-tailed binomial test; hits averaged over seeds; green "
            "above, red below",
            tones=tones,
        )
    ]


def selection_blocks(report: CrossFunctionalReport) -> list[Block]:
    """the setting chosen on T_val for each pair, and every setting's T_val score."""
    chosen = [pair for pair in report.pairs if pair.selection is not None]
    if not chosen:
        return []
    rows = [
        [pair.name, pair.selection.chosen.name, s.setting.name, _percent(s.val_score)]
        for pair in chosen
        if pair.selection is not None
        for s in pair.selection.scores
    ]
    return [
        Table(
            ["pair", "chosen", "setting", "T_val suite score"],
            rows,
            caption=f"hyper-parameters selected on T_val ({report.val_fraction:.0%} of the "
            "held-out tests; trained on T_train with the first seed; the best suite score "
            "wins) and used in every scenario and seed of the pair",
        )
    ]


def _percent(value: float) -> str:
    return f"{100 * value:.1f}"


def _wrapped(name: str) -> str:
    """A functionality's name whole, in lines of at most `LABEL_LINE` characters (a longer
    word keeps its own line)."""
    return (
        "\n".join(textwrap.wrap(name, LABEL_LINE, break_long_words=False, break_on_hyphens=False))
        or name
    )


def pass_rate_heatmap_png(
    functionalities: Sequence[Functionality],
    rows: Sequence[tuple[str, ScenarioSummary]],
    *,
    title: str = "",
) -> bytes:
    """BeLUGA's panel: configuration-method pairs (y) by the average pass rate and then each
    functionality's (x), in percent; lines between configurations and between classes,
    x ticks (the names whole, wrapped) coloured by test type (blue MFT, red INV, green DIR)."""
    import numpy as np

    plt = _pyplot()
    grid = np.array(
        [
            [100 * summary.suite_score.mean]
            + [
                np.nan if f.id not in summary.pass_rates else 100 * summary.pass_rates[f.id].mean
                for f in functionalities
            ]
            for _, summary in rows
        ],
        dtype=float,
    )
    columns = ["average", *(_wrapped(f.description) for f in functionalities)]
    lines = max(column.count("\n") + 1 for column in columns)
    width = max(6.0, 2.5 + max(0.35, 0.12 * lines + 0.1) * len(columns))
    height = max(2.4, 1.6 + 0.35 * len(rows))
    # constrained layout makes room for the tick labels; the figure grows by their height
    figure, axes = plt.subplots(figsize=(width, height), dpi=110, layout="constrained")
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(columns)))
    axes.set_xticklabels(columns, rotation=90, fontsize=7)
    renderer = figure.canvas.get_renderer()
    labels = max(t.get_window_extent(renderer).height for t in axes.get_xticklabels())
    figure.set_size_inches(width, height + labels / figure.dpi)
    for tick, f in zip(axes.get_xticklabels()[1:], functionalities, strict=True):
        tick.set_color(TYPE_COLOURS.get(f.test_type, "black"))
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([name for name, _ in rows], fontsize=7)
    axes.axvline(0.5, color="black", linewidth=1.2)
    for j in range(1, len(functionalities)):
        if functionalities[j].capability != functionalities[j - 1].capability:
            axes.axvline(j + 0.5, color="black", linewidth=0.6)
    configurations = [name.split(" / ")[0] for name, _ in rows]
    for i in range(1, len(rows)):
        if configurations[i] != configurations[i - 1]:
            axes.axhline(i - 0.5, color="black", linewidth=0.8)
    if len(columns) * len(rows) <= 400:
        for i in range(len(rows)):
            for j in range(len(columns)):
                if not np.isnan(grid[i, j]):
                    axes.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=6)
    figure.colorbar(image, ax=axes, label="pass rate %")
    axes.set_title(title, fontsize=9)
    return _png(figure)
