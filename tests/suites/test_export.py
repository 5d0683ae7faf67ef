"""Export (issue 21): a suite's cases as CSV, JSONL, Parquet and a Hugging Face `datasets`
folder, loaded back with pandas and `datasets.load_from_disk` and compared row by row;
imported back as the same cases; streamed, and atomic when the input breaks midway."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import datasets
import pandas as pd
import pytest

from testaug.core.errors import InputError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase, description_id
from testaug.core.runs import remove_stale_leftovers
from testaug.suites import export
from testaug.suites.cases import expand_suite
from testaug.suites.export import EXPORT_COLUMNS, case_row, export_cases, export_format
from testaug.suites.load import load_suite
from testaug.suites.tables import read_table
from tests.cli_runner import HANG_TIMEOUT

TINY = Path(__file__).parent.parent / "data" / "tiny" / "suite.yaml"


def mixed_cases() -> list[TestCase]:
    """Template cases of the tiny suite and cases with what templates lack: a pair, a label
    set, meta, a generated source, text with commas, quotes and a line break."""
    base = {"capability": "Vocabulary", "description": "Words."}
    ids = {
        task: description_id(task, "Vocabulary", "Words.") for task in ("sentiment", "paraphrase")
    }
    return [
        *expand_suite(load_suite(TINY), per_template=3, seed=1),
        TestCase(
            task="sentiment",
            text='It was "fine",\nI guess.',
            label=("neutral", "positive"),
            source="llm",
            meta={"prompt": "p1", "score": 0.5},
            description_id=ids["sentiment"],
            **base,
        ),
        TestCase(
            task="paraphrase",
            text="Is it safe?",
            text_pair="Is it not safe?",
            label="not_duplicate",
            test_type="DIR",
            description_id=ids["paraphrase"],
            **base,
        ),
    ]


def load(path: Path, fmt: str) -> list[dict]:
    """The exported rows as the reading library gives them, None for a missing value."""
    if fmt == "hf":
        return datasets.load_from_disk(str(path)).to_list()
    frame = {
        "csv": lambda: pd.read_csv(path, dtype=str, keep_default_na=False),
        "jsonl": lambda: pd.read_json(path, lines=True, dtype=False),
        "parquet": lambda: pd.read_parquet(path),
    }[fmt]()
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    if fmt == "csv":  # CSV has no missing value: an empty cell is ""
        rows = [{k: (v if v != "" else None) for k, v in row.items()} for row in rows]
    return rows


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("cases.csv", "csv"), ("cases.jsonl", "jsonl"), ("cases.parquet", "parquet"), ("hf", "hf")],
)
def test_each_format_loads_back_with_pandas_or_datasets_as_the_same_rows(tmp_path, name, fmt):
    cases = mixed_cases()
    path = tmp_path / name
    assert export_format(path) == fmt
    assert export_cases(iter(cases), path, fmt) == len(cases)
    rows = load(path, fmt)
    assert rows == [case_row(case) for case in cases]
    assert list(rows[0]) == list(EXPORT_COLUMNS)
    assert [p.name for p in tmp_path.iterdir()] == [name]  # no temporary file left


@pytest.mark.parametrize("name", ["cases.csv", "cases.jsonl"])
def test_an_exported_table_imports_back_as_the_same_cases(tmp_path, name):
    cases = mixed_cases()
    path = tmp_path / name
    export_cases(cases, path, export_format(path))
    back = list(read_table(path))
    assert back == cases


def test_a_label_set_is_joined_by_a_bar_and_fills_and_meta_are_json(tmp_path):
    row = case_row(mixed_cases()[-2])
    assert row["label"] == "neutral|positive"
    assert json.loads(row["meta"]) == {"prompt": "p1", "score": 0.5}
    assert row["fills"] == "{}" and row["template"] is None


def test_a_bad_case_midway_leaves_the_earlier_export_as_it_was(tmp_path):
    source = tmp_path / "cases.jsonl"
    write_jsonl(source, mixed_cases())
    with source.open("a") as out:
        out.write('{"text": "no other field"}\n')
    for name in ("out.csv", "out.parquet", "hf"):
        path = tmp_path / name
        export_cases(mixed_cases()[:2], path, export_format(path))
        before = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in _files(path))
        with pytest.raises(InputError, match=r"cases.jsonl:\d+"):
            export_cases(export.source_cases(str(source)), path, export_format(path))
        after = sorted((p.relative_to(tmp_path), p.read_bytes()) for p in _files(path))
        assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cases.jsonl",
        "hf",
        "out.csv",
        "out.parquet",
    ]


def _files(path: Path) -> list[Path]:
    return [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]


def test_an_existing_folder_is_replaced_only_by_a_whole_export(tmp_path):
    path = tmp_path / "hf"
    export_cases(mixed_cases()[:2], path, "hf")
    export_cases(mixed_cases(), path, "hf")
    assert len(datasets.load_from_disk(str(path))) == len(mixed_cases())


def test_an_unknown_suffix_or_format_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot tell the format"):
        export_format(tmp_path / "cases.xlsx")
    with pytest.raises(InputError, match="--format: expected one of csv, jsonl, parquet, hf"):
        export_format(tmp_path / "cases.csv", "xlsx")
    assert export_format(tmp_path / "cases.csv", "hf") == "hf"


EXPORT_IN_A_PROCESS = """
import sys
from pathlib import Path
from testaug.core.records import TestCase
from testaug.suites import export
mode, n, out, fmt = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
export.BATCH_ROWS = 500
base = {"capability": "Vocabulary", "description_id": "d", "description": "Words."}
stream = (
    TestCase(task="sentiment", text=f"case number {i} was fine " * 8, label="positive", **base)
    for i in range(n)
)
export.export_cases([next(stream)], out.with_name("warm-" + out.name), fmt)  # libraries loaded
written = export.export_cases(stream, out, fmt) if mode == "export" else 0
with open("/proc/self/status") as status:
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(written, peak)
"""
PROC_STATUS = Path("/proc/self/status")


def peak_rss_kib(tmp_path: Path, mode: str, n: int, name: str, fmt: str) -> tuple[int, int]:
    """(cases written, peak resident memory in KiB) of a fresh process that loads what an
    export of `fmt` needs and then, in mode "export", exports n - 1 cases (mode "baseline"
    exports none). The peak is VmHWM, this process's own since it started, Arrow's buffers
    included; getrusage's ru_maxrss would carry over the peak of the process that forked it."""
    import subprocess
    import sys

    out = tmp_path / f"{mode}-{name}"
    done = subprocess.run(
        [sys.executable, "-c", EXPORT_IN_A_PROCESS, mode, str(n), str(out), fmt],
        capture_output=True, text=True, timeout=HANG_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    written, peak = done.stdout.split()[-2:]
    return int(written), int(peak)


@pytest.mark.slow
@pytest.mark.skipif(not PROC_STATUS.exists(), reason="reads peak memory from /proc (Linux)")
@pytest.mark.parametrize(
    ("name", "fmt"), [("c.csv", "csv"), ("c.parquet", "parquet"), ("hf", "hf")]
)
def test_export_streams_resident_memory_stays_flat_as_the_cases_grow(tmp_path, name, fmt):
    n = 120_000
    _, baseline = peak_rss_kib(tmp_path, "baseline", n, name, fmt)
    written, exporting = peak_rss_kib(tmp_path, "export", n, name, fmt)
    assert written == n - 1
    # Held in memory at once, these cases take over 200 MiB more than the baseline (measured:
    # 206-217 MiB, whichever the format); streamed, under 50 MiB.
    assert exporting - baseline < 100 * 1024, (baseline, exporting)


def test_a_table_or_a_pickle_as_the_source_is_an_input_error_saying_what_to_do(tmp_path):
    table = tmp_path / "table.csv"
    table.write_text("capability,description,text,label\nV,d,Great.,positive\n")
    with pytest.raises(InputError, match="import a table first"):
        export.source_cases(str(table))
    pickled = tmp_path / "suite.pkl"
    pickled.write_bytes(b"\x80\x04N.")
    with pytest.raises(InputError, match="a pickle is never read"):
        export.source_cases(str(pickled))


@pytest.mark.parametrize("name", ["hf", "cases.csv"])
def test_an_existing_folder_of_other_files_is_refused_and_left_as_it_was(tmp_path, name):
    folder = tmp_path / name
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    with pytest.raises(InputError, match="not a datasets folder"):
        export_cases(mixed_cases(), folder, export_format(folder))
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]


FORMULA_TEXTS = ['=HYPERLINK("http://x","y")', "+1 great", "-bad service", "@user", "'=kept"]


def test_csv_cells_a_spreadsheet_would_evaluate_start_with_a_quote_and_import_back(tmp_path):
    cases = [
        case.model_copy(update={"text": text})
        for case, text in zip(mixed_cases(), FORMULA_TEXTS, strict=False)
    ]
    path = tmp_path / "cases.csv"
    export_cases(cases, path, "csv")
    texts = [row["text"] for row in pd.read_csv(path, dtype=str).to_dict("records")]
    assert texts == ["'" + text for text in FORMULA_TEXTS]
    assert [case.text for case in read_table(path)] == FORMULA_TEXTS


def test_an_export_sweeps_what_killed_exports_of_that_output_left_over_an_hour_ago(tmp_path):
    hex_ = "0123456789abcdef0123456789abcdef"
    then = time.time() - 2 * 3600
    stale_folder = tmp_path / f".hf.{hex_}.tmp"
    (stale_folder / "data").mkdir(parents=True)
    (stale_folder / "data" / "shard.arrow").write_bytes(b"x" * 100)
    stale = [stale_folder, tmp_path / f".hf.{hex_}.tmp.arrow", tmp_path / f".hf.{hex_[::-1]}.tmp"]
    stale[1].write_bytes(b"y" * 100)
    stale[2].write_bytes(b"z")
    for path in [*stale_folder.rglob("*"), *stale]:
        os.utime(path, (then, then))
    fresh = tmp_path / f".hf.{'f' * 32}.tmp.arrow"  # an export running now
    fresh.write_bytes(b"w")
    other = tmp_path / f".other.csv.{hex_}.tmp"  # another output's: not this export's to sweep
    other.write_bytes(b"v")
    os.utime(other, (then, then))
    export_cases(mixed_cases()[:2], tmp_path / "hf", "hf")
    assert not any(path.exists() for path in stale)
    assert fresh.exists() and other.exists()
    assert remove_stale_leftovers(tmp_path / "hf", older_than=0) == (1, 1)  # bytes counted
