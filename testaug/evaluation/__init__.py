"""Evaluation of models under test: adapters, expectations, perturbations, failure rates, the
patching protocol and BeLUGA's splits."""
