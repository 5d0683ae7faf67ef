"""Bad input files through the command: exit 1 with one line naming the file, no traceback,
and an earlier output left as it was."""

import json

import pytest

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


# Options are checked as the command line is read, before any work (issue 44, findings 17
# and 18): every output option of every visible command refuses a path it cannot write to,
# every number option a number that is not finite, each with one line naming the option.

# The options that name where a command writes; a file unless listed as a folder.
OUTPUT_NAMES = {
    "--output", "--junit", "--plot", "--scored-tree", "--cache", "--verdicts", "--annotations",
    "--run-dir", "--rankers-out", "--work", "--data-dir",
}  # fmt: skip
FOLDER_OUTPUTS = {
    ("run", "--run-dir"), ("report", "--output"), ("rankers train", "--output"),
    ("review candidates retrain", "--rankers-out"), ("review server", "--data-dir"),
    ("tree fix", "--work"),
}  # fmt: skip
FILE_OR_FOLDER_OUTPUTS = {("suite export", "--output")}  # a datasets folder or a table
READ_ONLY = {("review candidates retrain", "--verdicts")}

# A bad value of each kind of output, and the start of the error it gives (after the flag).
BAD_OUTPUTS = {
    "file": {
        ".": "expected a file, got the folder '.'",
        "": "expected a file path, got ''",
        "/": "expected a file, got the folder '/'",
        "..": "expected a file, got the folder '..'",
        "out/": "expected a file, got the folder 'out/'",
        "folder": "expected a file, got the folder 'folder'",
        "table.csv/x.jsonl": "'table.csv' is a file, not a folder",
    },
    "folder": {
        "": "expected a folder path, got ''",
        "table.csv": "expected a folder, got the file 'table.csv'",
        "table.csv/x": "'table.csv' is a file, not a folder",
    },
    "file or folder": {
        "": "expected a file or folder path, got ''",
        ".": "expected a file or folder name, got '.'",
        "/": "expected a file or folder name, got '/'",
        "..": "expected a file or folder name, got '..'",
        "table.csv/x.jsonl": "'table.csv' is a file, not a folder",
    },
}
NON_FINITE = ("inf", "-inf", "nan", "1e999")


def visible_parameters() -> list[tuple[str, object]]:
    """(command, parameter) for each parameter of every visible command of `testaug`."""
    import typer

    from testaug.cli import app

    def walk(command, words):
        subcommands = getattr(command, "commands", None)
        if subcommands is None:
            shown = [param for param in command.params if not getattr(param, "hidden", False)]
            return [(" ".join(words), param) for param in shown]  # not the old spellings
        return [
            found
            for name, sub in subcommands.items()
            if not sub.hidden
            for found in walk(sub, [*words, name])
        ]

    return walk(typer.main.get_command(app), [])


def long_name(param) -> str:
    return max(param.opts, key=len)


def output_trials() -> list[tuple[str, str, str, str]]:
    """(command, option, bad value, expected error) for every output option."""
    trials = []
    for command, param in visible_parameters():
        flag = long_name(param)
        if flag not in OUTPUT_NAMES or (command, flag) in READ_ONLY:
            continue
        kind = (
            "folder"
            if (command, flag) in FOLDER_OUTPUTS
            else "file or folder"
            if (command, flag) in FILE_OR_FOLDER_OUTPUTS
            else "file"
        )
        trials += [(command, flag, value, error) for value, error in BAD_OUTPUTS[kind].items()]
    return trials


def number_trials() -> list[tuple[str, str, str]]:
    """(command, option, value) for every number option and each value not finite."""
    return [
        (command, long_name(param), value)
        for command, param in visible_parameters()
        if getattr(param, "type_descriptor", None) is not None
        and param.type_descriptor.annotation is float
        for value in NON_FINITE
    ]


OUTPUT_TRIALS = output_trials()
NUMBER_TRIALS = number_trials()


def files_under(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(
    ("command", "flag", "value", "error"),
    OUTPUT_TRIALS,
    ids=[f"{c} {f} {v!r}" for c, f, v, _ in OUTPUT_TRIALS],
)
def test_an_output_option_refuses_a_path_it_cannot_write_before_any_work(
    tmp_path, command, flag, value, error
):
    (tmp_path / "table.csv").write_bytes(HEADER)
    (tmp_path / "folder").mkdir()
    before = files_under(tmp_path)
    result = run_testaug(tmp_path, *command.split(), flag, value)
    _one_line_error(result, f"{flag}: {error}")
    assert files_under(tmp_path) == before


@pytest.mark.parametrize(
    ("command", "flag", "value"), NUMBER_TRIALS, ids=[" ".join(t) for t in NUMBER_TRIALS]
)
def test_a_number_option_refuses_a_number_that_is_not_finite(tmp_path, command, flag, value):
    result = run_testaug(tmp_path, *command.split(), flag, value)
    _one_line_error(result, f"{flag}: expected a finite number, got {value!r}")


LLM_PARAMETERS = [(name, value) for name in ("timeout", "rpm") for value in NON_FINITE]


@pytest.mark.parametrize(("name", "value"), LLM_PARAMETERS)
def test_a_model_spec_refuses_a_number_that_is_not_finite(tmp_path, name, value):
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"task": "sentiment", "capability": "Vocabulary", "description_id": "d", '
        '"description": "A positive sentence.", "label": "positive", "source": "template", '
        '"text": "Great."}\n'
    )
    spec = f"llm:openai:m?{name}={value}"
    result = run_testaug(tmp_path, "evaluate", "models", str(cases), "--model", spec)
    _one_line_error(result, f"--model: option {name}={value!r} is not a finite number in")


def test_the_reliability_page_states_the_option_trials():
    from tests.core.test_reliability_counts import reliability_section, sentence

    outputs = {(command, flag) for command, flag, _, _ in OUTPUT_TRIALS}
    numbers = {(command, flag) for command, flag, _ in NUMBER_TRIALS}
    expected = (
        f"Option trials: {len(OUTPUT_TRIALS)} bad output paths on {len(outputs)} output "
        f"options, {len(NUMBER_TRIALS)} numbers that are not finite on {len(numbers)} number "
        f"options and {len(LLM_PARAMETERS)} on llm: spec parameters, each refused with one "
        "error line naming the option (tests/core/test_bad_input_cli.py)"
    )
    assert expected in sentence(reliability_section()), (
        f"docs/how-to/reliability.md should say: {expected}"
    )
