"""The report's section on the patching protocol, from patching.json (as `testaug
patch-eval --json` prints it: a `PatchingReport` with its rates in percent)."""

from __future__ import annotations

from testaug.fixing.patching.protocol import PatchingReport, PatchingSummary, Stat
from testaug.reports.blocks import Block, Heading, Table, Text


def patching_section(report: PatchingReport) -> list[Block]:
    """The patching protocol: ERR% on the same test split before and after fine-tuning on
    each suite, mean and standard deviation over seeds, overall and per capability."""
    a, b = report.suite_names
    held = f", held out by {report.strategy}" if report.strategy != "random" else ""
    blocks: list[Block] = [
        Heading("Patching"),
        Text(
            f"{report.base_model} fine-tuned on the training part of {a} and, separately, "
            f"of {b}; error on the same test split, over seeds {list(report.seeds)}{held}."
        ),
    ]

    def row(name: str, summary: PatchingSummary) -> list[str]:
        return [
            name,
            _stat(summary.err_unpatched),
            _stat(summary.err_patched_a),
            _stat(summary.delta_a),
            _stat(summary.err_patched_b),
            _stat(summary.delta_b),
        ]

    columns = ["", "ERR% unpatched", f"patched on {a}", "Δ", f"patched on {b}", "Δ"]
    rows = [row("overall", report.overall)]
    rows += [row(name, summary) for name, summary in report.per_capability.items()]
    blocks.append(Table(columns, rows, caption="mean ± standard deviation"))
    iid = report.iid
    if iid is not None:
        blocks.append(
            Table(
                ["", "unpatched", f"patched on {a}", f"patched on {b}"],
                [
                    [
                        "i.i.d. score",
                        *(
                            _stat(stat)
                            for stat in (iid.iid_unpatched, iid.iid_patched_a, iid.iid_patched_b)
                        ),
                    ],
                    [
                        "G score",
                        *(
                            _stat(stat)
                            for stat in (iid.g_unpatched, iid.g_patched_a, iid.g_patched_b)
                        ),
                    ],
                ],
                caption="BeLUGA's G: harmonic mean of the suite pass rate and the i.i.d. score",
            )
        )
    return blocks


def _stat(value: Stat) -> str:
    return f"{value.mean:.1f} ± {value.std:.1f}"
