"""`testaug templates induce` then `testaug expand` on its output, as a user runs them."""

from __future__ import annotations

import json

import pytest

from testaug.core.bundled import resolve_suite
from testaug.core.jsonl import read_jsonl, write_jsonl
from testaug.core.records import TestCase
from testaug.suites.cases import expand_suite
from testaug.suites.inflection import inflect
from testaug.suites.load import load_suite
from tests.cli_runner import run_testaug

pytest.importorskip("spacy")


def test_induced_templates_expand_into_new_expansion_cases_not_already_in_the_suite(tmp_path):
    seeds = list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=2, seed=0))
    write_jsonl(tmp_path / "cases.jsonl", seeds)
    verb_seeds = [s for s in seeds if "pos_verb" in s.fills and "air_service" in s.fills][:3]
    assert verb_seeds
    accepted = [
        TestCase(
            **s.model_dump(
                include={"task", "capability", "description_id", "description", "label"}
            ),
            text=f"Nobody {inflect(s.fills['pos_verb'], 'vbd')} that {s.fills['air_service']}.",
            source="llm",
            meta={"seed_case_ids": [s.id]},
        )
        for s in verb_seeds
    ] + [
        TestCase(
            **verb_seeds[0].model_dump(
                include={"task", "capability", "description_id", "description", "label"}
            ),
            text="Nothing here reuses a word.",
            source="llm",
            meta={"seed_case_ids": [verb_seeds[0].id]},
        )
    ]
    write_jsonl(tmp_path / "accepted.jsonl", accepted)

    induced = run_testaug(tmp_path, "templates", "induce", "accepted.jsonl", "-o", "templates.yaml")
    assert induced.returncode == 0, induced.stderr
    assert "1 no_slot_word" in induced.stdout
    text = (tmp_path / "templates.yaml").read_text()
    assert "Nobody {vbd:pos_verb} that {air_service}." in text
    assert "source: expansion" in text
    records = [json.loads(line) for line in (tmp_path / "templates.induced.jsonl").open()]
    assert {r["case_id"] for r in records} <= {c.id for c in accepted}

    expanded = run_testaug(
        tmp_path,
        "expand",
        "templates.yaml",
        "-o",
        "expanded.jsonl",
        "--exclude",
        "cases.jsonl",
        "--exclude",
        "accepted.jsonl",
    )
    assert expanded.returncode == 0, expanded.stderr
    cases = list(read_jsonl(tmp_path / "expanded.jsonl", TestCase))
    assert cases and {c.source for c in cases} == {"expansion"}
    assert not {c.id for c in cases} & {c.id for c in [*seeds, *accepted]}
    assert f"{len(accepted) - 1} cases left out" in expanded.stdout
    assert {c.template_id for c in cases} <= {r["id"] for r in records}
    assert {c.description for c in cases} <= {s.description for s in verb_seeds}
    assert any(c.text.startswith("Nobody adored that") for c in cases)


def _accepted_from(seed: TestCase, text: str, **changes: str) -> TestCase:
    fields = seed.model_dump(
        include={"task", "capability", "description_id", "description", "label"}
    )
    return TestCase(
        **{**fields, **changes}, text=text, source="llm", meta={"seed_case_ids": [seed.id]}
    )


def test_induce_that_would_write_an_invalid_suite_fails_naming_the_case_and_keeps_outputs(
    tmp_path,
):
    seeds = list(expand_suite(load_suite(resolve_suite("sentiment")), per_template=2, seed=0))
    write_jsonl(tmp_path / "cases.jsonl", seeds)
    seed = next(s for s in seeds if "pos_verb" in s.fills and "air_service" in s.fills)
    text = f"Nobody {inflect(seed.fills['pos_verb'], 'vbd')} that {seed.fills['air_service']}."
    write_jsonl(tmp_path / "accepted.jsonl", [_accepted_from(seed, text)])
    good = run_testaug(tmp_path, "templates", "induce", "accepted.jsonl", "-o", "templates.yaml")
    assert good.returncode == 0, good.stderr
    outputs = ["templates.yaml", "templates.lexicons.yaml", "templates.induced.jsonl"]
    before = {name: (tmp_path / name).read_bytes() for name in outputs}

    # The same description under a second capability: the induced suite repeats it.
    clash = _accepted_from(
        seed, f"Truly {seed.fills['air_service']} here.", capability="Another capability"
    )
    write_jsonl(tmp_path / "bad.jsonl", [_accepted_from(seed, text), clash])
    bad = run_testaug(
        tmp_path,
        "templates",
        "induce",
        "bad.jsonl",
        "--seed-cases",
        "cases.jsonl",
        "-o",
        "templates.yaml",
    )
    assert bad.returncode == 1, bad.stderr
    assert "Traceback" not in bad.stderr
    assert clash.id in bad.stderr
    assert "duplicate description" in bad.stderr
    assert "templates.yaml" not in bad.stderr
    assert {name: (tmp_path / name).read_bytes() for name in outputs} == before
