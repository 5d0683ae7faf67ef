"""Ensemble configs: the members, how they are cross-fitted, weighted and calibrated."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from rankers.adaptation.groups import AdaptationConfig
from rankers.calibration import CalibrationMethod
from rankers.members.cross_encoder import CrossEncoderConfig, RankerError
from rankers.members.embedding import EmbeddingConfig
from rankers.members.lexical import LexicalConfig
from rankers.members.llm_judge import LlmJudgeConfig
from rankers.members.neighbours import NeighbourConfig
from testaug.core.errors import InputError
from testaug.core.yaml_source import load_yaml

CONFIG_DIR = Path(__file__).parent / "configs"
MEMBER_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}")

MemberConfig = Annotated[
    CrossEncoderConfig | LexicalConfig | EmbeddingConfig | NeighbourConfig | LlmJudgeConfig,
    Field(discriminator="kind"),
]


class ReferenceConfig(BaseModel):
    """Which seed cases of the bundled suites neighbour members compare candidates with when
    no cases are given (the default run's seed cases: 20 per template, seed 0)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_template: int = Field(default=20, ge=1)
    seed: int = 0


class EnsembleConfig(BaseModel):
    """A named list of member rankers, and how the ensemble is cross-fitted and calibrated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    members: tuple[MemberConfig, ...] = Field(min_length=1)
    folds: int = Field(default=3, ge=2, description="cross-fitting folds (grouped by prompt)")
    weighting: Literal["plain", "oof"] = Field(
        default="plain", description="plain Borda, or members weighted by out-of-fold AUC - 0.5"
    )
    calibration: CalibrationMethod = "isotonic"
    min_group: int = Field(
        default=50,
        ge=10,
        description="labels drawn at random a generator needs for its own calibration",
    )
    reference: ReferenceConfig = ReferenceConfig()
    adaptation: AdaptationConfig = AdaptationConfig()

    @field_validator("members")
    @classmethod
    def _folder_names(cls, members: tuple[MemberConfig, ...]) -> tuple[MemberConfig, ...]:
        """Member names name the members' folders: plain, short and distinct."""
        seen: set[str] = set()
        for index, member in enumerate(members):
            if not MEMBER_NAME.fullmatch(member.name):
                shown = member.name if len(member.name) <= 40 else member.name[:40] + "..."
                raise PydanticCustomError(
                    "member_name",
                    f"[{index}].name {shown!r} is not a member name (letters, digits, '-', "
                    "'_' and '.', at most 64, not starting with '.'): it names a folder",
                )
            if member.name in seen:
                raise PydanticCustomError(
                    "member_name", f"[{index}].name {member.name!r} is used twice"
                )
            seen.add(member.name)
        return members


def shipped_configs() -> list[str]:
    """Names of the ensemble configs under rankers/configs/."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.yaml"))


def load_config(name_or_path: str | Path) -> EnsembleConfig:
    """An ensemble config by shipped name (offline, paper) or YAML file path."""
    path = Path(name_or_path)
    if not path.is_file():
        path = CONFIG_DIR / f"{name_or_path}.yaml"
    if not path.is_file():
        raise RankerError(
            f"no ensemble config {str(name_or_path)!r} (shipped: {', '.join(shipped_configs())})"
        )
    document = load_yaml(path)
    try:
        return EnsembleConfig.model_validate(document.data)
    except ValueError as exc:
        errors = getattr(exc, "errors", lambda: [])()
        raise InputError(
            [document.problem(tuple(e["loc"]), e["msg"]) for e in errors]
            or [document.problem((), str(exc))]
        ) from exc
