"""The records of the patching protocol: each run's error rates, their aggregates over
runs, and the report (`patching.json` holds it with its aggregates in percent)."""

from __future__ import annotations

from typing import Literal

from testaug.core.records import Record
from testaug.fixing.finetune import FineTuneConfig
from testaug.fixing.splits import Strategy


class CapabilityErrors(Record):
    """Error rates of the unpatched and both patched models on one capability's test cases."""

    n_test: int
    err_unpatched: float
    err_patched_a: float
    err_patched_b: float


class PatchingRun(Record):
    """One split: train sizes, error rates on its test side, and i.i.d. and G scores."""

    seed: int
    strategy: Strategy
    held_out: str | None = None
    n_train_a: int
    n_train_b: int
    n_test: int
    err_unpatched: float
    err_patched_a: float
    err_patched_b: float
    per_capability: dict[str, CapabilityErrors]
    iid_unpatched: float | None = None
    iid_patched_a: float | None = None
    iid_patched_b: float | None = None
    g_unpatched: float | None = None
    g_patched_a: float | None = None
    g_patched_b: float | None = None
    new_head_unpatched: bool = False  # the unpatched model's head is new (random)
    new_head_patched: bool = False  # fine-tuning started from a new head

    @property
    def delta_a(self) -> float:
        return self.err_unpatched - self.err_patched_a

    @property
    def delta_b(self) -> float:
        return self.err_unpatched - self.err_patched_b


class Stat(Record):
    """Mean and sample standard deviation (0 for a single value) over n runs."""

    mean: float
    std: float
    n: int

    def in_percent(self) -> Stat:
        """The mean and deviation of a rate given as a fraction, in percent."""
        return self.model_copy(update={"mean": 100 * self.mean, "std": 100 * self.std})


class PatchingSummary(Record):
    """Error rates and deltas (unpatched − patched) over runs, for all cases or one capability."""

    n_runs: int
    err_unpatched: Stat
    err_patched_a: Stat
    err_patched_b: Stat
    delta_a: Stat
    delta_b: Stat

    def in_percent(self) -> PatchingSummary:
        """The rates and deltas in percent."""
        names = ("err_unpatched", "err_patched_a", "err_patched_b", "delta_a", "delta_b")
        return self.model_copy(update={n: getattr(self, n).in_percent() for n in names})


class IidSummary(Record):
    """i.i.d. accuracy and G score (suite pass rate with i.i.d. accuracy) over runs."""

    iid_unpatched: Stat
    iid_patched_a: Stat
    iid_patched_b: Stat
    g_unpatched: Stat
    g_patched_a: Stat
    g_patched_b: Stat

    def in_percent(self) -> IidSummary:
        """Every score in percent."""
        return self.model_copy(
            update={name: getattr(self, name).in_percent() for name in type(self).model_fields}
        )


class PatchingReport(Record):
    """Every run of the protocol and their aggregates: overall, per capability, i.i.d."""

    base_model: str
    strategy: Strategy
    seeds: tuple[int, ...]
    labels: tuple[str, ...]
    suite_names: tuple[str, str]
    config: FineTuneConfig
    test_fraction: float
    n_a: int
    n_b: int
    n_merged: int
    n_both: int
    runs: tuple[PatchingRun, ...]
    overall: PatchingSummary
    per_capability: dict[str, PatchingSummary]
    iid: IidSummary | None = None
    unit: Literal["fraction", "percent"] = "fraction"

    def in_percent(self) -> PatchingReport:
        """The aggregates in percent (ERR%, as the paper writes them; patching.json holds
        this); the runs keep their fractions."""
        if self.unit == "percent":
            return self
        return self.model_copy(
            update={
                "overall": self.overall.in_percent(),
                "per_capability": {k: v.in_percent() for k, v in self.per_capability.items()},
                "iid": self.iid.in_percent() if self.iid is not None else None,
                "unit": "percent",
            }
        )
