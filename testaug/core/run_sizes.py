"""How big a pipeline run is: named presets of seed cases, prompts, samples and perturbations."""

from __future__ import annotations

from pydantic import Field

from testaug.core.errors import InputError, Problem
from testaug.core.records import Record


class RunSize(Record):
    """The numbers that set how long a run takes."""

    per_template: int = Field(default=20, ge=1, description="seed cases sampled per template")
    prompts_per_description: int = Field(default=1, ge=1)
    seeds_per_prompt: int = Field(default=8, ge=1)
    samples: int = Field(default=8, ge=1, description="completions asked per prompt")
    temperature: float = Field(
        default=0.2,
        ge=0.0,
        description="sampling temperature: at 0.2 with 8 seeds the embedded SmolLM2 writes "
        "valid cases about four times as often as at 1.0 with 3 (data/validity)",
    )
    perturb: int = Field(default=100, ge=0, description="cases each INV/DIR test perturbs")


SIZES: dict[str, RunSize] = {
    # A smoke test: a minute or two after the models are loaded.
    "small": RunSize(per_template=5, prompts_per_description=1, samples=2, perturb=20),
    # The main job on 2 CPU cores: a few hundred candidates.
    "default": RunSize(),
    # Closer to the paper (10 prompts per description, 5 samples each): for a GPU or a server.
    "large": RunSize(per_template=50, prompts_per_description=10, samples=5, perturb=500),
}


# AdaTest trees are read by people: a few cases per template, not every fill (what
# `testaug tree from-suite` and `testaug.tree_from_suite` sample unless told otherwise).
TREE_PER_TEMPLATE = 10


def run_size(name: str, **overrides: int | None) -> RunSize:
    """A preset by name, with any of its numbers overridden (None keeps the preset's)."""
    if name not in SIZES:
        raise InputError(Problem(f"unknown size (use {', '.join(SIZES)})", field="size"))
    given = {key: value for key, value in overrides.items() if value is not None}
    return RunSize(**{**SIZES[name].model_dump(), **given})
