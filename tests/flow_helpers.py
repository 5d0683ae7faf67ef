"""What the flow tests share: an LLM reply script that echoes a seed case, a one-member
lexical ranker config and its trained ensemble, and the environment of a Prefect
subprocess."""

from __future__ import annotations

import os
import re
from pathlib import Path

LEXICAL_CONFIG = """\
name: lexical
members:
  - name: tfidf-lr
    kind: lexical
    min_count: 1
    l2: 1.0
"""

# Offline Prefect for subprocesses: a fresh home starts its temporary API in 15-20 s.
PREFECT_ENV = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
}


def echo_seed_reply(prompt: str, index: int) -> str:
    """A generated case that reuses the last seed case of the prompt, so induction finds
    slot words in it; different for every sample."""
    seeds = re.findall(r"- \{ (.+?) \}", prompt)
    return f" {seeds[-1]} I mean it{'!' * (index + 1)} }}\n- {{"


def lexical_config(folder: Path) -> Path:
    """A ranker ensemble config with one lexical member, written into `folder`."""
    path = folder / "lexical.yaml"
    path.write_text(LEXICAL_CONFIG, encoding="utf-8")
    return path


def trained_lexical_rankers(folder: Path) -> Path:
    """The ensemble of the lexical config trained on the shipped labelled candidates, in
    `folder`: what the pipeline trains at first use, so a run given this folder skips it."""
    from rankers.ensemble import load_config
    from rankers.ensemble_training import trained_ensemble
    from testaug.core.jsonl import read_jsonl
    from testaug.core.records import LabelledCandidate
    from testaug.steps.rankers import default_training

    labelled = list(read_jsonl(default_training(), LabelledCandidate))
    return trained_ensemble(load_config(str(lexical_config(folder))), labelled, folder / "rankers")


def prefect_env(home: Path, cache: Path) -> dict[str, str]:
    """The environment of a subprocess that runs flows on its own temporary Prefect API."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    return {
        **base,
        **PREFECT_ENV,
        "PREFECT_HOME": str(home),
        "TESTAUG_CACHE_DIR": str(cache),
        "OPENAI_API_KEY": "test-key",
    }


def run_pipeline(server, run_dir: Path, rankers: Path, return_state: bool = False, **options):
    """The pipeline flow at size small against our scripted OpenAI-compatible server, with
    `rankers` and vader as the model under test, on two sentiment capabilities."""
    from flows.pipeline import pipeline
    from testaug.steps.augment import BackendConfig
    from testaug.steps.config import RunConfig

    config = RunConfig(
        run_dir=run_dir,
        size="small",
        generator=BackendConfig(kind="openai", base_url=server.base_url, model="scripted"),
        rankers=str(rankers),
        models=("vader",),
        capabilities=("Negation", "Vocabulary"),
        **options,
    )
    return pipeline(config, return_state=return_state)
