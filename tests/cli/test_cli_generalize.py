"""`testaug evaluate generalization` on a tiny model built in the test: the G table, crossfunctional.json
and the report's heat maps; a bad method is a one-line error."""

from __future__ import annotations

from pathlib import Path

from testaug.core.jsonl import write_jsonl
from testaug.fixing.crossfunctional.analysis import read_report
from testaug.reports.run_report import write_report
from tests.cli.test_cli_bad_input import assert_one_line_error
from tests.cli_runner import HANG_TIMEOUT, run_testaug
from tests.fixing.test_crossfunctional import IID, perturbed_suite, suite
from tests.models_fixture import build_tiny_classifier


def test_generalize_prints_the_g_table_and_the_report_shows_the_heat_maps(tmp_path: Path):
    model = build_tiny_classifier(tmp_path / "model", 2)
    write_jsonl(tmp_path / "suite.jsonl", suite())
    write_jsonl(tmp_path / "iid.jsonl", IID)
    write_jsonl(tmp_path / "perturbed.jsonl", perturbed_suite())
    done = run_testaug(
        tmp_path,
        "evaluate",
        "generalization",
        *("--suite-cases", "suite.jsonl", "--iid", "iid.jsonl", "--model", f"hf:{model}"),
        *("--perturbed", "perturbed.jsonl"),
        *("--configs", "iid+t", "--methods", "vanilla,l2", "--scenarios", "seen,type"),
        *("--epochs", "1", "--learning-rate", "1e-3", "-o", "run/crossfunctional.json"),
        env={"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},  # one thread: a tiny model
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "generalization score G" in done.stdout and "l2" in done.stdout
    report = read_report(tmp_path / "run" / "crossfunctional.json")
    assert [pair.name for pair in report.pairs] == ["IID+T / vanilla", "IID+T / l2"]
    assert report.n_iid_train == 2 and report.n_iid_test == 2
    types = {f.id: f.test_type for f in report.functionalities}
    assert types["pos|INV|typos"] == "INV" and types["neg|DIR|add_exclamation"] == "DIR"
    held_out = [m.held_out for r in report.runs if r.scenario == "type" for m in r.models]
    assert sorted(set(held_out)) == ["DIR", "INV", "MFT"]
    written = write_report(tmp_path / "run")
    assert "Cross-functional generalization" in written.sections
    assert (tmp_path / "run" / "report_files" / "crossfunctional_type.png").exists()


def test_generalize_with_an_unknown_method_is_a_one_line_error(tmp_path: Path):
    write_jsonl(tmp_path / "suite.jsonl", suite())
    write_jsonl(tmp_path / "iid.jsonl", IID)
    done = run_testaug(
        tmp_path,
        "evaluate",
        "generalization",
        *("--suite-cases", "suite.jsonl", "--iid", "iid.jsonl", "--model", "hf:nowhere"),
        *("--methods", "sgd"),
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert_one_line_error(done, "sgd", "methods")


def test_generalize_select_tunes_on_t_val_and_prints_the_chosen_setting(tmp_path: Path):
    model = build_tiny_classifier(tmp_path / "model", 2)
    write_jsonl(tmp_path / "suite.jsonl", suite())
    write_jsonl(tmp_path / "iid.jsonl", IID)
    done = run_testaug(
        tmp_path,
        "evaluate",
        "generalization",
        *("--suite-cases", "suite.jsonl", "--iid", "iid.jsonl", "--model", f"hf:{model}"),
        *("--configs", "iid->t", "--scenarios", "seen", "--select", "--trials", "200"),
        *("--grid-learning-rates", "1e-4,1e-3", "--grid-epochs", "1"),
        *("-o", "run/crossfunctional.json"),
        env={"HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"},
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "Settings chosen on the validation tests" in done.stdout
        and "significantly above / below" in done.stdout
    )
    report = read_report(tmp_path / "run" / "crossfunctional.json")
    selection = report.pairs[0].selection
    assert [s.setting.learning_rate for s in selection.scores] == [1e-4, 1e-3]
    assert selection.chosen in [s.setting for s in selection.scores]
    assert report.val_fraction == 0.5 and report.pairs[0].scenarios["seen"].versus_baseline


def test_generalize_with_a_bad_grid_is_an_error(tmp_path: Path):
    write_jsonl(tmp_path / "suite.jsonl", suite())
    write_jsonl(tmp_path / "iid.jsonl", IID)
    done = run_testaug(
        tmp_path,
        "evaluate",
        "generalization",
        *("--suite-cases", "suite.jsonl", "--iid", "iid.jsonl", "--model", "hf:nowhere"),
        *("--select", "--grid-epochs", "one"),
        env={"HF_HUB_OFFLINE": "1"},
    )
    assert done.returncode != 0 and "grid" not in done.stdout
    assert "not a list of numbers" in done.stderr
