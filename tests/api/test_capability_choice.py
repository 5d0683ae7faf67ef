"""The capabilities a user names in Python: a string is one capability (not its letters),
and a name the suite (or the seed cases) lacks is refused with the closest names, never
an empty result."""

from __future__ import annotations

from pathlib import Path

import pytest

import testaug
from testaug.core.errors import InputError
from testaug.testing.fake_backend import ScriptedBackend

TINY = Path(__file__).parent.parent / "data" / "tiny" / "suite.yaml"


def test_a_string_is_one_capability():
    cases = testaug.expand(TINY, per_template=2, capabilities="Negation")
    assert cases and {case.capability for case in cases} == {"Negation"}


def test_a_mistyped_capability_is_refused_with_the_closest_name():
    with pytest.raises(
        InputError, match=r"no capability 'Negaton' in suite '[^']+'; did you mean 'Negation'"
    ):
        testaug.expand(TINY, per_template=2, capabilities=["Vocabulary", "Negaton"])


def test_a_capability_close_to_none_is_refused_listing_the_suites():
    with pytest.raises(InputError, match="the capabilities are 'Negation', 'Vocabulary'"):
        testaug.expand(TINY, capabilities="Fairness")


def test_generation_takes_a_string_as_one_capability_and_refuses_a_typo(tmp_path):
    seeds = testaug.expand(TINY, per_template=3)
    done = testaug.generate(
        seeds,
        tmp_path / "candidates.jsonl",
        backend=ScriptedBackend(lambda prompt, index: f" A new case {index}. }}\n- {{"),
        prompts_per_description=1,
        samples=1,
        capabilities="Vocabulary",
        cache=tmp_path / "responses.sqlite",
    )
    assert {c.capability for c in done.result.candidates} == {"Vocabulary"}
    with pytest.raises(InputError, match="did you mean 'Vocabulary'"):
        testaug.generate(
            seeds,
            tmp_path / "more.jsonl",
            backend=ScriptedBackend(lambda prompt, index: " x }"),
            capabilities=["Vocabulary", "Vocabluary"],
            cache=tmp_path / "responses.sqlite",
        )
