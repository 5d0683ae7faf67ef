"""AdaTest's testing loop: test trees, failure scores and failure-steered suggestions.

A tree (`tree.TestTree`) holds tests under topic paths such as
`/Negation/Negated positive`. Applying a tree to a model under test gives every
test a failure score (high = failing); suggestions are prompted from the tests
that fail most and scored on the same models.
"""
