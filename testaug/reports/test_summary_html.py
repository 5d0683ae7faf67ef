"""The per-test summary as an HTML fragment for report.html: one card per test with its cases
(original and perturbed text, expected behaviour, each model's prediction and confidence),
and filters (model, capability, test type, failing only, text search) run by a little inline
JavaScript. No server and no external assets; every text is escaped (cases come from LLMs)
and the data lives in escaped attributes and cell text, never in script. Without
JavaScript every card and case shows, as with no filter set."""

from __future__ import annotations

from html import escape

from testaug.evaluation.failures import TEST_TYPES
from testaug.reports.blocks import Block, Heading, Html, Table, Text
from testaug.reports.test_summary import (
    SECTION,
    ModelVerdict,
    SummaryCase,
    TestInfo,
    TestSummary,
    case_text,
    prediction_text,
    rate_cell,
)

STYLE = """<style>
.ts-filters { display: flex; flex-wrap: wrap; gap: 0.6em 1.2em; align-items: center;
  margin: 0.6em 0; padding: 0.5em 0.8em; background: #f6f6f6; border: 1px solid #ddd; }
.ts-test { border: 1px solid #ccc; border-radius: 4px; margin: 0.8em 0; padding: 0.4em 0.8em; }
.ts-head { font-size: 0.95em; }
.ts-type { display: inline-block; padding: 0 0.5em; border-radius: 0.6em; color: white;
  font-weight: bold; font-size: 0.85em; }
.ts-MFT { background: #4a6fa5; } .ts-INV { background: #7a5aa6; } .ts-DIR { background: #2f8f6f; }
.ts-stat { margin-left: 0.8em; font-size: 0.85em; color: #444; }
.ts-cases { width: 100%; }
td.ts-fail { background: #fde8e8; color: #8a1c1c; }
td.ts-pass { color: #2c6e2c; }
td.ts-filtered { color: #777; }
.ts-more { font-size: 0.85em; color: #555; margin: 0.2em 0; }
.ts-off { display: none !important; }
</style>"""

SCRIPT = """<script>
(function () {
  "use strict";
  var root = document.getElementById("test-summary");
  var get = function (id) { return document.getElementById(id); };
  var model = get("ts-model"), capability = get("ts-capability"), type = get("ts-type"),
    failing = get("ts-failing"), search = get("ts-search"), count = get("ts-count"),
    none = get("ts-none");
  function apply() {
    var m = model.value, c = capability.value, t = type.value, onlyFailing = failing.checked,
      q = search.value.trim().toLowerCase(), tests = 0, cases = 0;
    root.querySelectorAll("[data-model]").forEach(function (el) {
      el.classList.toggle("ts-off", m !== "" && el.getAttribute("data-model") !== m);
    });
    root.querySelectorAll(".ts-test").forEach(function (test) {
      var chosen = (c === "" || test.getAttribute("data-capability") === c) &&
        (t === "" || test.getAttribute("data-type") === t);
      var head = test.querySelector(".ts-head").textContent.toLowerCase();
      var headMatch = q === "" || head.indexOf(q) >= 0;
      var rows = test.querySelectorAll("tr.ts-case"), shown = 0;
      rows.forEach(function (row) {
        var fails = (row.getAttribute("data-fail") || "").split(" ").filter(Boolean);
        var failsHere = m === "" ? fails.length > 0 : fails.indexOf(m) >= 0;
        var visible = chosen && (!onlyFailing || failsHere) &&
          (headMatch || row.textContent.toLowerCase().indexOf(q) >= 0);
        row.classList.toggle("ts-off", !visible);
        if (visible) { shown += 1; }
      });
      var visible = chosen && (shown > 0 || (rows.length === 0 && !onlyFailing && headMatch));
      test.classList.toggle("ts-off", !visible);
      if (visible) { tests += 1; cases += shown; }
    });
    count.textContent = tests + " tests, " + cases + " cases shown";
    none.classList.toggle("ts-off", tests > 0);
  }
  [model, capability, type, failing].forEach(function (el) {
    el.addEventListener("change", apply);
  });
  search.addEventListener("input", apply);
  apply();
})();
</script>"""


def render_test_summary(summary: TestSummary) -> str:
    """The section's HTML (after its heading): filters, one card per test, the script."""
    capabilities = list(dict.fromkeys(t.capability for t in summary.tests))
    types = [t for t in TEST_TYPES if any(test.test_type == t for test in summary.tests)]
    models = [(str(i), m) for i, m in enumerate(summary.models)]
    note = (
        ""
        if summary.complete
        else '<p class="notice">evaluation.results.jsonl is missing: only failing cases are '
        "shown, without failure rates.</p>"
    )
    filters = (
        '<form class="ts-filters" onsubmit="return false">'
        + _select("ts-model", "model", "all models", models)
        + _select("ts-capability", "capability", "all", [(c, c) for c in capabilities])
        + _select("ts-type", "test type", "all", [(t, t) for t in types])
        + '<label><input type="checkbox" id="ts-failing"> failing only</label>'
        + '<label>search <input type="search" id="ts-search" '
        'placeholder="text, description, prediction"></label>'
        + '<span id="ts-count" aria-live="polite"></span></form>'
    )
    cards = "\n".join(_card(test, summary.models) for test in summary.tests)
    empty = '<p id="ts-none" class="ts-off">No test matches the filters.</p>'
    return (
        f'<section id="test-summary">{STYLE}{note}{filters}\n{cards}\n{empty}\n{SCRIPT}</section>'
    )


def _select(element_id: str, label: str, everything: str, options: list[tuple[str, str]]) -> str:
    """A labelled drop-down: `everything` (value "") then one option per (value, text)."""
    items = "".join(
        f'<option value="{escape(value)}">{escape(text)}</option>' for value, text in options
    )
    return (
        f'<label>{escape(label)} <select id="{element_id}">'
        f'<option value="">{escape(everything)}</option>{items}</select></label>'
    )


def _card(test: TestInfo, models: tuple[str, ...]) -> str:
    """One test: its head (type, capability, description, perturbation, rate per model) and
    its cases."""
    perturbation = (
        f' <span class="ts-pert">perturbation: {escape(test.perturbation)}</span>'
        if test.perturbation
        else ""
    )
    stats = "".join(
        f'<span class="ts-stat" data-model="{i}">{escape(m)}: {escape(_stat(test, m))}</span>'
        for i, m in enumerate(models)
    )
    head = (
        f'<div class="ts-head"><span class="ts-type ts-{test.test_type}">{test.test_type}</span> '
        f"<b>{escape(test.capability)}</b>: {escape(test.description)}{perturbation}"
        f"{stats}</div>"
    )
    perturbed = test.test_type != "MFT"
    columns = ["original", "perturbed"] if perturbed else ["text"]
    header = "".join(f"<th>{c}</th>" for c in [*columns, "expected"]) + "".join(
        f'<th data-model="{i}">{escape(m)}</th>' for i, m in enumerate(models)
    )
    rows = "".join(_row(case, models, perturbed) for case in test.cases)
    table = (
        f'<table class="ts-cases"><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>'
        if test.cases
        else ""
    )
    more = _more(test)
    return (
        f'<div class="ts-test" data-capability="{escape(test.capability)}" '
        f'data-type="{test.test_type}">{head}{table}{more}</div>'
    )


def _stat(test: TestInfo, model: str) -> str:
    if test.stats:
        return rate_cell(test.stats, model)
    failed = sum(model in c.failing_models for c in test.cases)
    return f"{failed} failing"


def _row(case: SummaryCase, models: tuple[str, ...], perturbed: bool) -> str:
    """A case: its text(s), the expected behaviour and one cell per model."""
    failing = case.failing_models
    fail_ids = " ".join(str(i) for i, m in enumerate(models) if m in failing)
    texts = [case_text(case.text, case.text_pair)]
    if perturbed:
        texts.insert(0, case_text(case.original_text, case.original_text_pair))
    cells = "".join(f"<td>{escape(t)}</td>" for t in [*texts, case.expected])
    cells += "".join(_verdict_cell(i, case.verdicts.get(m)) for i, m in enumerate(models))
    kind = "ts-case ts-failing" if failing else "ts-case"
    return f'<tr class="{kind}" data-fail="{fail_ids}">{cells}</tr>'


def _verdict_cell(index: int, verdict: ModelVerdict | None) -> str:
    """A model's prediction and confidence on a case, marked fail, pass or filtered, with
    the reason as a tooltip."""
    if verdict is None:
        return f'<td data-model="{index}">n/a</td>'
    if verdict.filtered:
        kind, word = "ts-filtered", "filtered"
    elif verdict.passed:
        kind, word = "ts-pass", "pass"
    else:
        kind, word = "ts-fail", "FAIL"
    return (
        f'<td class="{kind}" data-model="{index}" title="{escape(verdict.reason)}">'
        f"{escape(prediction_text(verdict))}<br><small>{word}</small></td>"
    )


def _more(test: TestInfo) -> str:
    """What the card leaves out, if anything."""
    shown_failing = sum(bool(c.failing_models) for c in test.cases)
    shown_passing = len(test.cases) - shown_failing
    if shown_failing == test.n_failing and shown_passing == test.n_passing:
        return ""
    return (
        f'<p class="ts-more">showing {shown_failing} of {test.n_failing} failing and '
        f"{shown_passing} of {test.n_passing} passing cases</p>"
    )


def per_test_blocks(summary: TestSummary) -> list[Block]:
    """The per-test section: in report.md one row per test with its rate per model and a
    failing example; in report.html the filterable cases in place of that table."""
    blocks: list[Block] = [
        Heading(SECTION),
        Text(
            "One row per test (a description and its test type; INV and DIR tests per "
            "perturbation). report.html lists each test's cases with every model's prediction "
            "and confidence, filterable by model, capability, test type, failing only and text."
        ),
    ]
    if not summary.tests:
        return [*blocks, Text("The evaluation has no test cases.")]
    if not summary.complete:
        blocks.append(
            Text(
                "evaluation.results.jsonl is missing: only failing cases are shown, "
                "without failure rates.",
                notice=True,
            )
        )
    rows = [
        [
            test.name,
            test.capability,
            *(rate_cell(test.stats, m) for m in summary.models),
            _example(test),
        ]
        for test in summary.tests
    ]
    columns = ["test", "capability", *(f"{m} failure rate" for m in summary.models), "example"]
    return [*blocks, Html(render_test_summary(summary), markdown=(Table(columns, rows),))]


def _example(test: TestInfo) -> str:
    """A test's first failing case in one line, or empty."""
    failing = [c for c in test.cases if c.failing_models]
    if not failing:
        return ""
    case = failing[0]
    model = case.failing_models[0]
    text = case_text(case.text, case.text_pair)
    if case.original_text is not None:
        text = f"{case_text(case.original_text, case.original_text_pair)} -> {text}"
    verdict = case.verdicts[model]
    return f"{text} (expected {case.expected}; {model}: {prediction_text(verdict)})"
