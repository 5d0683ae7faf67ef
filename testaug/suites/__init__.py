"""Template suites: YAML suites and lexicons, templates and their expansion into cases, case
tables, English inflection and articles, and the provenance of a case."""
