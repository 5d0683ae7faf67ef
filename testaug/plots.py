"""Plots as PNG files (matplotlib, imported only when a plot is drawn)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def plot_acc_curves(
    curves: Mapping[str, Sequence[float]],
    path: Path,
    *,
    target: float | None = None,
    title: str = "",
) -> Path:
    """ACC@k against the reviewed fraction k/N, one line per ranking, saved as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=120)
    styles = {
        "random": dict(color="grey", linestyle="--"),
        "oracle": dict(color="black", linestyle=":"),
    }
    for name, curve in curves.items():
        n = len(curve) - 1
        xs = [k / n if n else 0.0 for k in range(len(curve))]
        width = 2.5 if name == "ensemble" else 1.2
        axes.plot(xs, curve, label=name, linewidth=width, **styles.get(name, {}))
    if target is not None:
        axes.axhline(target, color="red", linewidth=0.8, alpha=0.6, label=f"target {target:.0%}")
    axes.set_xlabel("fraction of candidates reviewed (k / N)")
    axes.set_ylabel("ACC@k")
    axes.set_title(title or "Review effort: accuracy after reviewing the top k")
    axes.grid(alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path
