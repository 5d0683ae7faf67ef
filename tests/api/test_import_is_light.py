"""`import testaug` and the names it offers stay light: no torch, transformers, Prefect,
spaCy or pandas until a function that needs them runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "prefect", "spacy", "pandas")


def _heavy_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return [name for name in done.stdout.strip().split(",") if name]


def test_importing_testaug_loads_no_heavy_library():
    assert _heavy_after("import testaug") == []


def test_listing_and_resolving_the_api_names_loads_no_heavy_library():
    code = (
        "import testaug\n"
        "names = dir(testaug)\n"
        "assert 'evaluate' in names and 'TestCase' in names, names\n"
        "for name in ('load_suite', 'expand', 'evaluate', 'report', 'generate', 'rank',\n"
        "             'retest', 'adapt', 'run_pipeline', 'TestCase', 'Suite', 'RunConfig'):\n"
        "    getattr(testaug, name)"
    )
    assert _heavy_after(code) == []


def test_every_name_in_all_resolves():
    import testaug

    missing = [name for name in testaug.__all__ if getattr(testaug, name, None) is None]
    assert missing == []


def test_an_unknown_name_is_an_attribute_error():
    import testaug

    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        testaug.evaluat  # noqa: B018
