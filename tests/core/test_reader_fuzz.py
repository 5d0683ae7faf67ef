"""Hypothesis fuzz of every user-facing reader through the command: a valid file
of a working folder damaged at random (bytes inserted, truncated, a value of another type,
a huge line, a BOM, bytes that are not UTF-8, JSON or YAML that Python cannot hold). The
command either succeeds or exits 1 with one "error:" line naming the file, no traceback,
and every file it found (earlier outputs included) as it was; see
tests/core/reliability_trials.py for the readers and the property.

TESTAUG_FUZZ_EXAMPLES sets the examples per reader (default 8) for a longer hunt."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.core.reliability_trials import READERS, Reader, build_workspace, run_trial
from tests.core.trial_damages import (
    DEEP,
    HUGE_NUMBER,
    huge_line,
    insert_bytes,
    raw_value,
    replace_value,
    truncate,
    with_bom,
)

EXAMPLES = int(os.environ.get("TESTAUG_FUZZ_EXAMPLES", "8"))

where = st.floats(min_value=0.0, max_value=1.0)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=12)
    | st.sampled_from(["", " ", "positive", "bogus", "{", "\u202e", "a\nb"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
bad_bytes = st.sampled_from(
    [b"\xff", b"\xe9", b"\xc3", b"\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00"]
)
raw_texts = st.sampled_from(
    [DEEP, HUGE_NUMBER, '"\\ud800"', '"x\\udfff"', "NaN", "-Infinity", "1e999", "[]", "{}"]
)
one_damage = st.one_of(
    st.builds(insert_bytes, where, st.binary(min_size=1, max_size=24)),
    st.builds(insert_bytes, where, bad_bytes),
    st.builds(truncate, where),
    st.builds(huge_line, where, st.sampled_from([100_000, 2_000_000])),
    st.builds(replace_value, st.integers(-5, 200), json_values),
    st.builds(raw_value, st.integers(-5, 200), raw_texts),
)
damages = one_damage | st.builds(with_bom, st.none() | one_damage)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("fuzz"))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("trials")


_numbers = itertools.count()


@pytest.mark.parametrize("reader", READERS, ids=[r.name for r in READERS])
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),  # CI replays one fixed draw; a local run hunts anew
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(damage=damages)
def test_a_damaged_input_succeeds_or_fails_cleanly_naming_the_file(
    workspace: Path, scratch: Path, reader: Reader, damage
):
    folder = scratch / f"t{next(_numbers)}"
    try:
        broken = run_trial(workspace, folder, reader, damage)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert not broken, "\n".join(broken)
