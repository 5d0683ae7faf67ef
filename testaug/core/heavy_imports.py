"""Heavy libraries (transformers, sentence-transformers, spaCy, matplotlib): one lock around
their first imports, and one place that quiets their known noise.

Their lazy modules resolve names on first use, and two threads doing that at once can
fail with "cannot import name ...": a flow loads the embedded generator in one task
while it trains the rankers in another. Every first import of them holds this lock.
"""

from __future__ import annotations

import sys
import threading
import warnings
from contextlib import suppress

IMPORT_LOCK = threading.RLock()

# (message pattern, category) of warnings other libraries print on every run, saying
# nothing a testaug user can act on.
NOISY_WARNINGS: tuple[tuple[str, type[Warning]], ...] = (
    # spaCy: a pipeline package built for another spaCy version (the shipped ones load fine)
    (r"\[W095\]", UserWarning),
    # matplotlib: a figure too small for its labels (testaug's own figures make room)
    (r"Tight layout not applied", UserWarning),
    (r"constrained_layout not applied", UserWarning),
)


def quiet_libraries() -> None:
    """Filter the `NOISY_WARNINGS` and turn the Hugging Face libraries' progress bars off
    (transformers' "Loading weights", downloads, datasets' maps): the CLI shows its own.

    Safe to call more than once. Environment variables the user set
    (HF_HUB_DISABLE_PROGRESS_BARS=0, HF_DATASETS_DISABLE_PROGRESS_BARS=0) win.
    """
    for pattern, category in NOISY_WARNINGS:
        warnings.filterwarnings("ignore", message=pattern, category=category)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "cannot disable progress bars": the user said so
        with suppress(ImportError):
            from huggingface_hub.utils import disable_progress_bars

            disable_progress_bars()  # transformers reads it when it is imported
        if "transformers" in sys.modules:  # imported before: tell it too
            from transformers.utils import logging as transformers_logging

            transformers_logging.disable_progress_bar()
        if "datasets" in sys.modules:
            import datasets

            datasets.disable_progress_bars()
