"""BeLUGA's cross-functional analysis: train on some functionalities, score generalization to the rest."""
