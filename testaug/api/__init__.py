"""The Python face of testaug: the names `import testaug` offers, each resolved from its
module of this package (or the record's own module) on first use, so importing testaug
stays light (no torch, Prefect, spaCy or pandas until a function needs them).

One module per area: `suites` (load, expand, read and write cases), `augment` (generate,
rank, review, templates), `measure` (evaluate, diversity, report), `trees` (test trees,
retest, adapt) and `pipeline` (the whole run). Every function wraps the same step that
the CLI and the flows call, returns its result in memory, and writes the step's files
where it is given a place for them.
"""
