"""The report's section on the models under test, from evaluation.json (as `testaug
evaluate --json` prints it): headline, matrix, sources, provenance, failing examples."""

from __future__ import annotations

from collections.abc import Sequence

from testaug.evaluation.failures import FailureRate, interval_text
from testaug.evaluation.summary import EvaluationSummary, Headline, ModelSummary
from testaug.reports.blocks import Block, Heading, Image, Table, Text
from testaug.reports.plots import error_rates_png, heatmap_png
from testaug.suites.provenance import MEANINGS, PROVENANCES, is_verified

TEST_TYPES = ("MFT", "INV", "DIR")


MARKS = {"ppi": " PPI", "wilson-verified": " on verified only"}


def rate_text(cell: FailureRate | None) -> str:
    """A failure rate as the report shows it, with its 95% interval and counts:
    `12.5% (8.1–18.6), 3/24` (the PPI estimate and interval marked `PPI`, a Wilson
    interval on the verified cases alone `on verified only`), or n/a."""
    if cell is None or cell.rate is None:
        return "n/a"
    mark = MARKS.get(cell.interval.method, "") if cell.interval is not None else ""
    return f"{interval_text(cell)}{mark}, {cell.failed}/{cell.n}"


def interval_blocks(models: Sequence[ModelSummary]) -> list[Block]:
    """What the intervals are: Wilson's, and per model how the headline's were taken
    where they rest on unverified cases."""
    if not any(m.overall.interval is not None for m in models):
        return []
    text = (
        "Each error rate comes with its 95% interval in brackets (Wilson score interval: "
        "the range of error rates the counted cases are consistent with)."
    )
    notes = [
        f"{m.model}: {m.headline.interval_note}"
        for m in models
        if m.headline is not None
        and m.headline.interval_note
        and m.headline.overall.interval is not None
        and m.headline.overall.interval.method != "wilson"
    ]
    if notes:
        text += " Headline rates resting on unverified cases: " + "; ".join(notes) + "."
    return [Text(text)]


def unparsed_blocks(models: Sequence[ModelSummary]) -> list[Block]:
    """How many answers of each model held no label (an LLM under test answering off the
    point): left out of its error rates, and counted here apart from its failures."""
    counts = [(m.model, m.overall.unparsed) for m in models if m.overall.unparsed]
    if not counts:
        return []
    listed = "; ".join(f"{model}: {n:,}" for model, n in counts)
    return [Text(f"Unparseable answers (no label in them), left out of the error rates: {listed}.")]


def evaluation_section(summary: EvaluationSummary) -> list[Block]:
    """Error rates per model: the headline (overall and per capability, with a bar plot) on
    the evidence the JSON states, the capability x test type matrix (a heat map per model),
    per source, per provenance (a table and bars, unverified rows marked), and failing
    examples with their provenance. A file without provenance renders as before it existed."""
    models = summary.models
    blocks: list[Block] = [
        Heading("Models under test"),
        Text(
            f"{summary.n_cases:,} test cases and {summary.n_perturbed:,} "
            "perturbed cases (INV, DIR)."
        ),
    ]
    if not models:
        return [*blocks, Text("No model was evaluated.")]
    return [
        *blocks,
        _evidence_text({m.model: m.headline for m in models}),
        *interval_blocks(models),
        *unparsed_blocks(models),
        _headline_table(models),
        *_capability_blocks(models),
        *_matrix_blocks(models),
        _source_table(models),
        *provenance_blocks(models),
        *_failing_examples(models),
    ]


def _headline_table(models: Sequence[ModelSummary]) -> Table:
    """Each model's headline error rate, what it rests on, its rate on all cases and what
    the headline leaves out; rows resting on unverified evidence marked."""
    return Table(
        ["model", "error rate", "rests on", "all cases", "left out"],
        [
            [
                m.model,
                rate_text(_head_overall(m)),
                _evidence_name(m.headline),
                rate_text(m.overall),
                _left_out(m.headline),
            ]
            for m in models
        ],
        caption="headline error rate per model",
        marks=[_headline_mark(m.headline) for m in models],
    )


def _matrix_blocks(models: Sequence[ModelSummary]) -> list[Block]:
    """Each model's capability x test type matrix on all cases: a table and a heat map."""
    blocks: list[Block] = []
    for index, m in enumerate(models):
        rows = list(m.matrix)
        values = [[_rate(m.matrix[c].get(t)) for t in TEST_TYPES] for c in rows]
        blocks.append(
            Table(
                ["capability", *TEST_TYPES],
                [[c, *(rate_text(m.matrix[c].get(t)) for t in TEST_TYPES)] for c in rows],
                caption=f"{m.model}: capability x test type (CheckList's matrix), all cases",
            )
        )
        title = f"{m.model}: failure rate (%) by capability and test type"
        blocks.append(
            Image(heatmap_png(rows, TEST_TYPES, values, title=title), f"matrix_{index}.png", title)
        )
    return blocks


def _source_table(models: Sequence[ModelSummary]) -> Table:
    """The error rate per source of the cases (template, llm, expansion) and model."""
    sources = list(dict.fromkeys(s for m in models for s in m.by_source))
    return Table(
        ["source", *(m.model for m in models)],
        [[s, *(rate_text(m.by_source.get(s)) for m in models)] for s in sources],
        caption="error rate per source of the cases",
    )


def _rate(cell: FailureRate | None) -> float | None:
    return None if cell is None else cell.rate


def _shown(cell: FailureRate) -> float:
    """The rate a bar shows: the PPI estimate where the interval is one, else the rate."""
    if cell.interval is not None and cell.interval.estimate is not None:
        return 100 * cell.interval.estimate
    return cell.rate or 0.0


def _bounds(
    cells: dict[str, dict[str, FailureRate]],
) -> dict[str, dict[str, tuple[float, float]]]:
    """Per model and group, the 95% interval in percent (groups without one left out)."""
    return {
        model: {
            name: (100 * cell.interval.low, 100 * cell.interval.high)
            for name, cell in groups.items()
            if cell.interval is not None and cell.rate is not None
        }
        for model, groups in cells.items()
    }


def _head_overall(model: ModelSummary) -> FailureRate:
    """A model's headline rate; in files written before provenance, its rate on all cases."""
    return model.overall if model.headline is None else model.headline.overall


def _head_by_capability(model: ModelSummary) -> dict[str, FailureRate]:
    """A model's headline rates per capability (before provenance: on all cases)."""
    return model.by_capability if model.headline is None else model.headline.by_capability


def _left_out(head: Headline | None) -> str:
    return "n/a" if head is None else f"{head.left_out:,}"


def _evidence_name(head: Headline | None) -> str:
    if head is None:
        return "all cases (provenance not recorded)"
    if head.fallback:
        return "all cases: no verified case"
    return "verified evidence" if head.evidence == "verified" else "all cases"


def _headline_mark(head: Headline | None) -> str | None:
    """A warning where the headline rests on unverified evidence."""
    if head is None:
        return None
    if head.fallback and head.unverified:
        return "unverified: no verified case, no person reviewed the cases it rests on"
    if head.evidence == "all" and head.unverified:
        return f"includes unverified evidence: {head.unverified:,} cases no person reviewed"
    return None


def _evidence_text(heads: dict[str, Headline | None]) -> Text:
    """The sentence that says what the headline rates rest on."""
    evidence = {None if h is None else h.evidence for h in heads.values()}
    if evidence == {None}:
        return Text(
            "This evaluation.json does not record the provenance of its cases: the error rates "
            "rest on all cases, verified or not.",
            notice=True,
        )
    notes = "; ".join(f"{name}: {h.note}" for name, h in heads.items() if h and h.note)
    if evidence == {"verified"}:
        left = "; ".join(
            f"{name} {h.left_out:,} ("
            + ", ".join(f"{n:,} {p}" for p, n in h.left_out_by_provenance.items())
            + ")"
            for name, h in heads.items()
            if h and h.left_out
        )
        return Text(
            "The headline error rates (per model, per capability and their plot) rest on "
            "verified evidence only: template seed cases, generated cases accepted by people, "
            "and cases expanded from templates induced from those. Cases accepted by the ranker "
            "alone, or expanded from such cases, are left out of them "
            + (f"(left out: {left})" if left else "(none in this suite)")
            + "; every breakdown below the plot includes all cases."
        )
    return Text(
        f"The headline error rates rest on all cases, verified or not. {notes}.", notice=True
    )


def _capability_blocks(models: Sequence[ModelSummary]) -> list[Block]:
    """The headline rate per capability and model (and on all cases, where cases were left
    out), with a bar plot of the headline rates."""
    names = [m.model for m in models]
    capabilities = list(dict.fromkeys(c for m in models for c in m.by_capability))
    with_all = [m for m in models if m.headline and m.headline.left_out]
    columns = ["capability", *names, *(f"{m.model}, all cases" for m in with_all)]
    rows = [
        [
            c,
            *(rate_text(_head_by_capability(m).get(c)) for m in models),
            *(rate_text(m.by_capability.get(c)) for m in with_all),
        ]
        for c in capabilities
    ]
    evidence = {_evidence_name(m.headline) for m in models}
    on = evidence.pop() if len(evidence) == 1 else "the evidence stated per model"
    heads = {m.model: _head_by_capability(m) for m in models}
    rates = {
        name: {c: _shown(r) for c, r in cells.items() if r.rate is not None}
        for name, cells in heads.items()
    }
    return [
        Table(columns, rows, caption=f"error rate per capability, on {on}"),
        Image(
            error_rates_png(
                rates, title=f"Error rate per capability ({on})", intervals=_bounds(heads)
            ),
            "error_rates.png",
            f"Error rate per capability and model, on {on}",
        ),
    ]


def provenance_blocks(models: Sequence[ModelSummary]) -> list[Block]:
    """Error rates by provenance per model, a table and bars, unverified ones marked."""
    blocks: list[Block] = [Heading("Error rates by provenance", level=3)]
    if not any(m.by_provenance for m in models):
        return [*blocks, Text("Not available: this evaluation.json predates provenance.")]
    found = {p for m in models for p in m.by_provenance}
    order = [p for p in PROVENANCES if p in found] + sorted(found - set(PROVENANCES))
    blocks.append(
        Table(
            ["provenance", *(m.model for m in models), "evidence"],
            [
                [p, *(rate_text(m.by_provenance.get(p)) for m in models), _evidence(p)]
                for p in order
            ],
            caption="error rate per provenance of the cases (perturbed ones: their original's)",
            marks=[_unverified_mark(p) for p in order],
        )
    )
    rates = {
        m.model: {p: rate for p in order if (rate := _rate(m.by_provenance.get(p))) is not None}
        for m in models
    }
    unverified = [p for p in order if not is_verified(p)]
    bounds = _bounds({m.model: m.by_provenance for m in models})
    blocks.append(
        Image(
            error_rates_png(
                rates,
                title="Error rate per provenance",
                unverified=unverified,
                intervals=bounds,
            ),
            "error_rates_provenance.png",
            "Error rate per provenance and model (hatched: unverified, no person reviewed it)",
        )
    )
    return blocks


def _evidence(provenance: str) -> str:
    """`verified: ...what it is` (an unverified row says what it is in its mark)."""
    if is_verified(provenance):
        return f"verified: {MEANINGS[provenance]}"
    return "unverified" if provenance in MEANINGS else "not recorded"


def _unverified_mark(provenance: str | None) -> str | None:
    """The warning of an unverified provenance (None: verified, or not recorded)."""
    if provenance is None or provenance == "None" or is_verified(provenance):
        return None
    return MEANINGS.get(provenance, "unverified")


def _failing_examples(models: Sequence[ModelSummary]) -> list[Block]:
    """Up to two failing examples per description and model, each with its provenance."""
    blocks: list[Block] = [Heading("Failing examples", level=3)]
    rows: list[list[str]] = []
    marks: list[str | None] = []
    for m in models:
        for cell in m.by_description.values():
            for example in cell.examples[:2]:
                text = example.text + (f" || {example.text_pair}" if example.text_pair else "")
                provenance = example.provenance
                rows.append(
                    [
                        m.model,
                        f"{example.test_type}: {cell.name}",
                        provenance or "n/a",
                        interval_text(cell),
                        text,
                        f"expected {example.expected}, got {example.predicted}",
                    ]
                )
                marks.append(_unverified_mark(provenance))
    if not rows:
        return [*blocks, Text("No failures.")]
    columns = ["model", "test and description", "provenance", "failure rate", "example", "why"]
    return [*blocks, Table(columns, rows, marks=marks)]
