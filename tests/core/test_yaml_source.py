"""The YAML reader: lines of fields, and hostile documents (alias bombs, deep nesting)
refused fast with a one-line error naming file and line."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from testaug.core.errors import InputError
from testaug.core.yaml_source import load_yaml
from tests.cli_runner import HANG_TIMEOUT


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol"]']
    for level in range(1, levels + 1):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_naming_file_and_line(tmp_path):
    """A million nodes through aliases (the full bomb runs under a memory cap below)."""
    path = tmp_path / "lexicons.yaml"
    path.write_text(_laughs(levels=6))
    with pytest.raises(InputError) as raised:
        load_yaml(path)
    problem = raised.value.problems[0]
    assert problem.file == path and problem.line is not None
    assert "alias" in problem.message


def test_alias_bomb_stays_within_a_memory_cap_in_a_process_of_its_own(tmp_path):
    """Under a 1 GiB address-space cap, validating a bomb fails with exit 1, not a MemoryError."""
    (tmp_path / "lexicons.yaml").write_text(_laughs())
    script = textwrap.dedent(
        f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from testaug.core.errors import InputError
        from testaug.suites.lexicons import read_lexicon_file
        from pathlib import Path
        try:
            loaded = read_lexicon_file(Path({str(tmp_path / "lexicons.yaml")!r}))
        except InputError as exc:
            print(exc); sys.exit(1)
        print(loaded.problems); sys.exit(1 if loaded.problems else 0)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG_TIMEOUT
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert "alias" in done.stdout


def test_recursive_alias_is_refused(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text("a: &a\n  - *a\n")
    with pytest.raises(InputError, match="alias"):
        load_yaml(path)


@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_deep_nesting_is_refused_with_the_line_and_no_recursion_error(tmp_path, flow):
    path = tmp_path / "suite.yaml"
    levels = 20_000
    if flow:
        path.write_text("[" * levels + "]" * levels + "\n")
    else:
        path.write_text("".join(f"{' ' * i}k:\n" for i in range(levels)))
    with pytest.raises(InputError) as raised:
        load_yaml(path)
    problem = raised.value.problems[0]
    assert "nest" in problem.message and problem.line is not None and problem.file == path


def test_a_few_aliases_and_merge_keys_still_load_with_their_lines(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(
        "base: &base\n  lr: 0.1\n  words: [a, b]\nmember:\n  <<: *base\n  lr: 0.2\nagain: *base\n"
    )
    document = load_yaml(path)
    assert document.data["member"] == {"lr": 0.2, "words": ["a", "b"]}
    assert document.data["again"] == {"lr": 0.1, "words": ["a", "b"]}
    assert document.line_of(("member", "lr")) == 6


def test_a_suite_whose_lexicons_are_an_alias_bomb_is_invalid_naming_the_lexicons_file(tmp_path):
    from testaug.core.bundled import resolve_suite
    from testaug.suites.load import load_suite

    suite = tmp_path / "suite.yaml"
    suite.write_text(resolve_suite("sentiment").read_text())
    (tmp_path / "lexicons.yaml").write_text(_laughs(levels=6))
    with pytest.raises(InputError) as raised:
        load_suite(suite)
    assert any(
        p.file == tmp_path / "lexicons.yaml" and "alias" in p.message for p in raised.value.problems
    )
