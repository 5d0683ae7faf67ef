"""Deployments of the flows, read from prefect.yaml (Prefect's own format, so `prefect
deploy --all` reads it too): served from this process, or registered on a Prefect server
for the workers of a work pool."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from testaug.core.errors import InputError, Problem
from testaug.core.secrets import redact_text
from testaug.core.yaml_source import load_yaml

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PREFECT_YAML = PROJECT_ROOT / "prefect.yaml"


CRON_ALIASES = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
# Each cron field: its name, its range, and the names it takes (numbered from the low end).
CRON_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, MONTHS),
    ("day of week", 0, 7, DAYS),
)


class Schedule(BaseModel):
    """A cron schedule of a deployment: five fields (minute, hour, day of month, month, day
    of week) or an alias such as @daily, in an IANA time zone."""

    model_config = ConfigDict(extra="ignore")

    cron: str
    timezone: str = "UTC"
    active: bool = True

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, cron: str) -> str:
        problem = cron_problem(cron)
        if problem:
            raise ValueError(problem)
        return cron

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, timezone: str) -> str:
        if timezone not in known_timezones():
            raise ValueError(
                f"unknown time zone {timezone!r}: give an IANA name such as UTC or Europe/Paris"
            )
        return timezone


def known_timezones() -> set[str]:
    """The IANA time zone names this machine knows, and UTC."""
    import zoneinfo

    return zoneinfo.available_timezones() | {"UTC"}


def cron_problem(cron: str) -> str | None:
    """What is wrong with a cron expression (a field out of range, a wrong field count), or
    None for a valid one."""
    text = cron.strip().lower()
    if text.startswith("@"):
        return None if text in CRON_ALIASES else f"unknown cron alias {cron!r}"
    fields = text.split()
    if len(fields) != len(CRON_FIELDS):
        return f"cron {cron!r} has {len(fields)} fields; expected 5 (minute hour day month weekday)"
    for value, (name, low, high, names) in zip(fields, CRON_FIELDS, strict=True):
        for part in value.split(","):
            if not _cron_part_ok(part, low, high, names):
                return f"cron {cron!r}: {name} {part!r} is not a value in {low}-{high}"
    return None


def _cron_part_ok(part: str, low: int, high: int, names: Sequence[str]) -> bool:
    """One comma-separated part of a cron field: *, N, N-M, each optionally /STEP."""
    span, _, step = part.partition("/")
    if step and not (step.isdigit() and int(step) >= 1):
        return False
    if span == "*":
        return True

    def number(token: str) -> int | None:
        if token in names:
            return names.index(token) + low
        return int(token) if token.isdigit() else None

    ends = [number(token) for token in span.split("-")]
    if not 1 <= len(ends) <= 2 or any(end is None or not low <= end <= high for end in ends):
        return False
    return len(ends) == 1 or ends[0] <= ends[1]  # type: ignore[operator]


class DeploymentConfig(BaseModel):
    """One entry of prefect.yaml's `deployments` (the keys testaug uses; others are Prefect's)."""

    model_config = ConfigDict(extra="ignore")

    name: str
    entrypoint: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    schedules: list[Schedule] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)


def read_deployments(path: Path = PREFECT_YAML) -> list[DeploymentConfig]:
    """The deployments of a prefect.yaml; errors name the file, line and field."""
    document = load_yaml(path)
    entries = (document.data or {}).get("deployments") if isinstance(document.data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError(document.problem(("deployments",), "expected a list of deployments"))
    specs = []
    for index, entry in enumerate(entries):
        try:
            specs.append(DeploymentConfig.model_validate(entry))
        except ValidationError as exc:
            raise InputError(
                [
                    document.problem(("deployments", index, *e["loc"]), e["msg"])
                    for e in exc.errors()
                ]
            ) from None
        credentials = credential_fields(specs[-1].parameters)
        if credentials:
            raise InputError(
                [
                    document.problem(
                        ("deployments", index, "parameters", *where),
                        "a credential, which Prefect would store: set it in the "
                        "worker's environment (e.g. TESTAUG_BASE_URL_USERINFO)",
                    )
                    for where in credentials
                ]
            )
    return specs


def credential_fields(value: Any, where: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Where in a parameters tree a string holds something credential-shaped (a key name
    with a value, user info in a URL, a key-like token): those must not reach Prefect."""
    if isinstance(value, dict):
        found = []
        for key, item in value.items():
            if isinstance(item, str) and item and _is_key_name(str(key)):
                found.append((*where, key))
            else:
                found += credential_fields(item, (*where, key))
        return found
    if isinstance(value, list):
        return [w for i, item in enumerate(value) for w in credential_fields(item, (*where, i))]
    if isinstance(value, str) and redact_text(value) != value:
        return [where]
    return []


def _is_key_name(name: str) -> bool:
    """A parameter named like a secret (api_key, token, password, secret)."""
    lowered = name.lower().replace("-", "_")
    return any(word in lowered for word in ("api_key", "apikey", "token", "password", "secret"))


def choose(specs: Sequence[DeploymentConfig], names: Sequence[str]) -> list[DeploymentConfig]:
    """The deployments named (all of them when no name is given)."""
    known = {spec.name: spec for spec in specs}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise InputError(
            Problem(
                f"no deployment {', '.join(unknown)} (there are: {', '.join(known)})",
                field="name",
            )
        )
    return [known[name] for name in names] if names else list(specs)


def runner_deployment(spec: DeploymentConfig, root: Path = PROJECT_ROOT) -> Any:
    """A Prefect RunnerDeployment of the flow at the spec's entrypoint (a file relative to
    `root`). It names the flow by module path (`flows.pipeline.pipeline`), so a worker runs
    it from the installed package, in any folder, with nothing copied."""
    from prefect.deployments.runner import EntrypointType
    from prefect.schedules import Cron

    flow = load_flow(spec.entrypoint, root)
    return flow.to_deployment(
        name=spec.name,
        description=spec.description or None,
        parameters=flow_parameters(flow, spec.parameters),
        schedules=[Cron(s.cron, timezone=s.timezone, active=s.active) for s in spec.schedules],
        tags=spec.tags,
        entrypoint_type=EntrypointType.MODULE_PATH,
    )


def flow_parameters(flow: Any, parameters: dict[str, Any]) -> dict[str, Any]:
    """A deployment's parameters for its flow. A flow takes its configuration record whole,
    as `config`; older flat parameters (`suite: ..., run_dir: ...`) that are not the flow's
    own are wrapped into it."""
    properties = flow.parameters.properties
    takes_config = "$ref" in properties.get("config", {})
    if not takes_config or "config" in parameters:
        return parameters
    own = {key: value for key, value in parameters.items() if key in properties}
    fields = {key: value for key, value in parameters.items() if key not in properties}
    record = get_type_hints(flow.fn).get("config")
    nested = _nested(record, fields) if isinstance(record, type) else fields
    return {**own, "config": nested} if fields else own


def _nested(record: type, fields: dict[str, Any]) -> dict[str, Any]:
    """Flat fields placed in `record`: a name that is not its own field goes into the one
    record field (such as GeneralizeFilesConfig's `analysis`) that has it."""
    own = getattr(record, "model_fields", {})
    inner = {
        name: field.annotation
        for name, field in own.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
    }
    placed: dict[str, Any] = {}
    for key, value in fields.items():
        holder = next(
            (n for n, r in inner.items() if key not in own and key in r.model_fields), None
        )
        if holder is None:
            placed[key] = value
        else:
            placed.setdefault(holder, {})[key] = value
    return placed


def load_flow(entrypoint: str, root: Path = PROJECT_ROOT) -> Any:
    """The flow of an entrypoint `flows/pipeline.py:pipeline`, imported as the module
    `flows.pipeline` (so its deployments name it by module path)."""
    import importlib

    file, _, name = entrypoint.partition(":")
    path = root / file
    if not path.is_file() or path.suffix != ".py" or not name:
        raise InputError(Problem(f"no flow file {file!r} under {root}", field="entrypoint"))
    module = importlib.import_module(".".join(Path(file).with_suffix("").parts))
    flow = getattr(module, name, None)
    if flow is None:
        raise InputError(Problem(f"{file} has no flow {name!r}", field="entrypoint"))
    return flow


def deploy(
    specs: Sequence[DeploymentConfig],
    pool: str,
    *,
    working_dir: Path,
    root: Path = PROJECT_ROOT,
) -> list[str]:
    """Register the deployments on the Prefect server (PREFECT_API_URL) for the workers of
    `pool`, a process work pool created if missing; their runs work in `working_dir`
    (relative run folders land there). Returns the deployment ids."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists

    with get_client(sync_client=True) as client, contextlib.suppress(ObjectAlreadyExists):
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
    ids = []
    for spec in specs:
        deployment = runner_deployment(spec, root)
        deployment.job_variables = {"working_dir": str(working_dir.resolve())}
        ids.append(str(deployment.apply(work_pool_name=pool)))
    return ids


def serve(specs: Sequence[DeploymentConfig], root: Path = PROJECT_ROOT) -> None:
    """Serve the deployments from this process until it is stopped: schedules fire here."""
    from prefect import serve as prefect_serve

    prefect_serve(*(runner_deployment(spec, root) for spec in specs))
