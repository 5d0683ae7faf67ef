"""Bad input files through the command: exit 1 with one line naming the file, no traceback,
and an earlier output left as it was."""

import json

from tests.cli_runner import run_testaug

HEADER = b"capability,description,text,label\n"


def _import(tmp_path, content: bytes, name: str = "table.csv"):
    table = tmp_path / name
    table.write_bytes(content)
    out = tmp_path / "cases.jsonl"
    result = run_testaug(
        tmp_path, "suite", "import", str(table), "-o", str(out), "--task", "sentiment"
    )
    return table, out, result


def _one_line_error(result, starts: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {starts}"), result.stderr


def test_suite_import_of_a_non_utf8_csv_names_file_and_line(tmp_path):
    table, out, result = _import(tmp_path, HEADER + b"Vocabulary,d,Caf\xe9.,positive\n")
    _one_line_error(result, f"{table}:2: not UTF-8 text (byte 0xe9")
    assert not out.exists()


def test_suite_import_of_a_csv_with_a_bom_imports_its_rows(tmp_path):
    _, out, result = _import(tmp_path, b"\xef\xbb\xbf" + HEADER + b"Vocabulary,d,Great.,positive\n")
    assert result.returncode == 0 and "imported 1 cases" in result.stdout
    assert json.loads(out.read_text())["capability"] == "Vocabulary"


def test_suite_import_without_a_text_column_fails_and_keeps_the_earlier_output(tmp_path):
    (tmp_path / "cases.jsonl").write_text("earlier\n")
    table, out, result = _import(
        tmp_path, b"capability,description,sentense,label\nVocabulary,d,Great.,positive\n"
    )
    _one_line_error(result, f"{table}:1: no text column: found 'capability'")
    assert "expected one of text, sentence" in result.stderr
    assert out.read_text() == "earlier\n"


def test_suite_import_where_every_row_is_rejected_fails(tmp_path):
    table, out, result = _import(tmp_path, HEADER + b"Vocabulary,d,Great.,7\n")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"error: {table}: no test case: all 1 rows rejected (first, line 2:" in result.stderr
    assert not out.exists()


def test_suite_import_of_a_csv_field_over_128_kib_imports_it(tmp_path):
    text = b"x" * 200_000
    _, out, result = _import(tmp_path, HEADER + b"Vocabulary,d," + text + b",positive\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["text"] == text.decode()


def test_suite_stats_of_a_non_utf8_case_file_names_file_and_line(tmp_path):
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b'{"text": "\xff"}\n')
    result = run_testaug(tmp_path, "suite", "stats", str(cases))
    _one_line_error(result, f"{cases}:1: not UTF-8 text (byte 0xff at offset 10)")


def test_report_on_a_run_with_a_non_utf8_stage_file_names_file_and_line(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "candidates.jsonl").write_bytes(b'{"text": "a"}\n{"text": "\x80"}\n')
    result = run_testaug(tmp_path, "report", str(run))
    _one_line_error(result, f"{run / 'candidates.jsonl'}:2: not UTF-8 text (byte 0x80")
    assert sorted(p.name for p in run.iterdir()) == ["candidates.jsonl"]
