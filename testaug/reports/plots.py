"""Plots as PNG (matplotlib, imported only when a plot is drawn): written to a file or
returned as bytes for a report."""

from __future__ import annotations

import io
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from testaug.core.runs import write_bytes_atomic


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(figure: Any) -> bytes:
    """The figure as PNG bytes, laid out tight unless it has a layout engine of its own;
    the figure is closed."""
    plt = _pyplot()
    buffer = io.BytesIO()
    if figure.get_layout_engine() is None:
        figure.tight_layout()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def acc_curves_png(
    curves: Mapping[str, Sequence[float]], *, target: float | None = None, title: str = ""
) -> bytes:
    """ACC@k against the reviewed fraction k/N, one line per ranking (the first drawn bold)."""
    figure, axes = _pyplot().subplots(figsize=(7, 4.5), dpi=120)
    styles = {
        "random": dict(color="grey", linestyle="--"),
        "oracle": dict(color="black", linestyle=":"),
    }
    curves_first = next(iter(curves), None)  # the ranking the others are parts of
    for name, curve in curves.items():
        n = len(curve) - 1
        xs = [k / n if n else 0.0 for k in range(len(curve))]
        width = 2.5 if name == curves_first else 1.2
        axes.plot(xs, curve, label=name, linewidth=width, **styles.get(name, {}))
    if target is not None:
        axes.axhline(target, color="red", linewidth=0.8, alpha=0.6, label=f"target {target:.0%}")
    axes.set_xlabel("fraction of candidates reviewed (k / N)")
    axes.set_ylabel("ACC@k")
    axes.set_title(title or "Review effort: accuracy after reviewing the top k")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    return _png(figure)


def plot_acc_curves(
    curves: Mapping[str, Sequence[float]],
    path: Path,
    *,
    target: float | None = None,
    title: str = "",
) -> Path:
    """ACC@k curves saved as a PNG file."""
    write_bytes_atomic(path, acc_curves_png(curves, target=target, title=title))
    return path


def error_rates_png(
    rates: Mapping[str, Mapping[str, float]],
    *,
    title: str = "",
    unverified: Collection[str] = (),
    intervals: Mapping[str, Mapping[str, tuple[float, float]]] | None = None,
) -> bytes:
    """Grouped horizontal bars: error rate (%) per group (rows: capabilities, or any other
    grouping), one bar per model, with error bars where `intervals` give a (low, high)
    95% interval in percent per model and group. Rows in `unverified` are hatched, pale
    and labelled so."""
    plt = _pyplot()
    capabilities = list(dict.fromkeys(c for per_model in rates.values() for c in per_model))
    models = list(rates)
    height = 0.8 / max(len(models), 1)
    figure, axes = plt.subplots(
        figsize=(7.5, max(2.8, 1.2 + 0.45 * len(capabilities) * max(len(models), 1) ** 0.5)),
        dpi=120,
    )
    for index, model in enumerate(models):
        ys = [row + index * height for row in range(len(capabilities))]
        xs = [rates[model].get(c, 0.0) for c in capabilities]
        bars = axes.barh(ys, xs, height=height, label=model)
        bounds = (intervals or {}).get(model, {})
        with_bars = [i for i, c in enumerate(capabilities) if c in bounds and c in rates[model]]
        if with_bars:
            low = [max(xs[i] - bounds[capabilities[i]][0], 0.0) for i in with_bars]
            high = [max(bounds[capabilities[i]][1] - xs[i], 0.0) for i in with_bars]
            axes.errorbar(
                [xs[i] for i in with_bars],
                [ys[i] for i in with_bars],
                xerr=[low, high],
                fmt="none",
                ecolor="black",
                elinewidth=0.9,
                capsize=3,
            )
        for bar, name in zip(bars, capabilities, strict=True):
            if name in unverified:
                bar.set_hatch("///")
                bar.set_alpha(0.5)
                bar.set_edgecolor("black")
    axes.set_yticks([row + height * (len(models) - 1) / 2 for row in range(len(capabilities))])
    axes.set_yticklabels(
        [
            f"{c}\n(unverified)" if c in unverified and "unverified" not in c else c
            for c in capabilities
        ]
    )
    for label, name in zip(axes.get_yticklabels(), capabilities, strict=True):
        if name in unverified:
            label.set_color("#a15c00")
            label.set_fontstyle("italic")
    axes.invert_yaxis()
    axes.set_xlabel("error rate (%)")
    axes.set_xlim(0, 100)
    axes.set_title(title or "Error rate per capability")
    axes.grid(axis="x", alpha=0.3)
    handles, labels = axes.get_legend_handles_labels()
    if any(c in unverified for c in capabilities):
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="white", edgecolor="black", hatch="///"))
        labels.append("unverified evidence (no person reviewed it)")
    if intervals and any(intervals.values()):
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], color="black", linewidth=0.9))
        labels.append("95% interval")
    axes.legend(handles, labels, fontsize=8, loc="best")
    return _png(figure)


def heatmap_png(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str = "",
) -> bytes:
    """A heat map of percentages (empty cells blank), each cell labelled with its value."""
    import numpy as np

    plt = _pyplot()
    grid = np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)
    size = (max(6.5, 2.5 + 1.3 * len(columns)), max(2.4, 1.2 + 0.45 * len(rows)))
    figure, axes = plt.subplots(figsize=size, dpi=120)
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="Reds", vmin=0, vmax=100, aspect="auto")
    axes.set_xticks(range(len(columns)))
    axes.set_xticklabels(columns)
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels(rows)
    for i in range(len(rows)):
        for j in range(len(columns)):
            if not np.isnan(grid[i, j]):
                colour = "white" if grid[i, j] > 60 else "black"
                axes.text(
                    j, i, f"{grid[i, j]:.1f}", ha="center", va="center", color=colour, fontsize=8
                )
    figure.colorbar(image, ax=axes, label="%")
    axes.set_title(title, fontsize=10)
    return _png(figure)
