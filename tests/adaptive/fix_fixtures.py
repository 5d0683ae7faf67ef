"""A learnable debugging-loop setup for the fix tests: a tiny BERT (no download) trained on
plain positive and negative sentences, which fails every negated one; a tree with
vocabulary, negation (MFT "should be" and "should not be"), INV and DIR topics; and the
i.i.d. sentences as JSONL."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from testaug.adaptive.tree import TestTree, TreeTest
from testaug.adaptive.tree_files import write_tree
from testaug.core.jsonl import write_jsonl
from testaug.fixing.finetune import FineTuneConfig, fine_tune
from testaug.fixing.patching.protocol import IidExample
from tests.models_fixture import build_tiny_classifier

LABELS = ("negative", "positive")
NOUNS = ("food", "seat", "crew", "service", "flight")
PRETRAIN = FineTuneConfig(learning_rate=1e-2, epochs=16, batch_size=8, seed=0)
FIX = FineTuneConfig(learning_rate=1e-2, epochs=4, batch_size=8)  # a tiny model learns fast


def iid_examples() -> list[IidExample]:
    """Plain sentiment sentences: the task's own data, no negation."""
    words = (
        ("good", "positive"),
        ("great", "positive"),
        ("bad", "negative"),
        ("awful", "negative"),
    )
    verbs = (
        ("like", "positive"),
        ("love", "positive"),
        ("hate", "negative"),
        ("enjoy", "positive"),
    )
    return [
        *(IidExample(text=f"the {n} was {w} .", label=label) for n in NOUNS for w, label in words),
        *(IidExample(text=f"i {v} the {n} .", label=label) for n in NOUNS for v, label in verbs),
    ]


def build_base(folder: Path) -> Path:
    """The model under test: a tiny BERT fine-tuned on the i.i.d. sentences, saved."""
    raw = build_tiny_classifier(folder / "raw", 2, {0: "negative", 1: "positive"})
    fine_tune(raw, iid_examples(), labels=LABELS, config=PRETRAIN, output_dir=folder / "base")
    return folder / "base"


@cache
def shared_base() -> Path:
    """`build_base` once per test process (the fix tests only read it), removed at exit."""
    folder = Path(tempfile.mkdtemp(prefix="testaug-fix-base-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return build_base(folder)


def sentiment_tree() -> TestTree:
    """Vocabulary (the base model passes), negation (it fails), INV and DIR tests."""
    rows = [
        *(
            TreeTest(topic="/Vocabulary/Positive", input=f"the {n} was {w} .", output="positive")
            for n in NOUNS
            for w in ("good", "great")
        ),
        *(
            TreeTest(topic="/Vocabulary/Negative", input=f"the {n} was {w} .", output="negative")
            for n in NOUNS
            for w in ("bad", "awful")
        ),
        *(
            TreeTest(
                topic="/Negation/Negated positive",
                input=f"the {n} was not {w} .",
                output="negative",
            )
            for n in NOUNS
            for w in ("good", "great")
        ),
        *(
            TreeTest(
                topic="/Negation/Negated positive",
                input=f"the {n} was never good .",
                comparator="should not be",
                output="positive",
            )
            for n in NOUNS
        ),
        *(
            TreeTest(
                topic="/Fairness",
                input=f"the {n} was good .",
                comparator="should be the same as for",
                output=f"the {n} was great .",
            )
            for n in NOUNS
        ),
    ]
    return TestTree(rows=tuple(rows))


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The tree and i.i.d. files, written into `folder`."""
    tree, iid = folder / "tree.jsonl", folder / "iid.jsonl"
    write_tree(tree, sentiment_tree())
    write_jsonl(iid, iid_examples())
    return tree, iid
