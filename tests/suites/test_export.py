"""Export (issue 21): a suite's cases as CSV, JSONL, Parquet and a Hugging Face `datasets`
folder, loaded back with pandas and `datasets.load_from_disk` and compared row by row;
imported back as the same cases; streamed, and atomic when the input breaks midway."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pytest

from testaug.core.errors import InputError
from testaug.core.jsonl import write_jsonl
from testaug.core.records import TestCase, description_id
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
import resource, sys
from pathlib import Path
from testaug.core.records import TestCase
from testaug.suites import export
n, out, fmt = int(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
export.BATCH_ROWS = 500
base = {"capability": "Vocabulary", "description_id": "d", "description": "Words."}
stream = (
    TestCase(task="sentiment", text=f"case number {i} was fine " * 8, label="positive", **base)
    for i in range(n)
)
first = next(stream)
export.export_cases([first], out.with_name("warm-" + out.name), fmt)  # every library of the format loaded
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
export.export_cases(stream, out, fmt)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(after - before)
"""


def peak_growth_kib(tmp_path: Path, n: int, name: str, fmt: str) -> int:
    """How much a fresh process's peak resident memory grows (KiB) while it exports n cases
    (Arrow's buffers included, which tracemalloc cannot see)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", EXPORT_IN_A_PROCESS, str(n), str(tmp_path / f"{n}{name}"), fmt],
        capture_output=True, text=True, check=True, timeout=HANG_TIMEOUT,
    )  # fmt: skip
    return int(done.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "fmt"), [("c.csv", "csv"), ("c.parquet", "parquet"), ("hf", "hf")]
)
def test_export_streams_resident_memory_stays_flat_as_the_cases_grow(tmp_path, name, fmt):
    small, large = (peak_growth_kib(tmp_path, n, name, fmt) for n in (10_000, 60_000))
    # 6x the cases (about 60 MB of text held at once, were it not streamed), not 6x the memory
    assert large < 2 * small + 30 * 1024, (small, large)


def test_a_table_or_a_pickle_as_the_source_is_an_input_error_saying_what_to_do(tmp_path):
    table = tmp_path / "table.csv"
    table.write_text("capability,description,text,label\nV,d,Great.,positive\n")
    with pytest.raises(InputError, match="import a table first"):
        export.source_cases(str(table))
    pickled = tmp_path / "suite.pkl"
    pickled.write_bytes(b"\x80\x04N.")
    with pytest.raises(InputError, match="a pickle is never read"):
        export.source_cases(str(pickled))
