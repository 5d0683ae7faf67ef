"""BeLUGA's behaviour training: losses, batches and methods for MFT, INV and DIR tests."""
