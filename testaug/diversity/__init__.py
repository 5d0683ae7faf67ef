"""Diversity of a suite: Self-BLEU and unique dependency paths, overall and by group."""
