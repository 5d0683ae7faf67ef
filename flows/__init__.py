"""Prefect flows: thin wiring of testaug's steps (testaug.steps) into `augment`, `collect`,
`train-rankers` and `pipeline`, and their deployments (prefect.yaml)."""

from testaug.core.fault_logs import quiet_expected_faults

# A run that fails on testaug's own errors logs one line, not a traceback, in whichever
# process runs it: `testaug run`, a served deployment or a work pool's worker.
quiet_expected_faults()
