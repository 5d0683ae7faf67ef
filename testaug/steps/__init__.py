"""The pipeline's steps as functions from files to files, shared by `testaug run`, the
Prefect flows and the stage commands: one module per stage, each step returning the
`StepOutput` of `testaug.steps.contract` with its own typed summary."""
