"""Template induction: accepted generated cases that reuse a slot word become new templates."""
