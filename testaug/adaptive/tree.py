"""Test trees: AdaTest's tests (an input and an expectation) under topic paths.

A test states what a model's output for `input` should be:

- "should be" / "should not be" a label (MFT; `output` is a label, or several
  joined by "|" for "one of");
- "should be the same as for" another input (INV; `output` is the other input);
- "should be no less L than" / "should be no more L than" another input (DIR:
  the probability of label L, `watched`, must not be lower / higher for `input`
  than for `output`, within `tolerance`).

Pair tasks (paraphrase, NLI) put the second text in `input_pair` (and, for the
comparisons, the other pair's second text in `output_pair`). A topic is a path
that starts with "/"; a topic can be declared with no tests yet by a marker row. A row of
kind "unlabelled" is a test without a verdict yet (AdaTest's "Unknown" label): an input
and the output seen for it, kept in the tree but neither scored nor re-tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Literal

from pydantic import Field, model_validator

from testaug.core.records import Record, content_id

Comparator = Literal[
    "should be",
    "should not be",
    "should be the same as for",
    "should be no less than",
    "should be no more than",
]
LABEL_COMPARATORS: tuple[Comparator, ...] = ("should be", "should not be")
INPUT_COMPARATORS: tuple[Comparator, ...] = (
    "should be the same as for",
    "should be no less than",
    "should be no more than",
)
RowKind = Literal["test", "topic", "unlabelled"]
Score = Annotated[float, Field(allow_inf_nan=False)]  # a failure score: a finite number
ROOT = "/"


def normalize_topic(topic: str) -> str:
    """A topic path with one leading "/", no trailing "/" and no empty parts ("" is the root)."""
    parts = [part.strip() for part in topic.strip().split("/") if part.strip()]
    return ROOT + "/".join(parts) if parts else ROOT


def parent_topic(topic: str) -> str:
    """The topic one level up ("/" for a top-level topic and for the root)."""
    topic = normalize_topic(topic)
    head = topic.rpartition("/")[0]
    return head or ROOT


def is_within(topic: str, ancestor: str) -> bool:
    """True when `topic` is `ancestor` or lies below it."""
    topic, ancestor = normalize_topic(topic), normalize_topic(ancestor)
    return ancestor == ROOT or topic == ancestor or topic.startswith(ancestor + "/")


def test_id(topic: str, input: str, input_pair: str | None, comparator: str, output: str) -> str:
    """The id of a test: a hash of where it is and what it checks."""
    return content_id("tree-test", normalize_topic(topic), input, input_pair, comparator, output)


class TreeTest(Record):
    """One row of a test tree: a test, a topic marker with no input (kind "topic"), or a test
    without a verdict yet (kind "unlabelled": an input and the output seen for it)."""

    __test__ = False

    id: str = ""
    kind: RowKind = "test"
    topic: str
    input: str = ""
    input_pair: str | None = None
    comparator: Comparator = "should be"
    output: str = ""
    output_pair: str | None = None
    watched: str | None = None  # DIR comparators: the label whose probability is compared
    tolerance: float = Field(default=0.1, ge=0.0, le=1.0)
    labeler: str = ""  # who wrote or accepted the test; "imputed" for unreviewed suggestions
    author: str = ""  # who wrote the test, where told apart from its labeler (AdaTest)
    description: str = ""
    source: str = ""  # where it came from: "suite", "adatest", "suggestion", ...
    scores: dict[str, Score] = Field(default_factory=dict)  # failure score per model name

    @model_validator(mode="after")
    def _check(self) -> TreeTest:
        object.__setattr__(self, "topic", normalize_topic(self.topic))
        if self.kind != "topic" and not self.input.strip():
            raise ValueError("a test needs a non-empty input")
        if self.kind == "test":
            if not self.output.strip():
                raise ValueError(f"a {self.comparator!r} test needs an output")
            comparison = self.comparator in ("should be no less than", "should be no more than")
            if comparison and not self.watched:
                raise ValueError(f"a {self.comparator!r} test needs `watched`, a label")
        expected = test_id(self.topic, self.input, self.input_pair, self.comparator, self.output)
        if self.kind == "topic":
            expected = content_id("tree-topic", self.topic)
        elif self.kind == "unlabelled":
            parts = (self.topic, self.input, self.input_pair, self.output)
            expected = content_id("tree-unlabelled", *parts)
        if not self.id:
            object.__setattr__(self, "id", expected)
        return self

    @property
    def expected_labels(self) -> tuple[str, ...]:
        """The labels named by a label comparator's output ("a|b" is two labels)."""
        return tuple(part.strip() for part in self.output.split("|") if part.strip())

    def with_scores(self, scores: dict[str, float]) -> TreeTest:
        """The same test with these failure scores merged over the old ones."""
        return self.model_copy(update={"scores": {**self.scores, **scores}})


class TestTree(Record):
    """Rows in file order: tests and topic markers. Topics are every tested or marked path
    and their ancestors."""

    __test__ = False

    rows: tuple[TreeTest, ...] = ()

    @property
    def tests(self) -> list[TreeTest]:
        """The test rows (not the topic markers)."""
        return [row for row in self.rows if row.kind == "test"]

    def topics(self) -> list[str]:
        """Every topic path, ancestors included, sorted; the root is not listed."""
        found: set[str] = set()
        for row in self.rows:
            topic = row.topic
            while topic != ROOT:
                found.add(topic)
                topic = parent_topic(topic)
        return sorted(found)

    def subtopics(self, topic: str) -> list[str]:
        """The direct children of `topic`."""
        topic = normalize_topic(topic)
        return [t for t in self.topics() if t != topic and parent_topic(t) == topic]

    def tests_in(self, topic: str, *, direct: bool = False) -> list[TreeTest]:
        """Tests at `topic` and below (only those directly at `topic` when `direct`)."""
        topic = normalize_topic(topic)
        return [
            t for t in self.tests if (t.topic == topic if direct else is_within(t.topic, topic))
        ]

    def with_rows(self, rows: Iterable[TreeTest]) -> TestTree:
        """The tree with `rows` added; a row whose id is already there replaces it in place."""
        new = list(rows)
        by_id = {row.id: row for row in new}
        kept = [by_id.pop(row.id, row) for row in self.rows]
        return TestTree(rows=(*kept, *(row for row in new if row.id in by_id)))

    def __iter__(self) -> Iterator[TreeTest]:  # type: ignore[override]
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def declared(topics: Sequence[str]) -> list[TreeTest]:
    """Topic marker rows for `topics`."""
    return [TreeTest(kind="topic", topic=topic) for topic in topics]
