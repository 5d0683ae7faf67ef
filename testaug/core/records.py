"""Typed records that flow between the stages, written one per line as JSONL.

Records are frozen pydantic models that forbid unknown fields. Ids are content
hashes, so deduplication and joins are set operations.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

TestType = Literal["MFT", "INV", "DIR"]
Source = Literal["template", "llm", "expansion"]
# One label, or a set of acceptable labels such as ("positive", "neutral").
Label = str | tuple[str, ...]
InvalidReason = Literal["capability", "label", "private_or_offensive", "malformed"]


def content_id(*parts: object) -> str:
    """A stable 16-hex-digit id for content: the same parts always give the same id."""
    payload = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def case_id(task: str, text: str, text_pair: str | None = None) -> str:
    """The id of a test case or candidate: a hash of its task and input text(s)."""
    return content_id("case", task, text, text_pair)


def description_id(task: str, capability: str, description: str) -> str:
    """The id of a test-case description within its task and capability."""
    return content_id("description", task, capability, description)


def label_options(label: Label) -> tuple[str, ...]:
    """The acceptable labels of an expected label, as a tuple."""
    return (label,) if isinstance(label, str) else label


def normalize_label(value: Any) -> Any:
    """A list of one label becomes the label; a list of several a tuple without repeats
    (a list holding anything but strings is left for validation to refuse)."""
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        unique = tuple(dict.fromkeys(value))
        return unique[0] if len(unique) == 1 else unique
    return value


class Record(BaseModel):
    """Base of all records: frozen, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Lexicon(Record):
    """A named list of words or phrases that fill a template slot."""

    name: str
    words: tuple[str, ...]


class Template(Record):
    """A template with slots; `text_pair` is set for pair tasks (paraphrase, NLI)."""

    id: str
    description_id: str
    text: str
    text_pair: str | None = None
    label: Label
    distinct_copies: bool = True


class Description(Record):
    """A test-case description inside a capability, with its templates."""

    id: str
    capability: str
    text: str
    test_type: TestType = "MFT"
    label: Label
    templates: tuple[Template, ...]


class Capability(Record):
    """A linguistic capability and the test-case descriptions that probe it."""

    name: str
    descriptions: tuple[Description, ...]


class Suite(Record):
    """A template suite: a task, its label set, capabilities and lexicons."""

    name: str
    task: str
    labels: tuple[str, ...]
    capabilities: tuple[Capability, ...]
    lexicons: dict[str, Lexicon]
    source: Source = "template"  # `expansion` for templates induced from generated cases
    gate: dict[str, Any] | None = None  # a CI gate as written (`testaug.evaluation.gate_sources`)

    def descriptions(self) -> list[Description]:
        """Every description, in suite order."""
        return [d for c in self.capabilities for d in c.descriptions]

    def words(self) -> dict[str, tuple[str, ...]]:
        """Each lexicon's words by lexicon name, as the template engine takes them."""
        return {name: lexicon.words for name, lexicon in self.lexicons.items()}


class _CaseFields(Record):
    """Fields shared by test cases and generated candidates."""

    id: str = ""
    task: str
    capability: str
    description_id: str
    description: str
    text: str
    text_pair: str | None = None
    label: Label
    test_type: TestType = "MFT"

    _normalize_label = field_validator("label", mode="before")(normalize_label)

    @model_validator(mode="after")
    def _check_id(self) -> _CaseFields:
        expected = case_id(self.task, self.text, self.text_pair)
        if not self.id:
            object.__setattr__(self, "id", expected)
        elif self.id != expected:
            raise ValueError(f"id {self.id!r} does not match the content (expected {expected!r})")
        return self


class TestCase(_CaseFields):
    """A labelled test case; template cases keep the template and slot fills behind them."""

    __test__ = False

    source: Source = "template"
    template_id: str | None = None
    template: str | None = None
    template_pair: str | None = None
    fills: dict[str, str] = Field(default_factory=dict)
    meta: dict[str, Any] = Field(default_factory=dict)


class Candidate(_CaseFields):
    """A generated case not yet accepted, with the prompt and seed cases behind it."""

    prompt_id: str
    seed_case_ids: tuple[str, ...]
    backend: str
    model: str
    sample_index: int = 0
    temperature: float | None = None  # the sampling temperature; None in older files


class Prompt(Record):
    """A rendered generation prompt: a description's instruction and its seed cases."""

    id: str
    template: str
    template_sha: str
    task: str
    capability: str
    description_id: str
    description: str
    label: Label
    test_type: TestType = "MFT"
    seed_case_ids: tuple[str, ...]
    text: str


class Reject(Record):
    """A reply that did not become a candidate, kept with the reason."""

    task: str
    capability: str
    description_id: str
    prompt_id: str
    seed_case_ids: tuple[str, ...]
    backend: str
    model: str
    sample_index: int
    reply: str
    reason: str
    detail: str
    text: str | None = None
    text_pair: str | None = None


class LabelledCandidate(Record):
    """A candidate with a validity verdict: what rankers train and are evaluated on."""

    candidate: Candidate
    valid: bool
    reason: InvalidReason | None = None
    note: str | None = None
    # How the candidate came to be labelled: drawn at random (a calibration sample; a
    # labelled set that covers every candidate counts as one), or picked because the ranker
    # was unsure of it or ranked it high. Only random draws state a generator's precision.
    sampled: Literal["random", "uncertain", "ranked"] | None = None


class RankedCandidate(Record):
    """A candidate with every ranker's invalidity score, its Borda points and rank, and the
    ensemble's calibrated P(valid) with the calibration group (generator) it was read from."""

    candidate: Candidate
    scores: dict[str, float]
    borda_points: float
    rank: int
    ensemble_version: str | None = None
    p_valid: float | None = None
    calibration_group: str | None = None
    triage_score: float | None = None  # the score the rank follows: P(invalid) from the stacking
    triage_basis: str | None = None  # what the order rests on for this candidate's generator


class PrecisionPoint(Record):
    """Of the out-of-fold labelled candidates with P(valid) >= threshold: how many, how many valid."""

    threshold: float
    accepted: int
    valid: int


class PrecisionCurve(Record):
    """How precise acceptance above each threshold of P(valid) was on out-of-fold labels
    of one group of candidates (a generator, or all generators)."""

    group: str
    n: int
    n_valid: int
    points: tuple[PrecisionPoint, ...]


class Calibration(Record):
    """A trained ensemble's out-of-fold evidence: a precision curve per calibration group,
    and the group read for candidates of a generator that has none of its own."""

    ensemble_version: str
    method: Literal["isotonic", "platt"]
    folds: int
    fallback: str
    curves: dict[str, PrecisionCurve]


class AcceptanceRule(Record):
    """The ranker's acceptance rule for a precision target: accept where P(valid) >= threshold,
    with the precision it had on out-of-fold labels and its one-sided lower confidence bound."""

    group: str
    target: float
    confidence: float
    threshold: float
    precision_estimate: float
    precision_lower_bound: float
    accepted: int
    calibration_n: int


class Annotation(Record):
    """A verdict on a candidate: by a person, or by the ranker under a stated rule."""

    candidate_id: str
    valid: bool
    reason: InvalidReason | None = None
    corrected_label: str | None = None
    annotator: str
    origin: Literal["label-studio", "terminal", "ranker"]
    rule: str | None = None
    p_valid: float | None = None
    acceptance: AcceptanceRule | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class Prediction(Record):
    """A model's probabilities over the task labels for one case."""

    case_id: str
    model: str
    probabilities: dict[str, float]
    label: str


class RunManifest(Record):
    """What produced a run directory: command, arguments, seeds, models, versions."""

    run_id: str
    command: str
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    arguments: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    model_ids: dict[str, str] = Field(default_factory=dict)
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    token_usage: dict[str, int] = Field(default_factory=dict)
    package_version: str
