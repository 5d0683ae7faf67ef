"""INV and DIR test cases made by perturbing suite cases (CheckList's perturbation tests).

A `PerturbedCase` keeps the original `TestCase`, the perturbed input(s), the
perturbation's name and what the model should do (an `Expectation`), so a
model's prediction on it is checked against its prediction on the original.
Each case gets its own random stream, derived from the seed, the perturbation
and the case id, so adding or removing cases never changes another case's
perturbations.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import model_validator

from testaug.core.errors import TestAugError
from testaug.core.records import Record, Source, TestCase, content_id
from testaug.evaluation.expectations import Expectation
from testaug.evaluation.perturbations.catalogue import Inputs, Perturbation, Which, get_perturbation
from testaug.evaluation.perturbations.entities import parse_texts

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

logger = logging.getLogger(__name__)


def perturbed_case_id(
    original_id: str,
    text: str,
    text_pair: str | None,
    perturbation: str,
    expectation: Expectation,
) -> str:
    """A stable id: a hash of the original's id, the perturbed input(s) and the test."""
    return content_id(
        "perturbed", original_id, text, text_pair, perturbation, expectation.model_dump()
    )


class PerturbedCase(Record):
    """A perturbation test case: the original case, its perturbed input(s) and the expectation."""

    id: str = ""
    original: TestCase
    text: str
    text_pair: str | None = None
    perturbation: str
    test_type: Literal["INV", "DIR"]
    expectation: Expectation

    @model_validator(mode="after")
    def _check(self) -> PerturbedCase:
        if self.test_type != self.expectation.test_type:
            raise ValueError(
                f"a {self.test_type} case cannot have a {self.expectation.kind} expectation"
            )
        expected = perturbed_case_id(
            self.original.id, self.text, self.text_pair, self.perturbation, self.expectation
        )
        if not self.id:
            object.__setattr__(self, "id", expected)
        elif self.id != expected:
            raise ValueError(f"id {self.id!r} does not match the content (expected {expected!r})")
        return self

    @property
    def capability(self) -> str:
        """The original case's capability."""
        return self.original.capability

    @property
    def description_id(self) -> str:
        """The original case's description id."""
        return self.original.description_id

    @property
    def description(self) -> str:
        """The original case's description."""
        return self.original.description

    @property
    def source(self) -> Source:
        """Where the original case came from (template, llm, expansion)."""
        return self.original.source

    @property
    def inputs(self) -> Inputs:
        """The perturbed input(s), as a model takes them."""
        return (self.text, self.text_pair)


def case_rng(seed: int, perturbation: str, case_id: str) -> random.Random:
    """The random stream of one case under one perturbation (stable across runs)."""
    return random.Random(f"{seed}:{perturbation}:{case_id}")


def perturb_inputs(
    perturbation: str | Perturbation,
    text: str,
    text_pair: str | None,
    rng: random.Random,
    *,
    which: Which = "both",
    n: int = 1,
    docs: tuple[Doc | None, Doc | None] = (None, None),
    **options: Any,
) -> list[Inputs]:
    """Up to n perturbed versions of a single input or a pair.

    A single input is perturbed whatever `which` says. For a pair, "first" or
    "second" perturbs that side only; "both" perturbs both sides: entity
    perturbations with one replacement shared by both (the same name changed in
    both questions), the others independently, pairing their i-th outputs.
    """
    spec = get_perturbation(perturbation)
    if text_pair is None or which == "first":
        return [(new, text_pair) for new in _apply(spec, text, rng, n, docs[0], options)]
    if which == "second":
        return [(text, new) for new in _apply(spec, text_pair, rng, n, docs[1], options)]
    if spec.joint is not None:
        given = None if None in docs else list(docs)
        versions = spec.joint([text, text_pair], rng, n=n, docs=given, **options)
        return [(first, second) for first, second in versions]
    firsts = _apply(spec, text, rng, n, None, options)
    seconds = _apply(spec, text_pair, rng, n, None, options)
    return list(zip(firsts, seconds, strict=False))


def _apply(
    spec: Perturbation, text: str, rng: random.Random, n: int, doc: Doc | None, options: dict
) -> list[str]:
    """One text's perturbations, at most n (passing the parse to entity perturbations)."""
    extra = {"doc": doc} if spec.needs_doc else {}
    return spec.function(text, rng, n=n, **extra, **options)[:n]


def perturb_cases(
    cases: Iterable[TestCase],
    perturbation: str | Perturbation,
    *,
    expectation: Expectation,
    test_type: Literal["INV", "DIR"] | None = None,
    n_per_case: int = 1,
    seed: int = 0,
    which: Which = "both",
    nlp: Language | None = None,
    **options: Any,
) -> list[PerturbedCase]:
    """Perturb each case up to `n_per_case` times into INV or DIR cases with the expectation.

    `options` go to the perturbation (`names=`, `cities=`, `phrases=`, `typos=`...).
    The test type follows the expectation (inv: INV, dir_*: DIR); a `test_type`
    that disagrees is an error. Cases with nothing to perturb (no entity, no
    contraction) give no perturbed case. Entity perturbations parse every input
    they need in one batch with `nlp` (default: the small English pipeline).
    """
    spec = get_perturbation(perturbation)
    if test_type is not None and test_type != expectation.test_type:
        raise TestAugError(
            f"test type {test_type} does not go with a {expectation.kind} expectation"
        )
    cases = list(cases)
    docs = _parse_for(spec, cases, which, nlp)
    out: list[PerturbedCase] = []
    for case, case_docs in zip(cases, docs, strict=True):
        rng = case_rng(seed, spec.name, case.id)
        versions = perturb_inputs(
            spec,
            case.text,
            case.text_pair,
            rng,
            which=which,
            n=n_per_case,
            docs=case_docs,
            **options,
        )
        out.extend(
            PerturbedCase(
                original=case,
                text=text,
                text_pair=text_pair,
                perturbation=spec.name,
                test_type=expectation.test_type,
                expectation=expectation,
            )
            for text, text_pair in versions
        )
    logger.debug("%s: %d perturbed cases from %d cases", spec.name, len(out), len(cases))
    return out


def _parse_for(
    spec: Perturbation, cases: Sequence[TestCase], which: Which, nlp: Language | None
) -> list[tuple[Doc | None, Doc | None]]:
    """The parses an entity perturbation needs, in one batch; (None, None) for the others."""
    if not spec.needs_doc:
        return [(None, None)] * len(cases)
    wanted = [
        (
            which != "second" or case.text_pair is None,
            case.text_pair is not None and which != "first",
        )
        for case in cases
    ]
    texts = [
        text
        for case, (first, second) in zip(cases, wanted, strict=True)
        for text, want in ((case.text, first), (case.text_pair, second))
        if want and text is not None
    ]
    parsed = iter(parse_texts(texts, nlp) if texts else [])
    return [
        (next(parsed) if first else None, next(parsed) if second else None)
        for first, second in wanted
    ]
