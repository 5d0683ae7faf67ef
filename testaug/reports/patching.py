"""The report's section on the patching protocol, from patching.json (as `testaug
patch-eval --json` prints it)."""

from __future__ import annotations

from typing import Any

from testaug.reports.blocks import Block, Heading, Table, Text


def patching_section(report: dict[str, Any]) -> list[Block]:
    """The patching protocol: ERR% on the same test split before and after fine-tuning on
    each suite, mean and standard deviation over seeds, overall and per capability."""
    a, b = report.get("suite_names", ["A", "B"])
    overall = report["overall"]
    held = f", held out by {report['strategy']}" if report.get("strategy") != "random" else ""
    blocks: list[Block] = [
        Heading("Patching"),
        Text(
            f"{report['base_model']} fine-tuned on the training part of {a} and, separately, "
            f"of {b}; error on the same test split, over seeds {list(report['seeds'])}{held}."
        ),
    ]

    def row(name: str, summary: dict[str, Any]) -> list[str]:
        return [
            name,
            _stat(summary["err_unpatched"]),
            _stat(summary["err_patched_a"]),
            _stat(summary["delta_a"]),
            _stat(summary["err_patched_b"]),
            _stat(summary["delta_b"]),
        ]

    columns = ["", "ERR% unpatched", f"patched on {a}", "Δ", f"patched on {b}", "Δ"]
    rows = [row("overall", overall)]
    rows += [row(name, summary) for name, summary in report.get("per_capability", {}).items()]
    blocks.append(Table(columns, rows, caption="mean ± standard deviation"))
    iid = report.get("iid")
    if iid:
        blocks.append(
            Table(
                ["", "unpatched", f"patched on {a}", f"patched on {b}"],
                [
                    [
                        "i.i.d. score",
                        *(
                            _stat(iid[k])
                            for k in ("iid_unpatched", "iid_patched_a", "iid_patched_b")
                        ),
                    ],
                    [
                        "G score",
                        *(_stat(iid[k]) for k in ("g_unpatched", "g_patched_a", "g_patched_b")),
                    ],
                ],
                caption="BeLUGA's G: harmonic mean of the suite pass rate and the i.i.d. score",
            )
        )
    return blocks


def _stat(value: dict[str, Any]) -> str:
    return f"{value['mean']:.1f} ± {value['std']:.1f}"
