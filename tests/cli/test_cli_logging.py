"""The command's log lines: those of the rankers package reach stderr as testaug's do."""

from __future__ import annotations

from pathlib import Path

from testaug.core.jsonl import write_jsonl
from tests.cli_runner import run_testaug
from tests.tiny_models import make_labelled

GOOD = ["the crew was good .", "we love the food .", "i like the seat !", "the service is great ."]
BAD = ["the crew was awful .", "we hate the food .", "i never like the seat .", "it is bad ."]

# One lexical member and no per-generator adaptation: training takes a second.
LEXICAL_ONLY = """\
name: lexical
members:
  - name: tfidf-lr
    kind: lexical
    min_count: 1
adaptation:
  enabled: false
"""


def _train(folder: Path, *options: str):
    write_jsonl(folder / "labelled.jsonl", make_labelled(GOOD * 3, BAD * 3))
    (folder / "lexical.yaml").write_text(LEXICAL_ONLY, encoding="utf-8")
    return run_testaug(
        folder, *options, "rankers", "train", "labelled.jsonl", "-o", "out",
        "--config", "lexical.yaml",
    )  # fmt: skip


def test_rankers_train_shows_the_rankers_info_lines_once_on_stderr(tmp_path):
    done = _train(tmp_path)
    assert done.returncode == 0, done.stderr
    # rankers.ensemble_training's line, once (the root logger does not print it again)
    logged = [line for line in done.stderr.splitlines() if "trained tfidf-lr (" in line]
    assert len(logged) == 1 and logged[0].startswith("INFO"), done.stderr
    assert "trained tfidf-lr" not in done.stdout


def test_quiet_hides_the_rankers_info_lines(tmp_path):
    done = _train(tmp_path, "--quiet")
    assert done.returncode == 0, done.stderr
    assert "trained tfidf-lr" not in done.stderr
