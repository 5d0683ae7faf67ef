"""`testaug patch-eval` on a tiny model built in the test, and its section of the report."""

from __future__ import annotations

import json
from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.reports.run_report import write_report
from tests.cli_runner import HANG_TIMEOUT, run_testaug
from tests.fixing.test_patching import suites
from tests.models_fixture import build_tiny_classifier


def test_patch_eval_prints_err_percent_per_suite_and_the_report_shows_it(tmp_path: Path):
    model = build_tiny_classifier(tmp_path / "model", 2)
    suite_a, suite_b = suites()
    write_jsonl(tmp_path / "template.jsonl", suite_a)
    write_jsonl(tmp_path / "augmented.jsonl", suite_b)
    done = run_testaug(
        tmp_path,
        *("patch-eval", "--suite-a", "template.jsonl", "--suite-b", "augmented.jsonl"),
        *("--model", f"hf:{model}", "--seeds", "2", "--epochs", "1", "--learning-rate", "1e-3"),
        *("--json", "-o", "patching.json"),
        env={"HF_HUB_OFFLINE": "1"},
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["unit"] == "percent" and summary["seeds"] == [42, 43]
    assert summary["suite_names"] == ["template", "augmented"]
    overall = summary["overall"]
    assert overall["n_runs"] == 2
    runs = summary["runs"]
    mean_unpatched = 100 * sum(r["err_unpatched"] for r in runs) / 2
    assert abs(overall["err_unpatched"]["mean"] - mean_unpatched) < 1e-9
    assert 0.0 <= overall["err_patched_a"]["mean"] <= 100.0
    assert set(summary["per_capability"])

    written = write_report(tmp_path)
    assert "Patching" in written.sections
    markdown = written.markdown.read_text()
    unpatched = overall["err_unpatched"]
    assert f"| overall | {unpatched['mean']:.1f} ± {unpatched['std']:.1f} |" in markdown
