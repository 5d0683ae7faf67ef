"""TestAug's patching protocol: fine-tune on part of a suite, measure the error on the rest."""
