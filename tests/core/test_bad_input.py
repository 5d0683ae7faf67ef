"""Readers given bad bytes: non-UTF-8, BOMs, truncations. Records or an InputError naming
the file, never another exception."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from testaug.core.errors import InputError
from testaug.core.jsonl import read_input_text, read_json, read_jsonl


class Row(BaseModel):
    text: str


def test_non_utf8_jsonl_is_an_input_error_naming_file_line_and_offset(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(InputError) as caught:
        list(read_jsonl(path, Row))
    message = str(caught.value)
    assert message.startswith(f"{path}:2: not UTF-8 text")
    assert "byte 0xe9 at offset 28" in message


def test_non_utf8_json_and_text_are_input_errors_naming_the_file(tmp_path):
    path = tmp_path / "summary.json"
    path.write_bytes(b'{"text":\n "\xff"}')
    with pytest.raises(InputError, match=rf"^{path}:2: not UTF-8 text \(byte 0xff"):
        read_json(path, Row)
    with pytest.raises(InputError, match=rf"^{path}:2: not UTF-8 text"):
        read_input_text(path)


def test_a_truncated_multibyte_character_at_the_end_names_the_last_line(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": "\xc3')
    with pytest.raises(InputError, match=rf"^{path}:2: not UTF-8 text"):
        list(read_jsonl(path, Row))


def test_a_utf8_bom_is_skipped_by_json_and_jsonl_readers(tmp_path):
    lines = tmp_path / "cases.jsonl"
    lines.write_bytes(b'\xef\xbb\xbf{"text": "a"}\n')
    assert [r.text for r in read_jsonl(lines, Row)] == ["a"]
    single = tmp_path / "one.json"
    single.write_bytes(b'\xef\xbb\xbf{"text": "b"}')
    assert read_json(single, Row).text == "b"


_GOOD = [json.dumps({"text": t}).encode() for t in ("a", "é", "x" * 50)]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb"]),
    body=st.one_of(
        st.binary(max_size=200),
        st.lists(st.sampled_from(_GOOD), max_size=4).map(lambda ls: b"\n".join(ls)),
    ),
    cut=st.integers(min_value=0, max_value=300),
)
def test_jsonl_reader_gives_records_or_an_input_error_naming_the_file(tmp_path, prefix, body, cut):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes((prefix + body)[:cut])
    try:
        rows = list(read_jsonl(path, Row))
    except InputError as exc:
        assert all(str(p.file) == str(path) for p in exc.problems)
        assert str(exc).startswith(str(path))
    else:
        assert all(isinstance(r, Row) for r in rows)


def test_readers_that_read_whole_files_name_a_non_utf8_file(tmp_path):
    from rankers.ensemble import MANIFEST, Ensemble
    from rankers.members.lexical import LexicalRanker
    from testaug.review.acceptance import read_calibration

    for name in ("calibration.json", MANIFEST, "lexical.json"):
        (tmp_path / name).write_bytes(b'{"version": "\xfe"}')
    with pytest.raises(InputError, match=rf"^{tmp_path / 'calibration.json'}:1: not UTF-8"):
        read_calibration(tmp_path / "calibration.json")
    with pytest.raises(InputError, match=rf"^{tmp_path / MANIFEST}:1: not UTF-8"):
        Ensemble.load(tmp_path)
    with pytest.raises(InputError, match=rf"^{tmp_path / 'lexical.json'}:1: not UTF-8"):
        LexicalRanker.load(tmp_path)
