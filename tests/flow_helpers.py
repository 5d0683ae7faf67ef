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
    from testaug.core.jsonl import read_jsonl_parts
    from testaug.core.records import LabelledCandidate
    from testaug.steps.rankers import default_training

    labelled = list(read_jsonl_parts(default_training(), LabelledCandidate))
    return trained_ensemble(load_config(str(lexical_config(folder))), labelled, folder / "rankers")


def scripted_calibration_sample(capabilities: tuple[str, ...]) -> list:
    """What people would label in a random calibration sample of the scripted generator
    (`echo_seed_reply` at the small run's temperature) on the shipped sentiment suite:
    its echoes of seed cases are valid, replies that talk about the task are not. The
    texts are not ones a run generates (more '!'), so a run in this process embeds its
    candidates as a fresh process does, and local and remote runs write the same files."""
    from testaug.core.bundled import resolve_suite
    from testaug.core.records import Candidate, LabelledCandidate
    from testaug.suites.cases import expand_suite
    from testaug.suites.load import load_suite

    suite = load_suite(resolve_suite("sentiment"))
    seeds = [c for c in expand_suite(suite, per_template=4, seed=7) if c.capability in capabilities]
    sample = []
    for index, case in enumerate(seeds[:120]):
        valid = index % 3 != 2
        text = (
            f"{case.text} I mean it{'!' * (index % 4 + 3)}"
            if valid
            else f"Sure, here are more {case.label} examples like {case.text!r}"
        )
        fields = case.model_dump(include={"task", "capability", "description_id", "description"})
        candidate = Candidate(
            **fields,
            text=text,
            label=case.label,
            prompt_id=f"calibration-{index // 4}",
            seed_case_ids=(case.id,),
            backend="openai",
            model="scripted",
            temperature=0.2,
        )
        reason = None if valid else "malformed"
        sample.append(
            LabelledCandidate(candidate=candidate, valid=valid, reason=reason, sampled="random")
        )
    return sample


def calibrated_lexical_rankers(folder: Path, capabilities: tuple[str, ...]) -> Path:
    """The lexical ensemble trained on the shipped candidates and a random calibration
    sample of the scripted generator, so its own labels vouch for some of its candidates."""
    from rankers.ensemble import load_config
    from rankers.ensemble_training import trained_ensemble
    from testaug.core.jsonl import read_jsonl_parts
    from testaug.core.records import LabelledCandidate
    from testaug.steps.rankers import default_training

    labelled = [
        *read_jsonl_parts(default_training(), LabelledCandidate),
        *scripted_calibration_sample(capabilities),
    ]
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
    from testaug.generation.backend_config import BackendConfig
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
