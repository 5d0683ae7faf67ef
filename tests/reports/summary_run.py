"""A run folder with a real evaluation (two keyword models, MFT cases and their INV/DIR
perturbations) and its report, for the per-test summary's tests; one case is hostile HTML,
as an LLM could write it."""

from __future__ import annotations

import re
from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase
from tests.cli_runner import run_testaug

# If the page ran it, the title would change (the browser test checks it does not).
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"> <script>document.title='pwned'</script>"
MODELS = ("py:tests.models_fixture:predict", "py:tests.reports.summary_run:predict_brittle")


def _case(text: str, label: str, capability: str, description: str) -> TestCase:
    return TestCase(
        task="sentiment",
        capability=capability,
        description_id=re.sub(r"\W+", "-", description.lower())[:20],
        description=description,
        text=text,
        label=label,
        source="template",
    )


CASES = [
    _case("The food was great.", "positive", "Vocabulary", "Positive words"),
    _case("I love this airline.", "positive", "Vocabulary", "Positive words"),
    _case("The seat was awful.", "negative", "Vocabulary", "Negative words"),
    _case("The crew was not great.", "negative", "Negation", "Negated positive"),
    _case("I do not hate the food.", "positive", "Negation", "Negated negative"),
    _case(f"The staff was bad. {HOSTILE}", "negative", "Negation", "Negated <b>hostile</b>"),
]


def predict_brittle(inputs: list[tuple[str, str | None]]) -> list[dict[str, float]]:
    """Keywords as whole words, but neutral for text without a final full stop or with a
    handle or link: perturbations that should not matter flip it."""
    rows = []
    for text, _ in inputs:
        words = re.findall(r"[a-z]+", text.lower())
        score = sum(w in {"great", "love"} for w in words) - sum(
            w in {"bad", "awful", "hate"} for w in words
        )
        if not text.rstrip().endswith(".") or "@" in text or "http" in text:
            score = 0
        side = "pos" if score > 0 else "neg" if score < 0 else "neutral"
        rows.append({"pos": 0.15, "neg": 0.15, "neutral": 0.15, side: 0.7})
    return rows


def evaluated_run(folder: Path, *, results: bool = True) -> Path:
    """`testaug evaluate` (both models, 3 perturbations per test) and `testaug report` in
    `folder`; without `results`, evaluation.results.jsonl is removed before the report."""
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "cases.jsonl", CASES)
    models = [option for model in MODELS for option in ("--model", model)]
    done = run_testaug(
        folder, "evaluate", "cases.jsonl", *models, "--perturb", "3", "-o", "evaluation.json"
    )
    assert done.returncode == 0, done.stderr
    if not results:
        (folder / "evaluation.results.jsonl").unlink()
    reported = run_testaug(folder, "report", ".")
    assert reported.returncode == 0, reported.stderr
    return folder
