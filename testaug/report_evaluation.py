"""Report sections for the evaluation of models under test (evaluation.json, as
`testaug evaluate --json` prints it) and for the patching protocol (patching.json)."""

from __future__ import annotations

from typing import Any

from testaug.plots import error_rates_png, heatmap_png
from testaug.report_blocks import Block, Heading, Image, Table, Text

TEST_TYPES = ("MFT", "INV", "DIR")


def rate_text(cell: dict[str, Any] | None) -> str:
    """A failure rate as the report shows it: `12.5% (3/24)`, or n/a."""
    if cell is None or cell.get("rate") is None:
        return "n/a"
    return f"{cell['rate']:.1f}% ({cell['failed']}/{cell['n']})"


def evaluation_section(summary: dict[str, Any]) -> list[Block]:
    """Error rates per model: overall, per capability (with a bar plot), the capability x
    test type matrix (a heat map per model), per source, and failing examples."""
    models = summary.get("models", [])
    blocks: list[Block] = [
        Heading("Models under test"),
        Text(
            f"{summary.get('n_cases', 0):,} test cases and {summary.get('n_perturbed', 0):,} "
            "perturbed cases (INV, DIR)."
        ),
    ]
    if not models:
        return [*blocks, Text("No model was evaluated.")]
    names = [m["model"] for m in models]
    blocks.append(
        Table(["model", "error rate"], [[m["model"], rate_text(m["overall"])] for m in models])
    )
    capabilities = list(dict.fromkeys(c for m in models for c in m["by_capability"]))
    blocks.append(
        Table(
            ["capability", *names],
            [[c, *(rate_text(m["by_capability"].get(c)) for m in models)] for c in capabilities],
            caption="error rate per capability",
        )
    )
    rates = {
        m["model"]: {c: r["rate"] for c, r in m["by_capability"].items() if r["rate"] is not None}
        for m in models
    }
    blocks.append(
        Image(error_rates_png(rates), "error_rates.png", "Error rate per capability and model")
    )
    for index, m in enumerate(models):
        rows = list(m["matrix"])
        values = [[(m["matrix"][c].get(t) or {}).get("rate") for t in TEST_TYPES] for c in rows]
        blocks.append(
            Table(
                ["capability", *TEST_TYPES],
                [[c, *(rate_text(m["matrix"][c].get(t)) for t in TEST_TYPES)] for c in rows],
                caption=f"{m['model']}: capability x test type (CheckList's matrix)",
            )
        )
        title = f"{m['model']}: failure rate (%) by capability and test type"
        blocks.append(
            Image(heatmap_png(rows, TEST_TYPES, values, title=title), f"matrix_{index}.png", title)
        )
    sources = list(dict.fromkeys(s for m in models for s in m["by_source"]))
    blocks.append(
        Table(
            ["source", *names],
            [[s, *(rate_text(m["by_source"].get(s)) for m in models)] for s in sources],
            caption="error rate per source of the cases",
        )
    )
    blocks.append(Heading("Failing examples", level=3))
    rows = []
    for m in models:
        for cell in m["by_description"].values():
            for example in cell.get("examples", [])[:2]:
                text = example["text"] + (
                    f" || {example['text_pair']}" if example.get("text_pair") else ""
                )
                rows.append(
                    [
                        m["model"],
                        f"{example['test_type']}: {cell['name']}",
                        f"{cell['rate']:.1f}%" if cell.get("rate") is not None else "n/a",
                        text,
                        f"expected {example['expected']}, got {example['predicted']}",
                    ]
                )
    if rows:
        blocks.append(
            Table(["model", "test and description", "failure rate", "example", "why"], rows)
        )
    else:
        blocks.append(Text("No failures."))
    return blocks


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
