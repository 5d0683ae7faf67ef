"""Prefect flows: thin wiring of testaug's steps (testaug.steps) into `augment`, `collect`,
`train-rankers` and `pipeline`, and their deployments (prefect.yaml)."""
