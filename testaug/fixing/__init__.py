"""Training and fixing models with tests: fine-tuning, splits and significance, TestAug's patching
protocol, BeLUGA's behaviour training and cross-functional analysis, and AdaTest's debugging loop."""
